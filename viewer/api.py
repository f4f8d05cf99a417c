"""The JSON API: a twin of every page, on the same queries. Names here are a contract."""

from __future__ import annotations

from flask import Blueprint, Response, request, url_for

from . import jsonio, provenance, queries
from .app import state, watched_library
from .filters import EntryFilter
from . import usage
from .lookup import agent_or_404, chosen_agents, cursor_arg, flag_arg, int_arg, message_or_404, session_or_404
from .redact import shown_json

bp = Blueprint("api", __name__, url_prefix="/api")


def as_json(data: dict, status: int = 200) -> Response:
    return Response(shown_json(jsonio.answer(data)), status=status, mimetype="application/json")


def twin(s, data: dict, page: str, **url_args) -> Response:
    """The JSON twin of a session's page: the page's data, the session id and the page's URL."""
    return as_json({"id": s.id, **data, "url": url_for(page, session_id=s.id, **url_args)})


def session_row(s) -> dict:
    with s.lock:
        return {
            "id": s.id,
            "name": s.name,
            "path": s.relpath,
            "events": s.count,
            "agents": len(s.agents),
            "problems": len(s.problems),
            "updated_at": s.updated_at,
            "url": url_for("pages.session", session_id=s.id),
            "format": s.format.name,
            "format_label": s.format.label,
            "format_reason": s.format_reason or None,
            "project": s.project,
            "files": [m["rel"] for m in s.members.values()] if s.members else None,
            "hides": sorted(s.format.hides),
            "title": s.title,
        }


def folder_problems(library) -> list[dict]:
    """What keeps part of the folder from being listed (a folder that cannot be read, too deep...)."""
    return [p.as_dict() for p in library.problems]


@bp.get("/sessions")
def sessions():
    library = watched_library()
    return as_json({"sessions": [session_row(s) for s in library.listing()], "problems": folder_problems(library)})


@bp.get("/sessions/<session_id>")
def session(session_id):
    s = session_or_404(session_id)
    with s.lock:
        agents = queries.agents(s)
        for agent in agents:
            agent["url"] = url_for("pages.agent", session_id=s.id, agent_id=agent["agent_id"])
        return as_json({**session_row(s), "cursor": s.cursor, "agents": agents,
                        "problems": [p.as_dict() for p in s.problems],
                        "usage": usage.for_session(s), "format_summary": s.format_summary})


@bp.get("/sessions/<session_id>/problems")
def problems(session_id):
    s = session_or_404(session_id)
    return twin(s, queries.problems(s), "pages.problems")


@bp.get("/sessions/<session_id>/agents/<path:agent_id>")
def agent(session_id, agent_id):
    s = session_or_404(session_id)
    agent_or_404(s, agent_id)
    start, limit = int_arg("start"), int_arg("limit", 1000, minimum=1)
    filters = EntryFilter.from_args(request.args)
    with s.lock:
        summary = queries.agent_summary(s, s.agents[agent_id])
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
    result = queries.dialog(s, chosen, int_arg("start"), int_arg("limit", 1000, minimum=1))
    messages = [{**item["event"], "speaker": item["speaker"], "recipients": item["recipients"],
                 "modified": item["modified"]} for item in result["items"]]
    return as_json({"agents": chosen, "messages": messages, "start": result["start"], "total": result["total"],
                    "url": url_for("pages.dialog", session_id=s.id, agents=",".join(chosen))})


@bp.get("/sessions/<session_id>/messages/<path:message_id>")
def message(session_id, message_id):
    s = session_or_404(session_id)
    with s.lock:
        position = message_or_404(s, message_id)
        return as_json({"event": s.events[position], "flow": queries.flow(s, message_id),
                        "references": queries.references(s, message_id),
                        "provenance": provenance.message_provenance(s, message_id),
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
