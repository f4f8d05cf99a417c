"""The JSON API: the list of sessions, the raw feed, and the JSON of a session, agent, dialog and message (their
pages' views, resource_views.py). Names here are a contract (shapes.py).

Twins that answer exactly their page's data live beside their page (render.page_or_twin)."""

from __future__ import annotations

from flask import Blueprint

from viewer.reads import live_updates

from . import resource_views, shapes
from .asked import cursor_arg, int_arg, session_or_404
from .render import as_json, built, folder_problems, session_rows
from .state import state, watched_library

bp = Blueprint("api", __name__, url_prefix="/api")


@bp.get("/sessions")
def sessions():
    library = watched_library()
    return as_json(built(shapes.Sessions, {"sessions": session_rows(library, library.listing()),
                                           "problems": folder_problems(library)}))


@bp.get("/status")
def status():
    """How far the server is with its folder, cheap enough to ask ten times a second (a script waiting for a first
    read of thousands of sessions to be searchable whole); `version` changes whenever anything listed does."""
    library = watched_library()
    watcher = state().watcher
    # read before the count: a count made before a scan or a file's read ended is not answered after it
    scanning, files = watcher is not None and not watcher.ready.is_set(), len(library.progress())
    counts, version = state().folder_counts.of(library, (scanning, files))
    return as_json(built(shapes.Status, {**counts, "version": version, "reading": files, "scanning": scanning}))


resource_views.route(bp, resource_views.API_RULES)  # a session's, agent's, dialog's and message's JSON


@bp.get("/sessions/<session_id>/events")
def events(session_id):
    """Raw events after a cursor: the live feed for scripts (a page polls its own fragment)."""
    s = session_or_404(session_id)
    limit = int_arg("limit", 1000, minimum=1)
    with s.lock:
        after = s.position_after(cursor_arg())
        reset = after is None  # the file was replaced since that cursor: start again
        batch, end = live_updates.events_after(s, 0 if reset else after, limit)
        return as_json(built(shapes.Events, {"events": batch, "cursor": s.cursor_at(end), "reset": reset}))
