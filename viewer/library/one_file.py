"""One file of a folder read whole, outside the folder's walk (`agentview open`, `share`, `push` of a file): with the
other files of its session, or every session of a file of many."""

from __future__ import annotations

import os

from viewer.formats import detect
from viewer.index.session_index import SessionIndex

from .library import Library


def open_file(library: Library, path: str) -> SessionIndex | None:
    """One session file read whole, with the other files of its session (Claude Code sub-agents)."""
    path = os.path.abspath(path)
    with library.groups.read_after():
        library.refresh(path)
        session = library.session_at(path)
        if session is not None and session.members and session.path == path:
            folders, files = detect.companions(session.format, path, library.inside)
            for folder in folders:
                library.scan(folder)
            for beside in files:
                library.refresh(beside)
    return library.session_at(path)


def sessions_of_file(library: Library, path: str) -> list[SessionIndex]:
    """The sessions a file holds, read whole: every session of a file of many (OpenCode's database or storage
    folder), else the one of a session file (with its other files, see `open_file`)."""
    path = os.path.abspath(path)
    store = detect.store_file(path) or (path if os.path.isdir(path) else None)  # a folder: a store, or none
    if store is None:
        session = open_file(library, path)
        return [session] if session is not None else []
    library.stores.refresh(store, path)
    with library.lock:
        return sorted((s for s in library.sessions.values() if s.path == store), key=lambda s: s.id)
