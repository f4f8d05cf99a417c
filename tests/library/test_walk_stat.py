"""The first walk takes the stat of each file it lists for the file's first open; a file swapped between the listing
of its folder and its read is judged as it is then: a FIFO or a symlink out is refused, a symlink inside is read."""

from __future__ import annotations

import os

from conftest import write_events
from events import run_with_timeout, say
from viewer.library.library import Library


def walked(tmp_path, swap):
    """A Library of tmp_path whose walk lists `a.jsonl`, after which `swap(path)` replaces it; then it is read."""
    write_events(tmp_path / "a.jsonl", [say("m1", "main", "inside")])
    library = Library(tmp_path)
    for entry in library.folders.walk(None):
        swap(entry.path)
        run_with_timeout(lambda: library.refresh(entry.path, entry), 10)  # a FIFO must never block the walk
    return library


def only(library):
    (session,) = library.sessions.values()
    return session


def test_a_file_left_as_listed_is_read(tmp_path):
    session = only(walked(tmp_path, lambda path: None))
    assert session.count == 1 and not session.problems


def test_a_file_swapped_for_a_fifo_after_the_listing_is_refused(tmp_path):
    def fifo(path):
        os.remove(path)
        os.mkfifo(path)

    session = only(walked(tmp_path, fifo))
    assert session.count == 0 and [p.kind for p in session.problems] == ["not_a_regular_file"]


def test_a_file_swapped_for_a_symlink_out_after_the_listing_is_refused(tmp_path):
    folder = tmp_path / "dir"
    folder.mkdir()
    write_events(tmp_path / "secret.jsonl", [say("m9", "main", "outside")])

    def out(path):
        os.remove(path)
        os.symlink(tmp_path / "secret.jsonl", path)

    session = only(walked(folder, out))
    assert session.count == 0 and [p.kind for p in session.problems] == ["outside_folder"]


def test_a_file_swapped_for_a_symlink_inside_after_the_listing_is_read_through_it(tmp_path):
    write_events(tmp_path / "b.jsonl.txt", [say("m2", "main", "two"), say("m3", "main", "three")])

    def inside(path):
        os.remove(path)
        os.symlink(tmp_path / "b.jsonl.txt", path)

    session = only(walked(tmp_path, inside))
    assert session.count == 2 and not session.problems


def test_a_group_listed_and_not_read_yet_has_no_reader_until_it_is_read(tmp_path):
    import shutil

    from conftest import SAMPLES
    from viewer.files.tailer import FileTailer

    shutil.copytree(SAMPLES / "claude_code", tmp_path / "claude_code", ignore=shutil.ignore_patterns("*.py"))
    library = Library(tmp_path)
    with library.groups.read_after():  # as a first scan: every group listed before any is read
        for entry in library.folders.walk(None):
            library.refresh(entry.path, entry)
        listed = library.groups.files()
        # a look at every file (what a save step makes) makes no reader for a group not read yet
        assert listed and {reader for _, _, reader in listed} == {None}
        assert {reader for _, _, reader in library.groups.files()} == {None}
    read = library.groups.files()
    assert [path for path, _, _ in read] == [path for path, _, _ in listed]
    assert all(isinstance(reader, FileTailer) for _, _, reader in read)
    assert all(session.count > 0 for _, session, _ in read)
