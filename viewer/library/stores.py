"""Files that each hold many sessions (OpenCode's database, its older storage folder), a part of the Library.

Each root session in one is a session with the id `<the file's id>:<the session's id>`. What stops such a file
being read now (locked, damaged) is a problem of the folder shown on `/`, until a read succeeds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from viewer.files.safe_open import refused_path
from viewer.formats import NOT_READABLE, Format, detect
from viewer.index.session_ids import group_id_for, shown
from viewer.index.session_index import SessionIndex


@dataclass
class Store:
    format: Format
    reader: object  # what the format's `store` gave: read(changed) -> opencode_store.StoreRead
    sessions: dict[str, SessionIndex] = field(default_factory=dict)  # the file's own session id -> its session


class Stores:
    """The files of many sessions of a Library (see the module). The Library's `lock` guards what it lists."""

    def __init__(self, library):
        self._library = library
        self._stores: dict[str, Store] = {}
        self._not_stores: dict[str, tuple] = {}  # databases of other programs -> their stat when looked at

    def paths(self) -> list[str]:
        return list(self._stores)

    def refresh(self, path: str, changed: str) -> None:
        """Read what changed (`changed`: the file that did) in a file of many sessions; a file no format reads is
        left alone, not listed; one that may not or cannot be read is listed with its problem."""
        library = self._library
        if not os.path.lexists(path):
            library.forget(path)
            return
        try:
            self._read(path, changed)
        except NOT_READABLE as error:
            library.refuse(refused_path(error, path), error)
        except FileNotFoundError:
            library.forget(path)

    def _read(self, path: str, changed: str) -> None:
        library = self._library
        store = self._stores.get(path)
        if store is None:
            st = os.stat(path)
            stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
            if self._not_stores.get(path) == stamp:
                return
            found = detect.store_of(path, library.inside)
            if found is None:
                if not os.path.isdir(path):  # a folder's stat does not change with the documents deep in it
                    self._not_stores[path] = stamp
                return
            store = self._stores[path] = Store(*found)
        read = store.reader.read(changed)
        relpath = library.relpath(path)
        if read.error:
            library.folder_problem(read.kind, relpath, read.error)
            return
        library.folders.read_fine(relpath)
        for name, lines in read.sessions.items():
            session = store.sessions.get(name)
            if session is None:
                session = SessionIndex(group_id_for(relpath, name), path, relpath, store.format, name=shown(name),
                                       host=self._library.host)
                store.sessions[name] = session
            session.ingest_records([({"rel": shown(relpath)}, lines)])
            session.project = shown(session.normalizer.project or relpath)
            session.updated_at = read.modified_at
            with library.lock:
                library.sessions[session.id] = session
                library.bump(session)

    def forget(self, path: str) -> bool:
        """A file of many sessions went away: so did its sessions. Whether it was one."""
        self._not_stores.pop(path, None)
        store = self._stores.pop(path, None)
        if store is None:
            return False
        library = self._library
        with library.lock:
            for session in store.sessions.values():
                if library.sessions.get(session.id) is session:
                    del library.sessions[session.id]
            library.bump()
        library.folders.read_fine(library.relpath(path))
        return True
