"""The Library: which file is which session, read as files come, change and go."""

import os

from conftest import write_events
from viewer.library.library import Library


def test_scan_finds_every_jsonl_below_the_root(tmp_path):
    write_events(tmp_path / "one.jsonl", [{"message_id": "m1", "event_type": "transcript_entry",
                                            "agent_id": "a", "role": "user", "content": "hi"}])
    write_events(tmp_path / "deep" / "er" / "two.jsonl", [])
    (tmp_path / "notes.txt").write_text("not a session")
    library = Library(tmp_path)
    library.scan()
    assert [(s.id, s.name, s.relpath, s.count) for s in library.listing()] == [
        ("deep:er:two", "two", "deep/er/two.jsonl", 0), ("one", "one", "one.jsonl", 1)]


def test_refresh_ingests_only_what_was_appended(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [
        {"message_id": "m1", "event_type": "agent_created", "agent_id": "a"}])
    library = Library(tmp_path)
    library.scan()
    session = library.get("s")
    version = library.version
    library.refresh(str(path))  # nothing new
    assert library.version == version and session.count == 1
    write_events(path, [{"message_id": "m2", "event_type": "transcript_entry", "agent_id": "a",
                         "role": "user", "content": "hi"}], mode="a")
    library.refresh(str(path))
    assert session.count == 2 and library.version > version
    assert list(session.agents["a"].entries) == [1]


def test_a_deleted_file_leaves_the_library(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [])
    library = Library(tmp_path)
    library.scan()
    path.unlink()
    library.refresh(str(path))
    assert library.get("s") is None


def test_one_failing_file_does_not_stop_the_scan(tmp_path, monkeypatch):
    from viewer.files import tailer

    for name in ("a", "b", "c"):
        write_events(tmp_path / f"{name}.jsonl", [{"message_id": "m", "event_type": "agent_created", "agent_id": "x"}])
    real_read = tailer.FileTailer.read

    def read(self):
        if self.path.endswith("b.jsonl"):
            raise OSError("injected read failure")
        return real_read(self)

    monkeypatch.setattr(tailer.FileTailer, "read", read)
    library = Library(tmp_path)
    library.scan()
    assert library.get("a").count == 1 and library.get("c").count == 1
    assert library.get("b") is None  # the failure really happened: b was never read


def test_last_update_is_the_files_time_not_the_servers(tmp_path):
    path = write_events(tmp_path / "s.jsonl", [{"message_id": "m1", "event_type": "agent_created", "agent_id": "a"}])
    os.utime(path, (1_600_000_000, 1_600_000_000))  # written long before the viewer started
    library = Library(tmp_path)
    library.scan()
    assert library.get("s").updated_at == 1_600_000_000
    write_events(path, [{"message_id": "m2", "event_type": "agent_created", "agent_id": "b"}], mode="a")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    library.refresh(str(path))
    assert library.get("s").updated_at == 1_700_000_000


def test_a_scan_tells_the_files_it_listed_anew(tmp_path):
    """Anew: not listed before the scan, listed after it. A file read again under a new format (forgotten and listed
    again within the scan) was listed before; a Claude Code session's files are each listed (its group's)."""
    entry = {"message_id": "m1", "event_type": "transcript_entry", "agent_id": "a", "role": "user", "content": "hi"}
    write_events(tmp_path / "team" / "one.jsonl", [entry])
    write_events(tmp_path / "team" / "empty.jsonl", [])
    library = Library(tmp_path)
    assert sorted(library.scan()) == [str(tmp_path / "team" / name) for name in ("empty.jsonl", "one.jsonl")]
    assert library.scan() == []
    empty = library.session_at(str(tmp_path / "team" / "empty.jsonl"))
    write_events(tmp_path / "team" / "empty.jsonl", [{  # its first line: a Claude Code session, no more native
        "type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "empty", "timestamp": "2026-02-01T10:00:00Z",
        "message": {"role": "user", "content": "hi"}}])
    write_events(tmp_path / "team" / "two.jsonl", [entry])
    write_events(tmp_path / "elsewhere" / "three.jsonl", [entry])
    assert library.scan(str(tmp_path / "team")) == [str(tmp_path / "team" / "two.jsonl")]
    assert library.session_at(str(tmp_path / "team" / "empty.jsonl")) is not empty  # read again, not listed anew
    assert library.scan() == [str(tmp_path / "elsewhere" / "three.jsonl")]
