"""OpenCode's SQLite database (`~/.local/share/opencode/opencode.db`): one file, many sessions, read as records.

The tables are anomalyco/opencode's `src/session/session.sql.ts`: `session`, `message` and `part`. A root session
and every session below it (`parent_id`) are one session of the viewer. Each read gives only the rows inserted or
updated since the last (by rowid and `time_updated`), as JSON lines for the normalizer, grouped by root session.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

import orjson

from viewer.files.database import DatabaseReader, is_database
from viewer.files.tailer import Line

TABLES = ("session", "message", "part")
PARENT_DEPTH = 32  # sub-agents of sub-agents: at most this many parents followed to a root


class NotAStore(Exception):
    """A file that is not an OpenCode database (a SQLite file of another program, not SQLite at all)."""


@dataclass
class StoreRead:
    sessions: dict[str, list[Line]] = field(default_factory=dict)  # root session id -> its new records
    error: str | None = None
    kind: str | None = None
    modified_at: float | None = None


def looks_like(tables: set[str]) -> bool:
    return all(t in tables for t in TABLES)


def _tables(connection: sqlite3.Connection) -> set[str]:
    return {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


class SessionRecords:
    """Rows of sessions, messages and parts as records grouped by root session (the database and the older JSON
    tree alike): `data` is a message's or a part's JSON as written."""

    def __init__(self) -> None:
        self.parents: dict[str, str | None] = {}  # session id -> its parent's
        self.numbers: dict[str, int] = {}  # root -> how many records it was given (their line numbers)

    def grouped(self, out: StoreRead, sessions: list[dict], rows: list[dict]) -> StoreRead:
        """`sessions`' rows and then `rows` (messages and parts, in order), each given to its root's records."""
        for row in sessions:
            parent = row.get("parent_id")
            self.parents[row["id"]] = parent if isinstance(parent, str) and parent else None
        for row in sessions:
            self._give(out, self.root_of(row["id"]), {"kind": "session", **row})
        for row in rows:
            self._give(out, self.root_of(row["session_id"]), row)
        return out

    def root_of(self, session: str) -> str:
        for _ in range(PARENT_DEPTH):
            parent = self.parents.get(session)
            if parent is None or parent not in self.parents:  # a parent not (yet) in the database: a root
                return session
            session = parent
        return session

    def _give(self, out: StoreRead, root: str, record: dict) -> None:
        number = self.numbers.get(root, 0) + 1
        self.numbers[root] = number
        data = record.pop("data", None)
        head = orjson.dumps(record, option=orjson.OPT_NON_STR_KEYS)
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        if isinstance(data, bytes):  # spliced in as written: a damaged one is a bad line the index reports
            head = head[:-1] + b',"data":' + data + b"}"
        out.sessions.setdefault(root, []).append(Line(number, head))


class OpenCodeDatabase(SessionRecords):
    """Reads the new rows of one OpenCode database, grouped by root session (see the module)."""

    def __init__(self, path: str, inside: str | None = None):
        super().__init__()
        self.db = DatabaseReader(path, inside)
        self.since = {t: None for t in TABLES}  # table -> the latest time_updated read
        self.seen: dict[tuple[str, str], object] = {}  # (table, id) -> time_updated of the row as given
        self.rowids: dict[str, int] = {}  # table -> the highest rowid read

    @property
    def path(self) -> str:
        return self.db.path

    def read(self, changed: str | None = None) -> StoreRead:
        read = self.db.read(self._query)
        out = StoreRead(error=read.error, kind=read.kind, modified_at=read.modified_at)
        return out if read.result is None else self.grouped(out, *read.result)

    def _query(self, connection: sqlite3.Connection):
        if not looks_like(_tables(connection)):
            raise sqlite3.DatabaseError("no session, message and part tables: not an OpenCode database")
        connection.row_factory = sqlite3.Row
        sessions = self._new(connection, "session", "SELECT rowid AS _rowid, * FROM session")
        messages = self._new(connection, "message", "SELECT rowid AS _rowid, id, session_id, time_created, "
                                                    "time_updated, data FROM message")
        parts = self._new(connection, "part", "SELECT rowid AS _rowid, id, message_id, session_id, time_created, "
                                              "time_updated, data FROM part")
        sessions.sort(key=lambda r: (_number(r.get("time_created")), r["id"]))
        for row in messages:
            row["kind"] = "message"
        for row in parts:
            row["kind"] = "part"
        # a message before its parts (its time is earlier, its kind sorts first), parts in their id order
        rows = sorted(messages + parts, key=lambda r: (_number(r.get("time_created")), r["kind"], r["id"]))
        return sessions, rows

    def _new(self, connection: sqlite3.Connection, table: str, select: str) -> list[dict]:
        """The rows inserted (a rowid past the last read: also a row whose time is in the past, as a migration
        writes them) or updated (a time_updated from the last read's on) since the last read."""
        since, last = self.since[table], self.rowids.get(table)
        cursor = connection.execute(select + (" WHERE rowid > ? OR time_updated >= ?" if since is not None else ""),
                                    () if since is None else (last if last is not None else -1, since))
        rows = []
        for row in cursor:
            row = dict(row)
            rowid = row.pop("_rowid", None)
            if isinstance(rowid, int) and rowid > self.rowids.get(table, -1):
                self.rowids[table] = rowid
            if not isinstance(row.get("id"), str) or not isinstance(row.get("session_id", ""), str):
                continue
            key, stamp = (table, row["id"]), row.get("time_updated")
            if self.seen.get(key, ...) == stamp:  # read already at that time
                continue
            self.seen[key] = stamp
            if isinstance(stamp, (int, float)) and (self.since[table] is None or stamp > self.since[table]):
                self.since[table] = stamp
            rows.append(row)
        return rows


def _number(value) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def open_store(path: str, inside: str | None = None) -> OpenCodeDatabase:
    """The reader of an OpenCode database; raises NotAStore for any other file (and what safe_open raises)."""
    if not is_database(path, inside):
        raise NotAStore("not a SQLite database")
    probe = DatabaseReader(path, inside).read(_tables)
    if probe.result is not None and not looks_like(probe.result):
        raise NotAStore("a database of another program")
    return OpenCodeDatabase(path, inside)  # also when it cannot be read now: its problem is shown
