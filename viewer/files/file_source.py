"""A session file read at offsets (FileSource), from its app's bounded pool of open descriptors (core/open_files.py):
the index keeps where a line is, not its bytes, and request threads read while the tailer appends."""

from __future__ import annotations

import os
import threading
import zlib

from viewer.core.open_files import OpenFiles

from .safe_open import open_regular, open_regular_stat

SMALL_READ = 64 * 1024  # FileSource reads up to this size hold the pool's lock instead of marking the source in use

_PREAD = getattr(os, "pread", None)
_SEEK_LOCK = threading.Lock()


def _read_at(fd: int, offset: int, length: int) -> bytes:
    if _PREAD is not None:  # pread moves no shared position: threads read one file at once
        return _PREAD(fd, length, offset)
    with _SEEK_LOCK:  # no pread (Windows): seek and read may not interleave
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, length)


def _ends(fd: int, length: int, st: os.stat_result | None = None) -> tuple[os.stat_result, bytes, bytes]:
    st = os.fstat(fd) if st is None else st
    first = _read_at(fd, 0, min(length, st.st_size))
    last = _read_at(fd, st.st_size - length, length) if st.st_size > length else b""
    return st, first, last


def file_ends(path: str, inside: str | None, length: int) -> tuple[os.stat_result, bytes, bytes]:
    """FileSource.ends of the file at `path`, opened for this alone (as every read opens one: open_regular) and
    closed at once: a woken session's hundreds of files are checked without entering the pool of open files."""
    fd, st = open_regular_stat(path, inside)  # its fstat, taken by the checks of the open: not taken again
    try:
        return _ends(fd, length, st)
    finally:
        os.close(fd)


class FileChanged(OSError):
    """The file at a source's path is no longer the one indexed (another inode, shorter, other bytes)."""


class FileSource:
    """A session file read at offsets, so the index keeps where a line is, not its bytes.

    Descriptors are a bounded pool (`pool`, its app's: core/open_files.py): at most `pool.cap` sources are open
    at once, the least recently read closed first.
    A closed source is opened again by path when read, and used only if it is still the file that was
    indexed: the same device and inode, at least `size` bytes, and the bytes its tailer fingerprinted
    (`check`) unchanged. Otherwise it raises `FileChanged` (the event list shows a "changed on disk"
    placeholder, never other bytes) and `changed` tells its tailer to read the file again.

    `os.pread` does not move a shared file position, so request threads read while the tailer
    appends; a source being read is never closed under its reader.
    """

    __slots__ = ("path", "inside", "identity", "size", "check", "fd", "users", "changed", "recent", "pool",
                 "__weakref__")

    def __init__(self, path: str, inside: str | None = None, identity: tuple[int, int] | None = None,
                 pool: OpenFiles | None = None) -> None:
        """`identity`: the file is known (from a cache) to be that one, and is not opened now: it opens when first
        read, with the checks of any reopening (a restart of thousands of kept sessions opens none of their files).
        `pool`: its app's open files (Host.files); None: a pool of its own (a file read alone)."""
        self.fd = -1
        self.pool = pool if pool is not None else OpenFiles()
        self.path, self.inside = path, inside
        self.size = 0  # bytes of it indexed: a file reopened shorter is not this one
        self.check: tuple[int, int, int] | None = None  # (start, end, CRC-32) of bytes it must still hold
        self.users = 0
        self.changed = False
        self.recent = False  # read since the last eviction walk (see OpenFiles.enter)
        if identity is not None:
            self.identity = tuple(identity)
            return
        fd = open_regular(path, inside)
        try:
            st = os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        self.identity = (st.st_dev, st.st_ino)
        with self.pool.lock:
            self.fd = fd
            self.pool.enter(self)

    def read(self, offset: int, length: int) -> bytes:
        if length <= SMALL_READ and _PREAD is not None:  # an event's line: read under the pool's lock
            with self.pool.lock:  # (about 1 µs): it cannot be closed meanwhile, nothing to count
                return _PREAD(self._opened(), length, offset)
        with self.pool.lock:  # a big read: the lock is not held while it runs, the source is marked in use
            fd = self._opened()
            self.users += 1
        try:
            return _read_at(fd, offset, length)
        finally:
            with self.pool.lock:
                self.users -= 1

    def ends(self, length: int) -> tuple[os.stat_result, bytes, bytes]:
        """Its file's stat and its first and last `length` bytes (the last empty when it is no longer than that),
        read on its descriptor: what tells, at a restart, that it is still the file a cache entry describes."""
        with self.pool.lock:
            return _ends(self._opened(), length)

    def retire(self) -> None:
        """Never read this source again: its file was rewritten; what was indexed from it is gone."""
        with self.pool.lock:
            self.changed = True
            self.close_descriptor()

    def _opened(self) -> int:
        """Its descriptor, opened again if it was closed (under the pool's lock)."""
        if self.changed:
            raise FileChanged(f"{self.path} is no longer the file that was read")
        if self.fd < 0:
            self._reopen()
        self.recent = True
        return self.fd

    def _reopen(self) -> None:
        try:
            fd = open_regular(self.path, self.inside)
        except OSError:
            self.changed = True
            raise
        st = os.fstat(fd)
        same = (st.st_dev, st.st_ino) == self.identity and st.st_size >= self.size
        if same and self.check is not None:
            start, end, crc = self.check
            same = zlib.crc32(_read_at(fd, start, end - start)) == crc
        if not same:
            os.close(fd)
            self.changed = True
            raise FileChanged(f"{self.path} changed on disk since it was read")
        self.fd = fd
        self.pool.enter(self)

    def close_descriptor(self) -> None:
        """Close its descriptor (under its pool's lock): opened again by path when next read."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
            self.pool.leave(self)

    def __del__(self) -> None:
        if self.fd >= 0:
            with self.pool.lock:  # never closed twice: an eviction walk may hold it at this moment
                self.close_descriptor()
