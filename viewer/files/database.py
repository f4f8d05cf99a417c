"""Reading a SQLite database another program writes (OpenCode's): opened read-only, locked no longer than one read.

Checked as every file is (safe_open), opened with a `mode=ro` URI (never `immutable`: the writer's changes must be
seen), read in one short transaction and closed. A change is noticed by the database's and its WAL's size, mtime
and change counters. A locked or damaged database is said (`error`, `kind`), never raised.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .safe_open import open_regular

HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database
BUSY_TIMEOUT = 0.25  # seconds a read waits for a writer's lock before it says the database is locked
# A WAL writer appends its frames (file events), then marks them committed in the mmap'ed `-shm` (no file event):
# a read in between sees none of them, and nothing would say to look again. So a read first waits, this long at
# most (a writer may die mid-commit), while the `-wal` holds a frame past the last one its index marks.
COMMIT_WAIT = 0.5
SIDE_FILES = ("-wal", "-journal")  # written instead of the database itself: a change to them is a change to it


def is_database(path: str, inside: str | None = None) -> bool:
    """Whether the file at `path` is a SQLite database, by its first bytes (raises what safe_open raises)."""
    fd = open_regular(path, inside)
    try:
        return os.read(fd, len(HEADER)) == HEADER
    finally:
        os.close(fd)


def main_file(path: str) -> str | None:
    """The database a side file (`x.db-wal`, `x.db-journal`) belongs to, or None."""
    for suffix in SIDE_FILES:
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return None


@dataclass
class DatabaseRead:
    result: Any = None  # what the query gave (None when the read failed or nothing changed)
    changed: bool = False  # the files changed since the last read that succeeded
    error: str | None = None  # why it could not be read
    kind: str | None = None  # "database_locked" or "damaged_database"
    modified_at: float | None = None


class DatabaseReader:
    """Reads one SQLite database when it changed: `read(query)` runs `query(connection)` in one read transaction."""

    def __init__(self, path: str, inside: str | None = None, timeout: float = BUSY_TIMEOUT):
        self.path = os.fspath(path)
        self.inside = inside
        self.timeout = timeout
        self._stamp: tuple | None = None  # of the last read that succeeded

    def stamp(self) -> tuple:
        """What a writer changes: (inode, size, mtime) of the database and of its side files, the database header
        (its change counter) and the WAL index header (its change counter and frame count)."""
        marks = []
        for suffix in ("", *SIDE_FILES):
            try:
                st = os.stat(self.path + suffix)
                marks.append((st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError:
                marks.append(None)
        return (*marks, self._head("", 100), self._head("-shm", 48))

    def _wait_for_commit(self) -> None:
        deadline = time.monotonic() + COMMIT_WAIT
        while self._in_flight() and time.monotonic() < deadline:
            time.sleep(0.005)

    def _in_flight(self) -> bool:
        """Whether the `-wal` file holds a frame written after the last one its index (`-shm`) marks committed:
        its WAL header's salts (a restarted log) or the next frame's salts are the log's own (sqlite's wal.c)."""
        index, head = self._head("-shm", 48), self._head("-wal", 32)
        if index is None or head is None or len(index) < 48 or len(head) < 32:
            return False
        order = "little" if sys.byteorder == "little" else "big"  # the index is in the writer's byte order
        frames, page = int.from_bytes(index[16:20], order), int.from_bytes(head[8:12], "big")
        salts = head[16:24]
        if index[32:40] != salts:  # copied byte for byte from the log's header
            return True  # the log was restarted and its index not yet
        fd = self._open("-wal")
        if fd is None:
            return False
        try:
            frame = os.pread(fd, 24, 32 + frames * (page + 24))
        finally:
            os.close(fd)
        return len(frame) == 24 and frame[8:16] == salts

    def _open(self, suffix: str) -> int | None:
        try:
            return open_regular(self.path + suffix, self.inside)
        except OSError:
            return None

    def _head(self, suffix: str, size: int) -> bytes | None:
        fd = self._open(suffix)
        if fd is None:
            return None
        try:
            return os.read(fd, size)
        finally:
            os.close(fd)

    def read(self, query: Callable[[sqlite3.Connection], Any]) -> DatabaseRead:
        out = DatabaseRead()
        self._wait_for_commit()
        stamp = self.stamp()
        if stamp == self._stamp:
            return out
        os.close(open_regular(self.path, self.inside))  # a FIFO, a link out of the folder: refused, never opened
        out.modified_at = max((m[2] for m in stamp[: 1 + len(SIDE_FILES)] if m is not None), default=0) / 1e9
        uri = "file:" + urllib.parse.quote(os.path.abspath(self.path)) + "?mode=ro"
        try:
            connection = sqlite3.connect(uri, uri=True, timeout=self.timeout, isolation_level=None,
                                         check_same_thread=False)
        except sqlite3.Error as exc:
            return self._failed(out, exc)
        try:
            connection.execute("BEGIN")  # one snapshot for every query, ended at once below
            out.result = query(connection)
        except sqlite3.Error as exc:
            return self._failed(out, exc)
        finally:
            connection.close()  # rolls the read transaction back: nothing is held between reads
        out.changed, self._stamp = True, stamp
        return out

    @staticmethod
    def _failed(out: DatabaseRead, exc: sqlite3.Error) -> DatabaseRead:
        text = str(exc)
        if "locked" in text or "busy" in text:
            out.kind, out.error = "database_locked", f"the database is locked by another program ({text}): read again later"
        else:
            out.kind, out.error = "damaged_database", f"the database cannot be read ({text})"
        return out
