"""The JSON API of sessions, agents, dialogs, messages and the raw feed. Names here are a contract (shapes.py).

Twins that answer exactly their page's data live beside their page (render.page_or_twin)."""

from __future__ import annotations

from flask import Blueprint, request, url_for

from viewer.reads import dialogs, queries
from viewer.reads.filters import EntryFilter

from .args import cursor_arg, flag_arg, int_arg
from .data import agent_data, message_data, session_data
from .lookup import agent_or_404, chosen_agents, message_or_404, session_or_404, with_facets
from .render import as_json, folder_problems, session_rows
from .state import watched_library

bp = Blueprint("api", __name__, url_prefix="/api")


@bp.get("/sessions")
def sessions():
    library = watched_library()
    return as_json({"sessions": session_rows(library.listing()), "problems": folder_problems(library)})


@bp.get("/sessions/<session_id>")
def session(session_id):
    s = session_or_404(session_id)
    with s.lock:
        return as_json(session_data(s))


@bp.get("/sessions/<session_id>/agents/<path:agent_id>")
def agent(session_id, agent_id):
    s = session_or_404(session_id)
    agent_or_404(s, agent_id)
    start, limit = int_arg("start"), int_arg("limit", 1000, minimum=1)
    filters = EntryFilter.from_args(request.args)
    if filters.tool or filters.modified:
        with_facets(s)
    with s.lock:
        summary = agent_data(s, agent_id)
        if filters:  # the agent page's filters (?kind=&tool=&modified=), same rule
            positions = queries.filtered_positions(s, [agent_id], filters)
            transcript, total = [s.events[p] for p in positions[start:start + limit]], len(positions)
        else:
            transcript, total = queries.transcript(s, agent_id, start, limit), summary["entries"]
        end = start + len(transcript)
        data = {**summary, "transcript": transcript, "start": start, "total": total,
                "url": url_for("pages.agent", session_id=s.id, agent_id=agent_id, **filters.args()),
                "next": url_for("api.agent", session_id=s.id, agent_id=agent_id, start=end, limit=limit,
                                **filters.args())
                if end < total else None}
        if flag_arg("perspective"):
            data["perspective"] = queries.perspective_text(s, agent_id, flag_arg("sub"))
        return as_json(data)


@bp.get("/sessions/<session_id>/dialog")
def dialog(session_id):
    s = session_or_404(session_id)
    chosen = chosen_agents(s)
    result = dialogs.dialog(s, chosen, int_arg("start"), int_arg("limit", 1000, minimum=1))
    messages = [{**item["event"], "speaker": item["speaker"], "recipients": item["recipients"],
                 "modified": item["modified"]} for item in result["items"]]
    return as_json({"agents": chosen, "messages": messages, "start": result["start"], "total": result["total"],
                    "url": url_for("pages.dialog", session_id=s.id, agents=",".join(chosen))})


@bp.get("/sessions/<session_id>/messages/<path:message_id>")
def message(session_id, message_id):
    s = session_or_404(session_id)
    with s.lock:
        position = message_or_404(s, message_id)
        return as_json({**message_data(s, message_id, position),
                        "url": url_for("pages.message", session_id=s.id, message_id=message_id)})


@bp.get("/sessions/<session_id>/events")
def events(session_id):
    """Raw events after a cursor: the live feed for scripts (a page polls its own fragment)."""
    s = session_or_404(session_id)
    limit = int_arg("limit", 1000, minimum=1)
    with s.lock:
        after = s.position_after(cursor_arg())
        reset = after is None  # the file was replaced since that cursor: start again
        batch, end = queries.events_after(s, 0 if reset else after, limit)
        return as_json({"events": batch, "cursor": s.cursor_at(end), "reset": reset})
