"""A whole read and a live read (each file appended in random chunks, the files interleaved) of the same Claude
Code content show the same: the same events users see, the same counts, the same agents and tree."""

import os
import random
from pathlib import Path

import pytest

from conftest import SAMPLES
from events import scanned
from viewer.reads import queries
from viewer.index import usage
from viewer.library.library import Library

CLAUDE = SAMPLES / "claude_code"


def seen(s):
    """What users see of a session: its count, and per agent its entries (id, role, content, tool calls) and usage."""
    with s.lock:
        entries = {agent_id: [(e["message_id"], e.get("role"), e.get("content"),
                               [c["id"] for c in e.get("tool_calls") or ()]) for e in (s.events[p] for p in a.entries)]
                   for agent_id, a in s.agents.items()}
        tree = [(n["agent_id"], n["parent_id"] if "parent_id" in n else None) for n in _walk(queries.tree(s))]
        return {"count": s.shown_count, "entries": entries, "tree": sorted(tree),
                "usage": usage.for_session(s), "problems": sorted(p.kind for p in s.problems),
                "title": s.title}


def _walk(nodes, parent=None):
    for node in nodes:
        yield {"agent_id": node["agent_id"], "parent_id": parent}
        yield from _walk(node["children"], node["agent_id"])


def written_lines(root: Path) -> list[tuple[Path, bytes]]:
    """Every line of the session files below `root` in the order they were written: by time across files (a line
    without a time right after the line before it in its file), each file's own order kept."""
    import orjson

    stamped = []
    for rel in sample_files_of(root):
        if rel.suffix != ".jsonl":
            continue
        last = ""
        for n, line in enumerate((root / rel).read_bytes().splitlines(keepends=True)):
            record = orjson.loads(line) if line.strip() else {}
            stamp = record.get("timestamp") or record.get("startTime")  # a Gemini chat's first line: its start
            last = stamp if isinstance(stamp, str) else last
            stamped.append((last, str(rel), n, rel, line))
    return [(rel, line) for *_, rel, line in sorted(stamped, key=lambda item: item[:3])]


def live_read(source: Path, dest: Path, seed: int) -> Library:
    """The session files of `source` written into `dest` line by line as they were written, each line cut at
    random points and the library reading at random moments (mid-line, between lines, several lines at once)."""
    rng = random.Random(seed)
    dest.mkdir(parents=True)
    library = Library(dest)
    library.scan()
    for rel in sample_files_of(source):
        if rel.suffix == ".json":  # sidecars first: one arriving after its agent file is another case
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes((source / rel).read_bytes())
    for rel, line in written_lines(source):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        cuts = sorted(rng.sample(range(1, len(line)), min(len(line) - 1, rng.randrange(3))))
        for a, b in zip([0, *cuts], [*cuts, len(line)]):
            with open(dest / rel, "ab") as f:
                f.write(line[a:b])
            if rng.random() < 0.5:
                library.refresh(str(dest / rel))
    for rel in sample_files_of(dest):
        library.refresh(str(dest / rel))
    library.scan()
    return library


def read_whole_and_live(source: Path, dest: Path, seed: int):
    """The session files of `source` read whole, once they are all there, and as they were written (live_read into
    `dest`): what users see of each session must be the same. Returns the whole read."""
    from events import scanned

    whole = scanned(source)
    live = live_read(source, dest, seed)
    assert [s.id for s in live.listing()] == [s.id for s in whole.listing()]
    for session in whole.listing():
        assert seen(live.get(session.id)) == seen(session)
    return whole


def sample_files_of(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json"))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_claude_code_sample_reads_the_same_whole_and_live(tmp_path, seed):
    whole = scanned(CLAUDE)
    live = live_read(CLAUDE, tmp_path / "live", seed)
    assert [s.id for s in live.listing()] == [s.id for s in whole.listing()]
    for session in whole.listing():
        assert seen(live.get(session.id)) == seen(session), session.id
        assert session.shown_count == session.count  # a whole read makes no internal events here


def test_a_response_read_line_by_line_counts_as_one_event(tmp_path):
    from claude_lines import Transcript

    t = Transcript("c0ffee00-0000-4000-8000-0000000000c4")
    t.user("list the files")
    t.response("msg_1", [{"type": "thinking", "thinking": "ls", "signature": "x"}, {"type": "text", "text": "Sure."},
                         {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}])
    path = tmp_path / "proj" / f"{t.session}.jsonl"
    t.write(path)
    whole = scanned(tmp_path).get(f"proj:{t.session}")
    path.unlink()
    library = Library(tmp_path)
    library.scan()
    for line in t.lines:
        with open(path, "a") as f:
            f.write(__import__("json").dumps(line) + "\n")
        library.refresh(str(path))
    live = library.get(f"proj:{t.session}")
    assert live.count == whole.count + 2 and live.internal == 2  # two later lines grew the message
    assert live.shown_count == whole.shown_count == 3  # its creation, the prompt, the response
    assert seen(live) == seen(whole)

