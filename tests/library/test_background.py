"""Background work (background.py): every session's search index and facets are completed, a step at a time, from
where work was found last; a session that grows later is completed again."""

import sys

from conftest import REPO, write_events
from events import scanned
from viewer.library import background
from viewer.formats.claude_code_content import StoredEntry

sys.path.insert(0, str(REPO / "benchmarks"))

from generate_claude import generate  # noqa: E402


def entry(mid, agent="a", content="hello world"):
    return {"message_id": mid, "event_type": "transcript_entry", "agent_id": agent, "role": "user", "content": content}


def done(library) -> bool:
    return all(s.search.indexed == s.count == s.facets.indexed for s in library.sessions_now())


def test_every_session_is_completed_and_one_that_grows_is_completed_again(tmp_path):
    for i in range(40):
        write_events(tmp_path / f"s{i:02d}.jsonl", [entry(f"m{i}-{n}", content=f"word{i} text") for n in range(300)])
    library = scanned(tmp_path)
    steps = 0
    while background.index_step(library):
        steps += 1
    assert done(library) and steps >= 40 * 300 / 128  # 128 events a step (search and facets from one read)
    assert not background.index_step(library)  # nothing left: no step
    write_events(tmp_path / "s17.jsonl", [entry(f"late-{n}", content="appended later") for n in range(200)], mode="a")
    library.refresh(str(tmp_path / "s17.jsonl"))
    assert not done(library)
    while background.index_step(library):
        pass
    s = library.get("s17")
    assert done(library) and s.count == 500 and s.search.get("appended")


def test_an_idle_library_looks_for_sessions_to_settle_or_save_only_now_and_then(tmp_path, monkeypatch):
    """Settling and saving walk every session: while they find nothing, a step does not walk them again until
    LOOK_AGAIN_S has passed (an idle server on a folder of thousands of sessions costs nearly nothing)."""
    for i in range(5):
        write_events(tmp_path / f"s{i}.jsonl", [entry(f"m{i}")])
    library = scanned(tmp_path)
    while background.step(library):
        pass
    looks = []
    monkeypatch.setattr(library, "settle_quiet", lambda: looks.append(1) or False)
    for _ in range(100):
        assert not background.step(library)
    assert looks == []
    library.look_after -= background.LOOK_AGAIN_S
    assert not background.step(library) and looks == [1]
    write_events(tmp_path / "s3.jsonl", [entry("new")], mode="a")  # something to index: done at once
    library.refresh(str(tmp_path / "s3.jsonl"))
    assert background.step(library)


def test_a_costly_look_for_sessions_to_settle_or_save_comes_more_seldom(tmp_path, monkeypatch):
    """A look that costs CPU (a folder of 20,000 sessions: 0.5 s) comes at most LOOK_SHARE of a core: an idle server on
    a big folder is idle, not at 10% of a core forever; never more seldom than LOOK_AT_MOST."""
    import time
    from types import SimpleNamespace

    for i in range(5):
        write_events(tmp_path / f"s{i}.jsonl", [entry(f"m{i}")])
    library = scanned(tmp_path)
    while background.step(library):
        pass
    clock = [time.monotonic()]
    monkeypatch.setattr(background, "time", SimpleNamespace(monotonic=lambda: clock[0], thread_time=time.thread_time))
    looks, costs = [], [0.08]

    def settle_quiet():  # what walking thousands of sessions costs, in this thread's CPU
        looks.append(clock[0])
        until = time.thread_time() + costs[0]
        while time.thread_time() < until:
            pass
        return False

    monkeypatch.setattr(library, "settle_quiet", settle_quiet)
    library.look_after = float("-inf")
    assert not background.step(library) and len(looks) == 1
    for later in (background.LOOK_AGAIN_S + 1, 7.5):  # 0.08 s of CPU at 1% of a core: 8 s on
        clock[0] = looks[0] + later
        assert not background.step(library) and len(looks) == 1
    clock[0] = looks[0] + 0.08 / background.LOOK_SHARE + 1
    costs[0] = 0.7  # at 1%, 70 s: LOOK_AT_MOST instead
    assert not background.step(library) and len(looks) == 2
    clock[0] = looks[1] + background.LOOK_AT_MOST - 1
    assert not background.step(library) and len(looks) == 2
    clock[0] = looks[1] + background.LOOK_AT_MOST + 1
    costs[0] = 0.0
    assert not background.step(library) and len(looks) == 3


def test_the_sessions_due_to_be_saved_are_found_in_one_walk_and_saved_one_a_step(tmp_path, monkeypatch):
    import os
    import time

    from viewer.library.library import Library
    from viewer.store.session_cache import SessionCache

    folder = tmp_path / "logs"
    for i in range(30):
        write_events(folder / f"s{i:02d}.jsonl", [entry(f"m{i}-{n}") for n in range(20)])
    then = time.time() - 60  # still for a minute: due once indexed
    for path in folder.iterdir():
        os.utime(path, (then, then))
    library = Library(folder, cache=SessionCache(str(tmp_path / "cache")))
    library.scan()
    while background.index_step(library):
        pass
    walks = []
    real = library.settled_files
    monkeypatch.setattr(library, "settled_files", lambda: walks.append(1) or real())
    saved = 0
    while background.save_step(library):
        saved += 1
    assert saved == 30 and len(list((tmp_path / "cache").glob("*.avc"))) == 30
    assert len(walks) == 2  # one to find the 30, one to find none left


def test_the_facets_are_built_from_the_read_that_builds_the_search_index(tmp_path, monkeypatch):
    """A Claude Code entry is read back from its file: one read of each event serves both (none for an event cached
    by a read before), and a call's tools are taken from the events read with its result, not read again alone."""
    root = tmp_path / "logs"
    generate(root / "-home-dev-p", 1 << 20, subagents=3, sessions=2)
    library = scanned(root)
    cached = {id(s.events._items[p]) for s in library.listing() for p in s.events._cache}
    together, alone = [], []
    real_many, real_one = StoredEntry.load_many.__func__, StoredEntry.load
    monkeypatch.setattr(StoredEntry, "load_many",
                        classmethod(lambda cls, entries: together.extend(entries) or real_many(cls, entries)))
    monkeypatch.setattr(StoredEntry, "load", lambda self: alone.append(self) or real_one(self))
    while background.index_step(library):
        pass
    assert done(library)
    stored = [e for s in library.listing() for e in s.events._items if isinstance(e, StoredEntry)]
    assert sorted(map(id, together)) == sorted(id(e) for e in stored if id(e) not in cached)  # once, for both
    assert len(alone) < 0.05 * len(stored), len(alone)  # the originals of a few deliveries
