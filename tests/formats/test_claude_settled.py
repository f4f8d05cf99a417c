"""A Claude Code session whose files were left alone for a while (Tuning.settle_after) keeps only what its pages
read of its normalizer: every page shows exactly what an unsettled read shows; more lines, a sidecar or a later
file's summary reach it as they would; and it holds much less memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from claude_lines import Transcript
from conftest import REPO, wait_for
from events import scanned
from test_formats_claude_rewinds import SID as REWOUND_SID, rewound_session, said, user, write as write_rewound
from test_formats_claude_summaries import EARLIER, LATER, earlier, later, titles
from test_formats_claude_unlinked import SESSION as LINKED, main_file, sub_file, subagents
from viewer.core.host import Host
from viewer.core.tuning import Tuning
from viewer.reads import queries
from viewer.library.library import Library
from viewer.library.watcher import Watcher

sys.path.insert(0, str(REPO / "benchmarks"))

from generate_claude import generate  # noqa: E402


def age(folder, seconds: float = 2 * Tuning.settle_after) -> None:
    """Every file below `folder` last written `seconds` ago."""
    when = time.time() - seconds
    for path in folder.rglob("*"):
        if path.is_file():
            os.utime(path, (when, when))


def pages(library: Library) -> dict:
    """What the pages of every session read: title, events, every agent's transcript, folds and tree."""
    shown = {}
    for s in library.listing():
        with s.lock:
            shown[s.id] = {
                "title": s.title, "count": s.count, "events": [s.events[p] for p in range(s.count)],
                "tree": {a: (n.parent_id, n.children, sorted(n.flags)) for a, n in s.agents.items()},
                "rewound": [s.normalizer.rewound(s.events[p]) for p in range(s.count)],
                "rewinds": list(s.normalizer.rewinds), "problems": [p.kind for p in s.problems],
                "agents": {a: [item["event"]["message_id"] for item in queries.perspective(s, a)["items"]]
                           for a in s.agents},
            }
    return shown


def settled(library: Library) -> list[bool]:
    return [s.normalizer.settled for s in library.listing()]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("settled")
    generate(root / "-home-dev-src-warehouse", 3 << 20, subagents=9, sessions=3)
    write_rewound(root, rewound_session())
    return root


def test_a_settled_session_shows_exactly_what_an_unsettled_one_does(project):
    fresh = scanned(project)
    assert settled(fresh) == [False] * 4  # just written: still being worked in, as far as anyone can tell
    age(project)
    old = scanned(project)
    assert settled(old) == [True] * 4
    assert pages(old) == pages(fresh)
    assert pages(old)[REWOUND_SID]["rewinds"] == ["b2u"]  # the folds are kept (not only nothing)
    assert any(any(v is not None for v in p["rewound"]) for p in pages(old).values())


# Measured in a fresh interpreter: tracemalloc counts every thread's allocations, and in a long test run other
# tests' threads (a browser's driver, a server's reader) allocate while this one measures.
HELD = """
import gc, sys, tracemalloc
from viewer.core.host import Host
from viewer.core.tuning import Tuning
from viewer.library.library import Library
gc.collect()
tracemalloc.start()
library = Library(sys.argv[1], host=Host(Tuning(settle_after=float(sys.argv[2]))))
library.scan()
for s in library.listing():  # as both are once background work is done (a small settled one is indexed as read)
    while not s.search.catch_up(s.search.BATCH, along=s.facets):
        pass
    s.facets.catch_up_in_slices()
gc.collect()
print(tracemalloc.get_traced_memory()[0], sum(s.normalizer.settled for s in library.listing()))
"""


