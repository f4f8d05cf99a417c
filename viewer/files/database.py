"""Reading a SQLite database another program writes (OpenCode's): opened read-only, locked no longer than one read.

A read checks the file as every read does (safe_open: a regular file inside the folder), then opens it with a
`mode=ro` URI (never `immutable`: the writer's changes must be seen), reads in one short transaction and closes
it: no lock, no open transaction, no connection is kept between reads. A change is noticed by the database's and
its write-ahead log's size and mtime (a writer in WAL mode changes only the `-wal` file until a checkpoint).
A locked or damaged database is said (`error`, `kind`), never raised.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .safe_open import open_regular

HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database
BUSY_TIMEOUT = 0.25  # seconds a read waits for a writer's lock before it says the database is locked
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
        """(inode, size, mtime) of the database and of its side files: what a writer changes."""
        marks = []
        for suffix in ("", *SIDE_FILES):
            try:
                st = os.stat(self.path + suffix)
                marks.append((st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError:
                marks.append(None)
        return tuple(marks)

    def read(self, query: Callable[[sqlite3.Connection], Any]) -> DatabaseRead:
        out = DatabaseRead()
        stamp = self.stamp()
        if stamp == self._stamp:
            return out
        os.close(open_regular(self.path, self.inside))  # a FIFO, a link out of the folder: refused, never opened
        out.modified_at = max((m[2] for m in stamp if m is not None), default=0) / 1e9
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
