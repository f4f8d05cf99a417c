"""The watcher keeps a Library in step with a real folder, through real file events."""

import os
import sys
import threading

import pytest

from conftest import wait_for, write_events
from viewer.library.library import Library
from viewer.library.watcher import Watcher


def entry(mid, agent="a", content="hi"):
    return {"message_id": mid, "event_type": "transcript_entry", "agent_id": agent, "role": "user", "content": content}


@pytest.fixture(params=[False, True], ids=["os-events", "polling"])
def watched(tmp_path, request):
    write_events(tmp_path / "existing.jsonl", [entry("m1")])
    library = Library(tmp_path)
    watcher = Watcher(library, polling=request.param).start()
    assert watcher.ready.wait(5)
    yield tmp_path, library
    watcher.stop()


def test_initial_scan_reads_existing_files(watched):
    _, library = watched
    assert library.get("existing").count == 1


def test_appended_lines_and_new_files_appear(watched):
    folder, library = watched
    write_events(folder / "existing.jsonl", [entry("m2"), entry("m3")], mode="a")
    wait_for(lambda: library.get("existing").count == 3)
    write_events(folder / "sub" / "new.jsonl", [entry("n1")])
    wait_for(lambda: library.get("sub:new") is not None and library.get("sub:new").count == 1)


def test_a_partial_line_waits_until_it_is_completed(watched):
    folder, library = watched
    path = folder / "existing.jsonl"
    with open(path, "ab") as f:
        f.write(b'{"message_id": "m2", "event_type": "transcript_entry", ')
        f.flush()
        os.fsync(f.fileno())
    # give the watcher time to see the half line; it must not ingest (nor lose) it
    with pytest.raises(AssertionError):
        wait_for(lambda: library.get("existing").count != 1 or library.get("existing").problems, timeout=1.5)
    with open(path, "ab") as f:
        f.write(b'"agent_id": "a", "role": "user", "content": "done"}\n')
    wait_for(lambda: library.get("existing").count == 2)
    assert library.get("existing").events[1]["content"] == "done"
    assert library.get("existing").problems == []


def test_a_deleted_file_leaves_and_a_moved_one_is_followed(watched):
    folder, library = watched
    session = library.get("existing")
    os.rename(folder / "existing.jsonl", folder / "renamed.jsonl")
    wait_for(lambda: library.get("existing") is None and library.get("renamed") is not None)
    assert library.get("renamed") is session and session.epoch == 0  # same index, not read again
    assert library.resolve("existing") == "renamed"  # old links redirect
    write_events(folder / "renamed.jsonl", [entry("m2")], mode="a")
    wait_for(lambda: session.count == 2)
    (folder / "renamed.jsonl").unlink()
    wait_for(lambda: library.get("renamed") is None)
    assert library.resolve("existing") is None


def test_a_moved_folder_keeps_its_sessions(watched):
    folder, library = watched
    write_events(folder / "team" / "run.jsonl", [entry("r1")])
    wait_for(lambda: library.get("team:run") is not None)
    session = library.get("team:run")
    os.rename(folder / "team", folder / "archive")
    wait_for(lambda: library.get("archive:run") is session, timeout=15)  # a folder's move: slower on a busy machine
    assert library.get("team:run") is None and library.resolve("team:run") == "archive:run"
    write_events(folder / "archive" / "run.jsonl", [entry("r2")], mode="a")
    wait_for(lambda: session.count == 2)


def test_an_editor_save_by_rename_replaces_the_content(watched):
    folder, library = watched
    session = library.get("existing")
    write_events(folder / ".existing.jsonl.swp", [entry("e1", content="edited"), entry("e2")])
    os.replace(folder / ".existing.jsonl.swp", folder / "existing.jsonl")
    wait_for(lambda: [e["message_id"] for e in library.get("existing").events] == ["e1", "e2"])
    assert library.get("existing") is session and session.epoch == 1


def test_the_watcher_survives_a_failing_file(watched, monkeypatch):
    folder, library = watched
    original = library.refresh
    failed = []

    def refresh(path, *entry):  # a walk's refresh passes the walk's entry too
        if path.endswith("poison.jsonl"):
            failed.append(path)
            raise RuntimeError("injected failure")
        return original(path, *entry)

    monkeypatch.setattr(library, "refresh", refresh)
    write_events(folder / "poison.jsonl", [entry("p1")])
    wait_for(lambda: failed)  # the ingest thread met the failure first...
    write_events(folder / "existing.jsonl", [entry("m2")], mode="a")
    wait_for(lambda: library.get("existing").count == 2)  # ...and still reads what comes after it
    assert library.get("poison") is None


