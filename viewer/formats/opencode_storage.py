"""OpenCode's older JSON storage tree (`~/.local/share/opencode/storage`, before its SQLite database; anomalyco/opencode
`storage/storage.ts` and `storage/json-migration.ts`): one JSON document per session (`session/<project>/<id>.json`),
message (`message/<session>/<id>.json`) and part (`part/<message>/<id>.json`), each rewritten whole (a temporary file
renamed) when it changes. Read as the database's rows are (opencode_store), grouped by root session: the first read
reads every document, a later one the document that changed (a walk of the folder: those whose stat changed).
"""

from __future__ import annotations

import os

import orjson

from viewer.files.safe_open import open_regular_file
from viewer.files.tailer import Limits

from .base import NOT_READABLE, as_dict
from .opencode_store import NotAStore, SessionRecords, StoreRead, _number, open_store

KINDS = ("session", "message", "part")
# the tree's other documents, read by no page: they belong to it, and are not listed as sessions of their own
OTHER_KINDS = ("project", "session_diff", "todo", "permission", "session_share", "share")
FOLDER = "storage"

MAX_DOCUMENT = Limits().max_line_bytes  # a document is read whole up to a line's limit


def storage_of(path: str) -> str | None:
    """The storage folder a document of the tree lies in (`<storage>/<kind>/<folder>/<id>.json`, or
    `<storage>/<other kind>/<id>.json`), or None."""
    if not path.endswith(".json") or os.path.basename(path).startswith("."):
        return None
    parts = path.split(os.sep)
    for depth, kinds in ((3, KINDS), (2, OTHER_KINDS)):
        if len(parts) > depth and parts[-depth] in kinds and parts[-depth - 1] == FOLDER:
            return os.sep.join(parts[:-depth])
    return None


def looks_like_session(doc) -> bool:
    """A session's document (session/index.ts Info): an id, a title, a version, times; no role (not a message)."""
    return (isinstance(doc, dict) and isinstance(doc.get("id"), str) and isinstance(doc.get("time"), dict)
            and "title" in doc and "version" in doc and "role" not in doc)


class OpenCodeStorage(SessionRecords):
    """Reads the documents of one storage tree that changed, as rows grouped by root session."""

    def __init__(self, folder: str, inside: str | None = None):
        super().__init__()
        self.path, self.inside = folder, inside
        self.stamps: dict[str, tuple] = {}  # document -> its stat when read
        self.messages: dict[str, tuple[str, object]] = {}  # message id -> (its session, its time)

    def read(self, changed: str | None = None) -> StoreRead:
        out = StoreRead()
        paths = [changed] if changed and changed != self.path and self.stamps else self._documents()
        docs = {kind: [] for kind in KINDS}
        for path in paths:
            kind = path.rsplit(os.sep, 3)[1]
            if kind not in KINDS or os.path.dirname(os.path.dirname(os.path.dirname(path))) != self.path:
                continue  # a document no page reads (a project's, a todo list)
            found = self._document(path)
            if found is not None:
                docs[kind].append((path, *found))
                out.modified_at = max(out.modified_at or 0, self.stamps[path][2] / 1e9)
        sessions = [_session(path, doc) for path, doc, _ in docs["session"]]
        rows = [self._message(path, doc, raw) for path, doc, raw in docs["message"]]
        rows += [self._part(path, doc, raw) for path, doc, raw in docs["part"]]
        sessions.sort(key=lambda r: (_number(r["time_created"]), r["id"]))
        return self.grouped(out, sessions, [r for r in _in_order(rows) if isinstance(r["session_id"], str)])

    def _documents(self) -> list[str]:
        found = []
        for kind in KINDS:  # sessions, then messages (their times), then parts
            top = os.path.join(self.path, kind)
            for folder in _names(top):
                found += [os.path.join(top, folder, n) for n in _names(os.path.join(top, folder)) if n.endswith(".json")]
        return found

    def _document(self, path: str) -> tuple[object, bytes] | None:
        """(parsed, bytes as given) of a document not read since it last changed; None when unchanged or gone."""
        try:
            with open_regular_file(path, self.inside) as f:
                st = os.fstat(f.fileno())
                stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
                if self.stamps.get(path) == stamp:
                    return None
                raw = f.read(MAX_DOCUMENT + 1)
        except (*NOT_READABLE, OSError):
            return None
        self.stamps[path] = stamp
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {}, raw  # given as written: the index reports it
        return doc, orjson.dumps(doc)

    def _message(self, path: str, doc, raw: bytes) -> dict:
        doc = as_dict(doc)
        mid = os.path.basename(path)[:-5]
        session = doc.get("sessionID") if isinstance(doc.get("sessionID"), str) else path.rsplit(os.sep, 2)[1]
        created = as_dict(doc.get("time")).get("created")
        self.messages[mid] = (session, created)
        return {"kind": "message", "id": mid, "session_id": session, "time_created": created, "data": raw}

    def _part(self, path: str, doc, raw: bytes) -> dict:
        doc = as_dict(doc)
        mid = path.rsplit(os.sep, 2)[1]
        session, created = self.messages.get(mid, (doc.get("sessionID"), None))
        own = as_dict(doc.get("time")).get("start") or as_dict(as_dict(doc.get("state")).get("time")).get("start")
        return {"kind": "part", "id": os.path.basename(path)[:-5], "message_id": mid, "session_id": session,
                "time_created": created, "started": own, "data": raw}


def _in_order(rows: list[dict]) -> list[dict]:
    """Messages by time, each followed by its parts in id order; a part's time is its own start where it has one,
    never before the part before it (a document has no row time: a tool's result is due at its end, see opencode)."""
    rows.sort(key=lambda r: (_number(r["time_created"]), r.get("message_id") or r["id"], r["kind"], r["id"]))
    latest: dict[str, float] = {}
    for row in rows:
        if row["kind"] == "part":
            key = row["message_id"]
            row["time_created"] = max(_number(row["time_created"]), _number(row.pop("started")), latest.get(key, 0))
            latest[key] = row["time_created"]
    return rows


def _session(path: str, doc) -> dict:
    doc, time = as_dict(doc), as_dict(as_dict(doc).get("time"))
    return {"id": doc.get("id") if isinstance(doc.get("id"), str) else os.path.basename(path)[:-5],
            "parent_id": doc.get("parentID"), "title": doc.get("title"), "directory": doc.get("directory"),
            "time_created": time.get("created"), "time_updated": time.get("updated")}


def _names(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def open_storage(folder: str, inside: str | None = None) -> OpenCodeStorage:
    """The reader of a storage tree whose sessions' documents are OpenCode's; raises NotAStore for any other folder."""
    top = os.path.join(folder, "session")
    for project in _names(top):
        for name in _names(os.path.join(top, project))[:1]:
            try:
                with open_regular_file(os.path.join(top, project, name), inside) as f:
                    if looks_like_session(orjson.loads(f.read(MAX_DOCUMENT))):
                        return OpenCodeStorage(folder, inside)
            except (*NOT_READABLE, OSError, orjson.JSONDecodeError):
                continue
    raise NotAStore("no OpenCode session documents")


def open_any(path: str, inside: str | None = None):
    """The reader of an OpenCode database or storage folder (raises NotAStore for anything else)."""
    return open_storage(path, inside) if os.path.isdir(path) else open_store(path, inside)