def test_it_holds_far_less_memory(project):
    age(project)

    def held(settle_after: float) -> int:
        out = subprocess.run([sys.executable, "-c", HELD, str(project), str(settle_after)], capture_output=True,
                             text=True, check=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
        size, settled_count = map(int, out.stdout.split())
        assert settled_count == (4 if settle_after < 1e9 else 0)
        return size

    kept, settled_size = held(1e12), held(3600.0)
    assert settled_size < 0.7 * kept, (settled_size, kept)


def test_lines_appended_to_a_settled_session_read_it_again_from_its_start(tmp_path):
    path = write_rewound(tmp_path, rewound_session())
    age(tmp_path)
    library = scanned(tmp_path)
    s = library.get(REWOUND_SID)
    assert s.normalizer.settled
    epoch = s.epoch
    more = [user("c1", "b2a2", 30, "One more thing"), said("c2", "c1", 31, "Done")]
    with path.open("a") as f:
        f.write("".join(json.dumps(r) + "\n" for r in more))
    library.refresh(str(path))
    assert library.get(REWOUND_SID) is s and s.epoch == epoch  # every event where it was: pages poll on
    assert not s.normalizer.settled  # just written: it reads on as lines come
    assert pages(library) == pages(scanned(tmp_path))  # as a whole read of the file now
    assert s.events[s.by_id["c2"]]["content"] == "Done"
    with path.open("a") as f:  # and on, line by line, without reading it again
        f.write(json.dumps(user("c3", "c2", 32, "Thanks")) + "\n")
    epoch = s.epoch
    library.refresh(str(path))
    assert s.epoch == epoch and pages(library) == pages(scanned(tmp_path))


def test_a_later_files_summary_still_titles_a_settled_session(tmp_path):
    a = earlier()
    a.write(tmp_path / "proj" / f"{EARLIER}.jsonl")
    age(tmp_path)
    library = scanned(tmp_path)
    assert settled(library) == [True]
    later(a.last).write(tmp_path / "proj" / f"{LATER}.jsonl")
    library.refresh(str(tmp_path / "proj" / f"{LATER}.jsonl"))
    assert titles(library) == {"aaaa": "Parser off-by-one fixed", "bbbb": "Now add a test for it"}
    other = Transcript("cccc0000-0000-4000-8000-000000000003")  # a summary naming no line of it does not
    other.raw({"type": "summary", "summary": "Something else", "leafUuid": "aaaa0000-0001"})
    other.user("Hello")
    other.write(tmp_path / "proj" / "cccc0000-0000-4000-8000-000000000003.jsonl")
    library.refresh(str(tmp_path / "proj" / "cccc0000-0000-4000-8000-000000000003.jsonl"))
    assert titles(library)["aaaa"] == "Parser off-by-one fixed"


def test_a_sidecar_rewritten_for_a_settled_session_moves_its_agent_as_a_whole_read_does(tmp_path):
    main = main_file(tmp_path)
    main.response("msg_2", [{"type": "tool_use", "id": "toolu_OTHER", "name": "Task",
                             "input": {"description": "Other", "prompt": "Something else", "subagent_type": "x"}}])
    main.write(tmp_path / "-home-dev-app" / f"{LINKED}.jsonl")
    sub_file("Scan src/ for parsers", "cd34").write(subagents(tmp_path) / "agent-cd34.jsonl")
    meta = subagents(tmp_path) / "agent-cd34.meta.json"
    meta.write_text(json.dumps({"agentType": "Explore", "description": "Scan the code", "toolUseId": "toolu_SCAN"}))
    age(tmp_path)
    library = scanned(tmp_path)
    s = library.get(f"-home-dev-app:{LINKED}")
    assert s.normalizer.settled and s.agents["agent-cd34"].cause == "mn-0002"
    meta.write_text(json.dumps({"agentType": "x", "description": "Other", "toolUseId": "toolu_OTHER"}))
    library.refresh(str(meta))
    assert s.agents["agent-cd34"].cause == "mn-0003"
    assert pages(library) == pages(scanned(tmp_path))


def test_a_session_left_alone_settles_in_the_background_and_reads_on_when_resumed(tmp_path):
    """A real watcher thread on a real folder, the rule set to 1 s: the session settles while nothing is written,
    and a line written later is read (the session read again from its start)."""
    path = write_rewound(tmp_path, rewound_session())
    library = Library(tmp_path, host=Host(Tuning(settle_after=1.0)))
    watcher = Watcher(library).start()
    try:
        assert watcher.ready.wait(5)
        s = library.get(REWOUND_SID)
        assert not s.normalizer.settled
        before = pages(library)
        wait_for(lambda: s.normalizer.settled, timeout=10)
        assert pages(library) == before
        with path.open("a") as f:
            f.write(json.dumps(user("c1", "b2a2", 30, "Resumed")) + "\n")
        wait_for(lambda: "c1" in s.by_id, timeout=10)
        assert pages(library)[REWOUND_SID]["events"][:-1] == before[REWOUND_SID]["events"]
        assert pages(library) == pages(scanned(tmp_path))
    finally:
        watcher.stop()


def test_an_old_session_is_indexed_as_it_settles_from_the_events_read_not_its_lines_read_again(project, monkeypatch):
    """A first read of a session left alone builds its search index and facets from the events it just made,
    still in hand: no entry is read back from its file, and they are those that reading every entry back builds."""
    from viewer.formats.claude_code_content import StoredEntry
    from viewer.index.facets import Facets
    from viewer.search.index import SearchIndex

    age(project)
    read_back = []
    real_many, real_one = StoredEntry.load_many.__func__, StoredEntry.load
    monkeypatch.setattr(StoredEntry, "load_many",
                        classmethod(lambda cls, entries: read_back.extend(entries) or real_many(cls, entries)))
    monkeypatch.setattr(StoredEntry, "load", lambda self: read_back.append(self) or real_one(self))
    library = scanned(project)
    assert settled(library) == [True] * 4 and all(s.indexed_whole for s in library.listing())
    assert not read_back
    monkeypatch.undo()
    for s in library.listing():
        assert not s.events._cache  # nothing left in hand
        search, facets = SearchIndex(s), Facets(s)
        while not search.catch_up(search.BATCH, along=facets):  # every entry read back from its file
            pass
        search.pack()
        assert list(s.search.state()) == list(search.state())
        assert list(s.facets.state()) == list(facets.state())
