"""What a request asks for: its query string's numbers, cursors, flags and agent lists (or a clear 400); the
moment `?at=N` freezes its session at (viewer.reads.asof's snapshot: a banner says which event that is, and every
link on the page keeps ?at=N, live feeds excepted); and the session, agent or message its URL names (or a 404).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from flask import abort, g, has_request_context, redirect, request, url_for
from werkzeug.exceptions import HTTPException, NotFound, ServiceUnavailable

from viewer.core import cursor
from viewer.index import failed
from viewer.index.session_index import SessionIndex
from viewer.reads.asof import snapshot
from viewer.reads.filters import is_on
from viewer.search.cursor_names import NAME as CURSOR_NAME

from .endpoints import NO_AT_ENDPOINTS
from .state import library, state


# --- the query string -------------------------------------------------------------------------------

# Every number a query string carries (a position, a count, a page size, an event number, a
# cursor's parts) has at most this many digits: more than any log holds, fewer than would overflow
# an index or a JSON reader, so a 4,000-digit ?start= is a clear 400, never a 500 further on.
MAX_DIGITS = cursor.MAX_DIGITS
_WHOLE = re.compile(rf"\s*(-?)0*([0-9]{{1,{MAX_DIGITS}}})\s*")
_POSITION_CURSOR = cursor.PATTERN  # epoch-count, as pages are given
_SESSION_CURSOR = re.compile(rf"{_POSITION_CURSOR.pattern}|0+")  # a search cursor's part: 0 is that session's start
NOT_A_NUMBER = f"takes a whole number (at most {MAX_DIGITS} digits)"


def whole_number(text: str) -> int | None:
    """The whole number a query parameter's text holds, or None when it is not one (or is too long)."""
    match = _WHOLE.fullmatch(text)
    return None if match is None else int(match.group(1) + match.group(2))


def int_arg(name: str, default: int = 0, minimum: int = 0) -> int:
    """?name=N as a whole number no lower than `minimum`; 400 when it is not one."""
    if name not in request.args:
        return max(minimum, default)
    value = whole_number(request.args[name])
    if value is None:
        abort(400, f"?{name}= {NOT_A_NUMBER}.")
    return max(minimum, value)


_START = re.compile(r"\s*0+\s*")  # ?after=0: what clients of the API's first cursors (whole numbers) start with


def cursor_arg(name: str = "after") -> str | None:
    """A live feed's cursor (`epoch-count`, as the server gave it); 0, empty or absent: from the start (None)."""
    value = request.args.get(name)
    if not value or _START.fullmatch(value):
        return None
    if not _POSITION_CURSOR.fullmatch(value):
        abort(400, f"?{name}= takes a cursor this server gave (two whole numbers: epoch-count), or 0: from the start.")
    return value


def search_cursor_arg(name: str, per_session: re.Pattern | None = None) -> str | None:
    """A search cursor: `session=value` parts, comma-separated; each value a position (`from`) or,
    with `per_session`, a cursor matching it (`after`). 400 when a part is malformed."""
    value = request.args.get(name)
    for part in (value or "").split(","):
        _, _, number = part.rpartition("=")
        if part and not ((per_session or _WHOLE).fullmatch(number)):
            value_is = "epoch-count, or 0: from the start" if per_session else "position"
            abort(400, f"?{name}= takes a cursor this server gave (session={value_is}, comma-separated).")
    return value


def search_after_arg() -> str | None:
    """The search poll's cursor (`session=epoch-count`, comma-separated, or the name an answer gave a long one);
    0, empty or absent: from the start."""
    given = request.args.get("after") or "0"
    if _START.fullmatch(given):
        return None
    if CURSOR_NAME.fullmatch(given):
        return given
    return search_cursor_arg("after", _SESSION_CURSOR)


def flag_arg(name: str) -> bool:
    return is_on(request.args.get(name))


def ended(s) -> int:
    """What a poll's URL carries as ?ended=: 1 once the session has ended (failed.finished), else 0. An end comes
    with no event, after an hour of quiet: its sub-agents still running stop, its calls left unanswered fail."""
    return 1 if failed.finished(s) else 0


def ended_since(s) -> bool:
    """Whether the session ended after the page polling was drawn (?ended=0): its rail's statuses and failures are
    swapped in anew (tree_outline.changed_sums)."""
    return request.args.get("ended") == "0" and failed.finished(s)


def agent_list_arg() -> list[str]:
    """`?agents=a,b` or repeated `?agents=a&agents=b` (the picker form), in the order given, each once."""
    chosen: list[str] = []
    for value in request.args.getlist("agents"):
        chosen.extend(a for a in value.split(",") if a and a not in chosen)
    return chosen


# --- ?at=N: the session as of its N-th event -------------------------------------------------------

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


# --- what the URL names ----------------------------------------------------------------------------

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
        raise NotFoundYet(session, f"Session {session.name!r} has no agent {agent_id!r}")
    return agent_id


def message_or_404(session: SessionIndex, message_id: str) -> int:
    position = session.by_id.get(message_id)
    if position is None:
        raise NotFoundYet(session, f"Session {session.name!r} has no message {message_id!r}")
    return position


READ_AGAIN_AFTER = 1  # seconds: Retry-After of an answer about a session still being read


class NotFoundYet(NotFound):
    """What a session does not hold: a 404, or while its files are still being read (a link opened in the first
    seconds after a start, a big file read on) a 503 with Retry-After, whose page waits and then opens it. Raised
    under the session's lock, decided by the error handler (`answered`), outside it: the library's lock comes first."""

    def __init__(self, session: SessionIndex, missing: str):
        super().__init__(f"{missing}.")
        self.path, self.missing, self.session_id = session.path, missing, session.id

    def answered(self) -> HTTPException:
        if library().progress_of(self.path) is None:
            return self
        waiting = ServiceUnavailable(f"{self.missing} yet: its files are still being read.", retry_after=READ_AGAIN_AFTER)
        waiting.session_id = self.session_id  # the page links to what is read so far
        return waiting


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
