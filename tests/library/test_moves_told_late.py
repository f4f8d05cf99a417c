"""A rename the watcher is told of late, or only as a file gone and a file new, keeps the session it moved.

The polling observer tells what two snapshots differ by. A folder renamed while a snapshot was taken shows as the
folder without its files (told deleted), then, a snapshot later, as a new folder with new files; a file the folder's
walk listed before any snapshot saw it shows only under its new name. These tests tell the watcher exactly that,
through the calls its observer makes (`mark`), with the observer itself polling too seldom to tell anything.
"""

import os

import pytest

from conftest import wait_for, write_events
from viewer.library import watcher as watching
from viewer.library.library import Library
from viewer.library.watcher import Watcher


def entry(mid):
    return {"message_id": mid, "event_type": "transcript_entry", "agent_id": "a", "role": "user", "content": "hi"}


@pytest.fixture
def told(tmp_path, monkeypatch):
    monkeypatch.setattr(watching, "POLL_EVERY", 3600.0)  # its snapshots: the first only; the tests tell the rest
    library = Library(tmp_path)
    watcher = Watcher(library, polling=True).start()
    assert watcher.ready.wait(5)
    yield tmp_path, library, watcher
    watcher.stop()


def listed(folder, library, watcher, how):
    write_events(folder / "team" / "run.jsonl", [entry("r1"), entry("r2")])
    if how == "folder":  # found by the walk of a folder the observer said changed
        watcher.mark(str(folder), folder=True)
    else:
        watcher.mark(str(folder / "team" / "run.jsonl"))
    wait_for(lambda: library.get("team:run") is not None and library.get("team:run").count == 2)
    return library.get("team:run")


@pytest.mark.parametrize("how", ["folder", "file"])
def test_a_folder_renamed_before_any_snapshot_saw_it_keeps_its_session(told, how):
    folder, library, watcher = told
    session = listed(folder, library, watcher, how)
    os.rename(folder / "team", folder / "archive")
    watcher.mark(str(folder / "archive" / "run.jsonl"))  # what the next snapshot tells: a new file, a new folder
    watcher.mark(str(folder), folder=True)
    watcher.mark(str(folder / "archive"), folder=True)
    wait_for(lambda: library.get("archive:run") is session)
    assert library.get("team:run") is None and library.resolve("team:run") == "archive:run"
    assert session.count == 2 and session.epoch == 0  # the same index, not read again
    write_events(folder / "archive" / "run.jsonl", [entry("r3")], mode="a")
    watcher.mark(str(folder / "archive" / "run.jsonl"))
    wait_for(lambda: session.count == 3)


def test_a_folder_told_gone_then_new_keeps_its_session(told):
    folder, library, watcher = told
    session = listed(folder, library, watcher, "file")
    os.rename(folder / "team", folder / "archive")
    watcher.mark(str(folder / "team" / "run.jsonl"))  # a snapshot taken mid-rename: the files gone...
    watcher.mark(str(folder / "team"), folder=True)  # ... and their folder changed, gone when looked at
    with pytest.raises(AssertionError):  # kept meanwhile, for the move that may follow
        wait_for(lambda: library.get("team:run") is not session, timeout=watching.GONE_FOR_POLLING / 2)
    watcher.mark(str(folder / "archive" / "run.jsonl"))  # the next snapshot: new files in a new folder
    watcher.mark(str(folder / "archive"), folder=True)
    wait_for(lambda: library.get("archive:run") is session)
    assert library.resolve("team:run") == "archive:run" and session.epoch == 0


def test_a_file_gone_for_good_is_forgotten_once_kept_long_enough(told):
    folder, library, watcher = told
    listed(folder, library, watcher, "file")
    (folder / "team" / "run.jsonl").unlink()
    watcher.mark(str(folder / "team" / "run.jsonl"))
    wait_for(lambda: library.get("team:run") is None, timeout=watching.GONE_FOR_POLLING + 5)
    assert library.resolve("team:run") is None


def test_a_new_file_on_a_deleted_ones_inode_is_read_as_what_it_holds(told):
    folder, library, watcher = told
    session = listed(folder, library, watcher, "file")
    path = folder / "team" / "run.jsonl"
    inode = path.stat().st_ino
    path.unlink()
    write_events(folder / "other.jsonl", [entry("o1")])  # the freed inode, reused (or not: the same either way)
    watcher.mark(str(path))
    watcher.mark(str(folder / "other.jsonl"))
    wait_for(lambda: library.get("other") is not None and library.get("other").count == 1)
    assert [e["message_id"] for e in library.get("other").events] == ["o1"]
    if (folder / "other.jsonl").stat().st_ino == inode:  # taken as the deleted file moved: read from its start
        assert library.get("other") is session and session.epoch == 1
    wait_for(lambda: library.get("team:run") is None, timeout=watching.GONE_FOR_POLLING + 5)
