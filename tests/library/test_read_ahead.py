"""Reading ahead of a first walk: each file the walk lists has its first page brought into the page cache by a
thread beside it (unless the walk has passed it), sub-agents' files the walk never reads included; nothing is
opened that a read may not open (a FIFO, a symlink, a file swapped for either after its folder was listed), nothing
outside the folder is brought in, and a folder found cached stops it. Pages are dropped from the cache per file
(fsync, then POSIX_FADV_DONTNEED) and looked at by mincore(2), which brings nothing in; opens are heard by
inotify(2)."""

from __future__ import annotations

import ctypes
import mmap
import os
import struct
import time

import pytest

from viewer.library import read_ahead
from viewer.library.folders import Folders

_libc = ctypes.CDLL(None, use_errno=True)
IN_OPEN, IN_NONBLOCK = 0x20, os.O_NONBLOCK


def written(path, data: bytes = b'{"type": "user"}\n' * 600, synced: bool = True) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        if synced:  # else its pages stay in the cache
            os.fsync(f.fileno())
    return str(path)


def dropped(*paths: str) -> None:
    """The files' pages out of the page cache (they are written to disk: only clean pages are dropped)."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        assert not first_page_cached(path), "this file system keeps its pages: the test cannot tell"


def first_page_cached(path: str) -> bool:
    fd = os.open(path, os.O_RDONLY)
    try:
        mapped = mmap.mmap(fd, mmap.PAGESIZE, access=mmap.ACCESS_COPY)  # no page is faulted in by mapping it
    finally:
        os.close(fd)
    try:
        start = ctypes.c_char.from_buffer(mapped)
        vector = (ctypes.c_ubyte * 1)()
        result = _libc.mincore(ctypes.c_void_p(ctypes.addressof(start)), ctypes.c_size_t(mmap.PAGESIZE), vector)
        del start
        assert result == 0, os.strerror(ctypes.get_errno())
        return bool(vector[0] & 1)
    finally:
        mapped.close()


class Opens:
    """The opens of some paths (what each leads to), heard by inotify from now on."""

    def __init__(self, *paths: str) -> None:
        self.fd = _libc.inotify_init1(IN_NONBLOCK)
        assert self.fd >= 0
        self.paths = {_libc.inotify_add_watch(self.fd, os.fsencode(p), IN_OPEN): p for p in paths}
        assert all(wd >= 0 for wd in self.paths)

    def heard(self) -> list[str]:
        opened = []
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return opened
        offset = 0
        while offset < len(data):
            wd, mask, _, length = struct.unpack_from("iIII", data, offset)
            if mask & IN_OPEN:
                opened.append(self.paths[wd])
            offset += 16 + length
        return opened

    def close(self) -> None:
        os.close(self.fd)


def until(check, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def given(folders: Folders, folder: str, passed: int = 0) -> read_ahead.ReadAhead:
    """A read ahead given `folder` as a walk lists it, the walk past its first `passed` files."""
    ahead = read_ahead.ReadAhead(folders)
    ahead.passed = passed
    subfolders, files = folders.listed(folder)
    ahead.listed(folder, files, subfolders, 0)
    return ahead


def test_the_files_a_walk_lists_are_brought_in_but_those_it_passed(tmp_path):
    names = [f"{i:02d}.jsonl" for i in range(6)]
    paths = [written(tmp_path / name) for name in names]
    dropped(*paths)
    ahead = given(Folders(tmp_path), str(tmp_path), passed=2)  # the walk is at the third file
    try:
        assert until(lambda: all(first_page_cached(p) for p in paths[2:]))
        assert not any(first_page_cached(p) for p in paths[:2])
    finally:
        ahead.stop()


def test_a_sub_agents_files_the_walk_never_reads_are_brought_in_with_their_folders(tmp_path):
    """The folders below a listed one are listed ahead of the walk, their files brought in: a first walk reads
    nothing of a sub-agent's file (the layout places it), the read that follows reads all of it."""
    session = "0c4c2e1e-5a3b-4c6e-9d2f-1a2b3c4d5e6f"
    main = written(tmp_path / "proj" / f"{session}.jsonl")
    agent = written(tmp_path / "proj" / session / "subagents" / "agent-a1.jsonl")
    dropped(main, agent)
    folders = Folders(tmp_path)
    ahead = given(folders, str(tmp_path / "proj"))
    try:
        subfolders, files = folders.listed(str(tmp_path / "proj" / session))  # as the walk goes one level down
        ahead.listed(str(tmp_path / "proj" / session), files, subfolders, 1)
        assert until(lambda: first_page_cached(agent) and first_page_cached(main))
    finally:
        ahead.stop()


def test_nothing_is_opened_that_a_read_may_not_open_and_nothing_outside_is_brought_in(tmp_path):
    folder, outside = tmp_path / "folder", tmp_path / "outside"
    secret = written(outside / "secret.jsonl")
    os.makedirs(folder)
    os.mkfifo(folder / "a-fifo.jsonl")
    (folder / "b-link.jsonl").symlink_to(secret)
    swapped_fifo = written(folder / "c-swapped-fifo.jsonl")
    swapped_link = written(folder / "d-swapped-link.jsonl")
    plain = written(folder / "later" / "plain.jsonl")  # listed ahead once no file of `folder` waits: the last
    dropped(secret, plain)
    folders = Folders(folder)
    subfolders, files = folders.listed(str(folder))
    os.remove(swapped_fifo)  # after the listing: its entry still says it is a regular file
    os.mkfifo(swapped_fifo)
    os.remove(swapped_link)
    os.symlink(secret, swapped_link)
    opens = Opens(str(folder / "a-fifo.jsonl"), swapped_fifo, plain)
    ahead = read_ahead.ReadAhead(folders)
    try:
        ahead.listed(str(folder), files, subfolders, 0)
        assert until(lambda: first_page_cached(plain))
        assert opens.heard() == [plain]
        assert not first_page_cached(secret)
    finally:
        ahead.stop()
        opens.close()


def test_a_folder_found_cached_stops_it(tmp_path):
    paths = [written(tmp_path / f"{i:03d}.jsonl", b"{}\n", synced=False) for i in range(read_ahead.CACHED_RUN + 40)]
    opens = Opens(*paths)
    ahead = given(Folders(tmp_path), str(tmp_path))
    try:
        assert until(lambda: ahead.over)
        assert len(opens.heard()) == read_ahead.CACHED_RUN
    finally:
        ahead.stop()
        opens.close()


@pytest.mark.parametrize("cold", [False, True])
def test_a_first_walk_read_ahead_lists_what_a_walk_lists(tmp_path, cold):
    """Every session file, in the walk's order, with the thread beside it or not (a cold folder: it runs all
    along; a cached one: it stops early)."""
    paths = [written(tmp_path / f"p{p}" / f"{i:02d}.jsonl") for p in range(3) for i in range(30)]
    paths += [written(tmp_path / "p0" / "05" / "subagents" / "agent-x.jsonl")]
    if cold:
        dropped(*paths)
    folders = Folders(tmp_path)
    walked = [e.path for e in folders.walk(None, first=True)]
    assert walked == [e.path for e in folders.walk(None)] and sorted(walked) == sorted(paths)
