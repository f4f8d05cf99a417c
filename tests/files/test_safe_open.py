"""safe_open: only regular files inside the folder are ever opened, and opening never blocks."""

import os

import pytest

from viewer.files.safe_open import NotRegularFile, OutsideFolder, open_regular, open_regular_file


@pytest.fixture
def folder(tmp_path):
    inside = tmp_path / "dir"
    inside.mkdir()
    (inside / "a.jsonl").write_bytes(b"{}\n")
    (tmp_path / "secret.json").write_bytes(b'{"description": "outside"}')
    return inside


def test_a_regular_file_inside_opens(folder):
    with open_regular_file(str(folder / "a.jsonl"), os.path.realpath(folder)) as f:
        assert f.read() == b"{}\n"


def test_a_symlink_inside_the_folder_opens(folder):
    (folder / "link.jsonl").symlink_to(folder / "a.jsonl")
    with open_regular_file(str(folder / "link.jsonl"), os.path.realpath(folder)) as f:
        assert f.read() == b"{}\n"


def test_a_fifo_is_refused_at_once_without_a_writer(folder):
    os.mkfifo(folder / "pipe.jsonl")
    with pytest.raises(NotRegularFile) as refused:
        open_regular(str(folder / "pipe.jsonl"), os.path.realpath(folder))
    assert refused.value.kind == "not_a_regular_file" and "FIFO" in refused.value.detail


def test_a_device_is_refused(folder):
    (folder / "zero.meta.json").symlink_to("/dev/zero")
    with pytest.raises(NotRegularFile):
        open_regular(str(folder / "zero.meta.json"), None)  # refused even where any place is allowed


def test_a_symlink_out_is_refused_unless_any_place_is_allowed(folder):
    (folder / "out.meta.json").symlink_to(folder.parent / "secret.json")
    with pytest.raises(OutsideFolder) as refused:
        open_regular(str(folder / "out.meta.json"), os.path.realpath(folder))
    assert refused.value.kind == "outside_folder"
    os.close(open_regular(str(folder / "out.meta.json"), None))


def test_a_folder_beside_with_the_same_prefix_is_outside(folder):
    twin = folder.parent / "dir2"
    twin.mkdir()
    (twin / "b.jsonl").write_bytes(b"{}\n")
    (folder / "b.jsonl").symlink_to(twin / "b.jsonl")
    with pytest.raises(OutsideFolder):
        open_regular(str(folder / "b.jsonl"), os.path.realpath(folder))


def test_a_missing_file_raises_file_not_found(folder):
    with pytest.raises(FileNotFoundError):
        open_regular(str(folder / "gone.jsonl"), os.path.realpath(folder))


def test_the_walks_own_stat_is_taken_for_a_file_unchanged(folder):
    path = str(folder / "a.jsonl")
    fd = open_regular(path, os.path.realpath(folder), os.stat(path))
    with os.fdopen(fd, "rb") as f:
        assert f.read() == b"{}\n"


def test_a_file_swapped_for_a_fifo_after_the_walk_is_refused(folder):
    path = str(folder / "a.jsonl")
    walked = os.stat(path)
    os.remove(path)
    os.mkfifo(path)  # a writer on it would wait: the open must not, and the pipe is never read
    with pytest.raises(NotRegularFile) as refused:
        open_regular(path, os.path.realpath(folder), walked)
    assert "FIFO" in refused.value.detail


def test_a_file_swapped_for_a_symlink_out_after_the_walk_is_refused(folder):
    path = str(folder / "a.jsonl")
    walked = os.stat(path)
    os.remove(path)
    os.symlink(folder.parent / "secret.json", path)
    with pytest.raises(OutsideFolder):
        open_regular(path, os.path.realpath(folder), walked)


def test_a_file_swapped_for_a_device_after_the_walk_is_refused(folder):
    path = str(folder / "a.jsonl")
    walked = os.stat(path)
    os.remove(path)
    os.symlink("/dev/null", path)
    with pytest.raises(NotRegularFile):
        open_regular(path, None, walked)


def test_a_file_replaced_by_another_after_the_walk_is_the_one_read(folder):
    path = str(folder / "a.jsonl")
    walked = os.stat(path)
    (folder / "new.jsonl").write_bytes(b'{"n": 2}\n')
    os.replace(folder / "new.jsonl", path)  # as an editor saves: another file under the same name
    with os.fdopen(open_regular(path, os.path.realpath(folder), walked), "rb") as f:
        assert f.read() == b'{"n": 2}\n'


def test_what_the_walk_found_not_regular_is_never_opened(folder):
    os.mkfifo(folder / "pipe.jsonl")
    walked = os.stat(folder / "pipe.jsonl")
    os.remove(folder / "pipe.jsonl")
    (folder / "pipe.jsonl").write_bytes(b"{}\n")  # a file there now: the walk's word is taken, as a stat's would be
    with pytest.raises(NotRegularFile):
        open_regular(str(folder / "pipe.jsonl"), os.path.realpath(folder), walked)
