"""The HTML pages and the live fragments their htmx pollers fetch."""

from __future__ import annotations

import logging

from flask import Blueprint, Response, current_app, render_template, request
from werkzeug.exceptions import HTTPException

from . import queries
from .api import as_json, session_row
from .app import state
from .lookup import agent_or_404, chosen_agents, flag_arg, int_arg, message_or_404, session_or_404

bp = Blueprint("pages", __name__)
log = logging.getLogger(__name__)

def _nothing_new() -> Response:
    return Response(status=204)


def _reload() -> Response:
    """The file was replaced since the page was drawn: have htmx reload the whole page."""
    return Response(status=200, headers={"HX-Refresh": "true"})


def _gone(session_id: str) -> Response:
    # 286 tells htmx to stop polling; the banner says why.
    html = render_template("_gone.html", session_id=session_id)
    return Response(html, status=286)


def _after(s) -> int | None:
    return s.position_after(request.args.get("after"))


# --- sessions --------------------------------------------------------------------------------

@bp.get("/")
def index():
    library = state().library
    return render_template("index.html", sessions=[session_row(s) for s in library.listing()],
                           version=library.version, root=library.root)


@bp.get("/poll/sessions")
def poll_sessions():
    library = state().library
    if request.args.get("v") == str(library.version):
        return _nothing_new()
    return render_template("_sessions.html", sessions=[session_row(s) for s in library.listing()],
                           version=library.version)


# --- a session: the agent tree and the dialog picker -------------------------------------------

@bp.get("/s/<session_id>")
def session(session_id):
    s = session_or_404(session_id)
    with s.lock:  # gather under the lock, render outside it: the ingest thread waits less
        context = dict(session=session_row(s), tree=queries.tree(s), agents=queries.agents(s),
                       cursor=s.cursor, problems=len(s.problems))
    return render_template("session.html", **context)


@bp.get("/s/<session_id>/poll/tree")
def poll_tree(session_id):
    s = state().library.get(session_id)
    if s is None:
        return _gone(session_id)
    with s.lock:
        after = _after(s)
        if after is None:
            return _reload()
        if after == s.count:
            return _nothing_new()
        context = dict(session=session_row(s), updates=queries.tree_updates(s, after), cursor=s.cursor)
    return render_template("_tree_poll.html", **context)


# --- an agent's perspective ------------------------------------------------------------------------

@bp.get("/s/<session_id>/agents/<path:agent_id>")
def agent(session_id, agent_id):
    s = session_or_404(session_id)
    agent_or_404(s, agent_id)
    include_subagents = flag_arg("sub")
    size = page_size("AGENT_PAGE_SIZE")
    with s.lock:
        view = queries.perspective(s, agent_id, include_subagents, int_arg("start"), size)
        context = dict(
            session=session_row(s), agent=queries.agent_summary(s, s.agents[agent_id]),
            lineage=queries.lineage(s, agent_id),
            children=[queries.agent_summary(s, s.agents[c]) for c in s.agents[agent_id].children],
            view=view, include_subagents=include_subagents, size=size, cursor=s.cursor,
            live=view["end"] == view["total"],
        )
    return render_template("agent.html", **context)


@bp.get("/s/<session_id>/poll/agent")
def poll_agent(session_id):
    s = state().library.get(session_id)
    if s is None:
        return _gone(session_id)
    agent_id = request.args.get("agent", "")
    with s.lock:
        if agent_id not in s.agents:
            return _gone(session_id)
        after = _after(s)
        if after is None:
            return _reload()
        if after == s.count:
            return _nothing_new()
        include_subagents = flag_arg("sub")
        context = dict(session=session_row(s), agent_id=agent_id, include_subagents=include_subagents,
                       updates=queries.perspective_updates(s, agent_id, include_subagents, after), cursor=s.cursor)
    return render_template("_agent_poll.html", **context)


# --- the dialog between chosen agents ----------------------------------------------------------------

@bp.get("/s/<session_id>/dialog")
def dialog(session_id):
    s = session_or_404(session_id)
    chosen = chosen_agents(s)
    size = page_size("DIALOG_PAGE_SIZE")
    with s.lock:
        view = queries.dialog(s, chosen, int_arg("start"), size)
        context = dict(session=session_row(s), chosen=chosen, agents=queries.agents(s), names=queries.agent_names(s),
                       view=view, size=size, cursor=s.cursor, live=view["end"] == view["total"])
    return render_template("dialog.html", **context)


@bp.get("/s/<session_id>/poll/dialog")
def poll_dialog(session_id):
    s = state().library.get(session_id)
    if s is None:
        return _gone(session_id)
    with s.lock:
        chosen = [a for a in ",".join(request.args.getlist("agents")).split(",") if a in s.agents]
        after = _after(s)
        if after is None:
            return _reload()
        if after == s.count:
            return _nothing_new()
        context = dict(session=session_row(s), chosen=chosen, updates=queries.dialog_updates(s, chosen, after),
                       cursor=s.cursor)
    return render_template("_dialog_poll.html", **context)


# --- one message: its fields, where it came from, what represents it -------------------------------

@bp.get("/s/<session_id>/messages/<path:message_id>")
def message(session_id, message_id):
    s = session_or_404(session_id)
    with s.lock:
        position = message_or_404(s, message_id)
        context = dict(
            session=session_row(s), event=s.events[position], position=position, line=s.line_numbers[position],
            names=queries.agent_names(s), flow=queries.flow(s, message_id),
            references=queries.references(s, message_id), parent=queries.parent_of(s, position),
        )
    return render_template("message.html", **context)


def page_size(key: str) -> int:
    return int_arg("limit", current_app.config[key], minimum=1)


def register_error_pages(app) -> None:
    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        if request.path.startswith("/api/"):
            return as_json({"error": error.name, "detail": error.description}, error.code or 500)
        return render_template("error.html", error=error), error.code

    @app.errorhandler(Exception)
    def unexpected_error(error: Exception):
        log.exception("error serving %s", request.path)
        if request.path.startswith("/api/"):
            return as_json({"error": "Internal Server Error", "detail": "see the server log"}, 500)
        return render_template("error.html", error=None), 500