def test_reading_a_file_is_nothing_the_observer_hears(tmp_path, monkeypatch):
    """The observer asks the kernel for changes only (watcher.HEARD): a file opened and read, as the viewer does with
    thousands at a start, is not two events more for watchdog's threads to take apart."""
    from viewer.library import watcher as watcher_module

    heard = []
    real = watcher_module._MarkDirty.on_any_event
    monkeypatch.setattr(watcher_module._MarkDirty, "on_any_event",
                        lambda self, event: (heard.append(event.event_type), real(self, event)))
    write_events(tmp_path / "existing.jsonl", [entry("m1")])
    library = Library(tmp_path)
    watcher = Watcher(library).start()
    try:
        assert watcher.watching.wait(5)
        for _ in range(20):
            (tmp_path / "existing.jsonl").read_bytes()
        write_events(tmp_path / "existing.jsonl", [entry("m2")], mode="a")
        wait_for(lambda: library.get("existing").count == 2)  # heard: the observer is listening
        assert "modified" in heard
        assert not {"opened", "closed_no_write"} & set(heard), heard
    finally:
        watcher.stop()


@pytest.mark.parametrize("polling", [False, True], ids=["os-events", "polling"])
def test_a_change_between_the_first_walk_and_the_watches_is_seen(tmp_path, polling):
    """The observer starts once the first walk is over, and its watches list the folder again (watchdog's own listing
    of DIR, caught by an audit hook, is the moment): a file changed in a folder not watched yet is told by no event, nor
    by a polling observer's first snapshot. The walk that follows the watches finds each change; the file renamed
    keeps its session."""
    project = tmp_path / "proj"
    for name, lines in (("appended", 1), ("truncated", 3), ("renamed", 1), ("deleted", 1)):
        write_events(project / f"{name}.jsonl", [entry(f"{name}{n}") for n in range(lines)])
    library = Library(tmp_path)
    watcher = Watcher(library, polling=polling)
    changed, renamed = threading.Event(), []

    def change(event, args):
        if (event != "os.scandir" or changed.is_set() or not watcher.ready.is_set() or not args
                or not isinstance(args[0], (str, bytes)) or os.fsdecode(args[0]) != str(tmp_path)):
            return
        changed.set()  # first: the calls below are audited too
        renamed.append(library.get("proj:renamed"))
        write_events(project / "appended.jsonl", [entry("appended1")], mode="a")
        write_events(project / "truncated.jsonl", [entry("truncated9")])
        os.rename(project / "renamed.jsonl", project / "moved.jsonl")
        os.unlink(project / "deleted.jsonl")
        write_events(project / "created.jsonl", [entry("created0")])

    _audited(change)
    watcher.start()
    try:
        assert watcher.ready.wait(5)
        assert changed.wait(5), "DIR was listed again after the first walk: the watches are added then"
        assert watcher.watching.wait(5)
        count = lambda name: library.get(f"proj:{name}").count if library.get(f"proj:{name}") else None  # noqa: E731
        # within the first sweep's SWEEP_EVERY (10 s): it is the walk after the watches that finds them
        wait_for(lambda: [count(n) for n in ("appended", "truncated", "moved", "renamed", "deleted", "created")]
                 == [2, 1, 1, None, None, 1], timeout=4)
        assert renamed[0] is not None and library.get("proj:moved") is renamed[0] and library.resolve("proj:renamed") == "proj:moved"
        write_events(project / "created.jsonl", [entry("created1")], mode="a")  # and the watches hear on
        wait_for(lambda: count("created") == 2)
    finally:
        _AUDITED.remove(change)
        watcher.stop()


_AUDITED: list = []  # what the audit hook calls, while a test needs it (a hook cannot be removed: added once)
_HOOKED: list = []


def _audited(call) -> None:
    if not _HOOKED:
        sys.addaudithook(lambda event, args: [each(event, args) for each in _AUDITED] if _AUDITED else None)
        _HOOKED.append(True)
    _AUDITED.append(call)
