""""As of event N" in requests: ?at=N on any page or JSON twin reads viewer.reads.asof's snapshot of the session,
a banner says which event that is, and every link on the page keeps ?at=N (live feeds excepted)."""

from __future__ import annotations

from flask import abort, g, has_request_context, request, url_for

from viewer.index.session_index import SessionIndex
from viewer.reads.asof import snapshot

from .args import whole_number
from .endpoints import NO_AT_ENDPOINTS
from .state import state


def requested() -> int | None:
    """The ?at= of this request: a whole number of events, or None (also when it is not a number).

    Never raises: links on an error page ask too. `for_request` answers 400 to a bad one.
    """
    if not has_request_context() or "at" not in request.args:
        return None
    n = whole_number(request.args["at"])
    return None if n is None else max(0, n)


def for_request(s: SessionIndex) -> SessionIndex:
    """The session a view should read: frozen at ?at=N when the request asks for it."""
    n = requested()
    if n is None:
        if "at" in request.args:
            abort(400, "?at= takes a whole number of events.")
        return s
    frozen = snapshot(s, n, state().snapshots)
    g.as_of_session = frozen
    return frozen


def banner() -> dict | None:
    """What the as-of banner shows: event N (the last one included), and links one event back and forward."""
    frozen = g.get("as_of_session") if has_request_context() else None
    if frozen is None or request.endpoint is None:
        return None
    n, total = frozen.as_of, frozen.live_count
    last = frozen.events[n - 1] if n else None
    agent = frozen.agents.get(last["agent_id"]) if last else None
    args = {**(request.view_args or {}), **request.args.to_dict()}

    def at(value: int | None) -> str:
        return url_for(request.endpoint, **{**args, "at": value})

    return {
        "at": n, "total": total,
        "event": None if last is None else {
            "message_id": last["message_id"], "kind": last.get("event_type"), "role": last.get("role"),
            "agent_id": last["agent_id"], "agent_name": agent.display_name if agent else last["agent_id"],
        },
        "prev": at(n - 1) if n > 0 else None,
        "next": at(n + 1) if n < total else None,
        "live": at(None),
    }


def inject_at(endpoint: str, values: dict) -> None:
    """url_defaults: links on a page frozen at N stay at N (pass at=None to leave)."""
    if endpoint in NO_AT_ENDPOINTS or "at" in values or not has_request_context() or "at" not in request.args:
        return
    n = requested()
    if n is not None:
        values["at"] = n
