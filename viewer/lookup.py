"""Request helpers shared by the pages and the JSON API: find things or answer 404."""

from __future__ import annotations

from flask import abort, redirect, request, url_for

from . import asof
from .app import state
from .index import SessionIndex


def session_or_404(session_id: str) -> SessionIndex:
    """The session, a redirect to its new id when its file was renamed, or 404."""
    library = state().library
    session = library.get(session_id)
    if session is None:
        renamed = library.resolve(session_id)
        if renamed is not None:
            view_args = dict(request.view_args or {}, session_id=renamed)
            abort(redirect(url_for(request.endpoint, **view_args, **request.args.to_dict(flat=False))))
        abort(404, f"There is no session {session_id!r} (it may have been moved or deleted).")
    return asof.for_request(session)  # ?at=N: the session right after its N-th event


def agent_or_404(session: SessionIndex, agent_id: str) -> str:
    if agent_id not in session.agents:
        abort(404, f"Session {session.name!r} has no agent {agent_id!r}.")
    return agent_id


def message_or_404(session: SessionIndex, message_id: str) -> int:
    position = session.by_id.get(message_id)
    if position is None:
        abort(404, f"Session {session.name!r} has no message {message_id!r}.")
    return position


def agent_list_arg() -> list[str]:
    """`?agents=a,b` or repeated `?agents=a&agents=b` (the picker form), in the order given, each once."""
    chosen: list[str] = []
    for value in request.args.getlist("agents"):
        chosen.extend(a for a in value.split(",") if a and a not in chosen)
    return chosen


def chosen_agents(session: SessionIndex) -> list[str]:
    """The agents a dialog asks for; 404 when one is not in the session."""
    chosen = agent_list_arg()
    for agent_id in chosen:
        agent_or_404(session, agent_id)
    return chosen


def int_arg(name: str, default: int = 0, minimum: int = 0) -> int:
    try:
        return max(minimum, int(request.args.get(name, default)))
    except ValueError:
        abort(400, f"?{name}= takes a whole number.")


def is_on(value: str | None) -> bool:
    """Whether a query-string flag's value turns it on (`?sub=1`, `?modified=yes`...)."""
    return value in ("1", "true", "yes", "on")


def flag_arg(name: str) -> bool:
    return is_on(request.args.get(name))
