"""Finding what a request names (a session, an agent, a message) or answering 404."""

from __future__ import annotations

from typing import NamedTuple

from flask import abort, redirect, request, url_for

from viewer.index.session_index import SessionIndex

from .args import agent_list_arg
from .asof import for_request
from .state import library


class Located(NamedTuple):
    """A session id looked up: the session, or the id it was renamed to, or neither (gone)."""

    session: SessionIndex | None
    moved_to: str | None


def locate(session_id: str) -> Located:
    """The one "session, or moved, or gone" rule: pages redirect, polls reload or stop on it."""
    found = library()
    s = found.get(session_id)
    return Located(s, None if s is not None else found.resolve(session_id))


def session_or_404(session_id: str) -> SessionIndex:
    """The session, a redirect to its new id when its file was renamed, or 404."""
    s, moved_to = locate(session_id)
    if s is None:
        if moved_to is not None:
            view_args = dict(request.view_args or {}, session_id=moved_to)
            abort(redirect(url_for(request.endpoint, **view_args, **request.args.to_dict(flat=False))))
        abort(404, f"There is no session {session_id!r} (it may have been moved or deleted).")
    return for_request(s)  # ?at=N: the session right after its N-th event


def agent_or_404(session: SessionIndex, agent_id: str) -> str:
    if agent_id not in session.agents:
        abort(404, f"Session {session.name!r} has no agent {agent_id!r}.")
    return agent_id


def message_or_404(session: SessionIndex, message_id: str) -> int:
    position = session.by_id.get(message_id)
    if position is None:
        abort(404, f"Session {session.name!r} has no message {message_id!r}.")
    return position


def with_facets(session: SessionIndex) -> SessionIndex:
    """The session once its facets (tools, modified deliveries, other events per agent) hold every event read so
    far: the views that read them call it before taking the session's lock, so while a big file's facets are
    built this request waits for them, not every other request for the session (see catch_up_in_slices)."""
    session.facets.catch_up_in_slices(session.count)
    return session


def chosen_agents(session: SessionIndex) -> list[str]:
    """The agents a dialog asks for; 404 when one is not in the session."""
    chosen = agent_list_arg()
    for agent_id in chosen:
        agent_or_404(session, agent_id)
    return chosen
