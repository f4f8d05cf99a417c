"""What a walk opens of each file: a Claude Code sub-agent's file is told by its place below its session's folder,
opened by its reader only; a file there that is empty, not a regular file or a symlink is told as any other. The
groups it found are read newest first by the file times it found."""

from __future__ import annotations

import os
import threading
from collections import Counter

from conftest import write_events
from test_refused_files import claude_session, sub_agent_line
from viewer.formats import CLAUDE_CODE, NATIVE
from viewer.index.session_ids import session_id_for
from viewer.library.groups import Groups
from viewer.library.library import Library


def _scan_counting_opens(root, monkeypatch) -> tuple[Library, Counter]:
    """A library of `root` scanned, and how often each of its files was opened meanwhile to be read (every os.open
    but the read ahead's, which reads nothing: tests/library/test_read_ahead.py)."""
    opened: Counter = Counter()
    real_open = os.open

    def counting_open(path, *args, **kwargs):
        if threading.current_thread().name != "agentview-read-ahead":
            opened[os.fspath(path)] += 1
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_open)
    library = Library(root)
    library.scan()
    monkeypatch.undo()
    return library, opened


def test_a_sub_agent_file_is_opened_by_its_reader_only(tmp_path, monkeypatch):
    subagents = claude_session(tmp_path)
    for agent in ("f1", "f2"):
        write_events(subagents / f"agent-{agent}.jsonl", [sub_agent_line(f"{agent}-1", agent, f"go {agent}")])
    library, opened = _scan_counting_opens(tmp_path, monkeypatch)
    (session,) = library.listing()
    assert session.id == "proj:s" and session.format is CLAUDE_CODE
    assert {"u1", "f1-1", "f2-1"} <= set(session.by_id)
    assert sorted(os.path.basename(p) for p in session.members) == ["agent-f1.jsonl", "agent-f2.jsonl", "s.jsonl"]
    main = str(tmp_path / "proj" / "s.jsonl")
    assert opened[main] == 2  # its first line told its format, then it was read
    assert [opened[str(subagents / f"agent-{a}.jsonl")] for a in ("f1", "f2")] == [1, 1]  # read, never looked at


def test_a_sub_agent_file_of_no_group_yet_is_told_by_its_content(tmp_path, monkeypatch):
    """Without its main file, the sub-agent file makes its group: its first line is read for that."""
    write_events(tmp_path / "proj" / "s" / "subagents" / "agent-f1.jsonl", [sub_agent_line("f1-1", "f1", "go")])
    library, opened = _scan_counting_opens(tmp_path, monkeypatch)
    (session,) = library.listing()
    assert session.id == "proj:s" and session.format is CLAUDE_CODE and "f1-1" in session.by_id
    assert opened[str(tmp_path / "proj" / "s" / "subagents" / "agent-f1.jsonl")] == 2


def test_files_in_a_sub_agents_place_that_are_empty_refused_or_symlinks_are_told_as_ever(tmp_path, monkeypatch):
    root = tmp_path / "root"
    subagents = claude_session(root)
    (subagents / "agent-empty.jsonl").write_bytes(b"")
    os.mkfifo(subagents / "agent-fifo.jsonl")
    write_events(tmp_path / "outside.txt", [sub_agent_line("out-1", "out", "go")])
    os.symlink(tmp_path / "outside.txt", subagents / "agent-out.jsonl")
    write_events(root / "proj" / "inside.txt", [sub_agent_line("in-1", "in", "go")])
    os.symlink(root / "proj" / "inside.txt", subagents / "agent-in.jsonl")  # a symlink inside: read by its content
    library, opened = _scan_counting_opens(root, monkeypatch)
    alone = {s.relpath: [p.kind for p in s.problems] for s in library.listing() if not s.members}
    assert alone == {"proj/s/subagents/agent-empty.jsonl": [],
                     "proj/s/subagents/agent-fifo.jsonl": ["not_a_regular_file"],
                     "proj/s/subagents/agent-out.jsonl": ["outside_folder"]}
    empty = library.get(session_id_for("proj/s/subagents/agent-empty.jsonl"))
    assert (empty.format, empty.format_reason) == (NATIVE, "empty")
    group = library.get("proj:s")
    assert sorted(os.path.basename(p) for p in group.members) == ["agent-in.jsonl", "s.jsonl"]
    assert {"u1", "in-1"} <= set(group.by_id)
    assert opened[str(subagents / "agent-in.jsonl")] == 2  # its first line read to tell it


def test_a_scan_reads_first_the_groups_whose_files_were_written_last(tmp_path, monkeypatch):
    """By the newest of each group's files, as the walk found them: a sub-agent's file written after its main file
    counts, an older one does not."""
    from claude_lines import Transcript

    project = tmp_path / "-home-dev-app"
    main_written = {"00000001-aaaa-bbbb-cccc-dddddddddddd": 100, "00000002-aaaa-bbbb-cccc-dddddddddddd": 300,
                    "00000003-aaaa-bbbb-cccc-dddddddddddd": 200}
    sub_written = {"00000001-aaaa-bbbb-cccc-dddddddddddd": 400, "00000002-aaaa-bbbb-cccc-dddddddddddd": 50}
    for sid, when in main_written.items():
        transcript = Transcript(sid)
        transcript.user("hello")
        os.utime(transcript.write(project / f"{sid}.jsonl"), (1_700_000_000 + when,) * 2)
        if sid in sub_written:
            sub = Transcript(sid)
            sub.user("go", isSidechain=True, agentId="a1")
            path = sub.write(project / sid / "subagents" / "agent-a1.jsonl")
            os.utime(path, (1_700_000_000 + sub_written[sid],) * 2)
    library = Library(tmp_path)
    read, read_group = [], Groups.read
    monkeypatch.setattr(Groups, "read", lambda self, session: read.append(session.id) or read_group(self, session))
    library.scan()
    assert [next(sid[:8] for sid in main_written if sid in session_id) for session_id in read] == [
        "00000001", "00000002", "00000003"]
    assert all(len(library.get(session_id).members) == (2 if "00000003" not in session_id else 1)
               for session_id in read)
