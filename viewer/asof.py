""""As of event N": a session as it was right after its N-th event (?at=N on any page or JSON twin).

The index is append-only and every rule reads positions in file order, so the state after N events is
exactly an index fed the first N events: `snapshot` builds one (cached), and `lookup.session_or_404`
hands it to every view, so the tree, each transcript, the dialog and the pictures all agree on N.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from flask import abort, g, has_request_context, request, url_for

from . import gcpause
from .index import SessionIndex

CACHE_SIZE = 16
CACHE_EVENTS = 2_000_000  # snapshots kept hold about this many events in all: each is an index of its own
# Live feeds make no sense for a frozen moment; everything else carries ?at= in its links.
NO_AT_ENDPOINTS = {"static", "pages.index", "pages.poll_sessions", "pages.poll_tree", "pages.poll_agent",
                   "pages.poll_dialog", "api.sessions", "api.events"}

_cache: OrderedDict[tuple, SessionIndex] = OrderedDict()
_cache_lock = threading.Lock()


def requested() -> int | None:
    """The ?at= of this request: a whole number of events, or None (also when it is not a number).

    Never raises: links on an error page ask too. `for_request` answers 400 to a bad one.
    """
    from .lookup import whole_number  # lookup reads ?at= through this module

    if not has_request_context() or "at" not in request.args:
        return None
    n = whole_number(request.args["at"])
    return None if n is None else max(0, n)


class Snapshot(SessionIndex):
    """A session frozen right after its first `as_of` events (of `live_count` read when it was made)."""

    def __init__(self, live: SessionIndex, as_of: int = 0, live_count: int = 0) -> None:
        super().__init__(live.id, live.path, live.relpath, live.format, live.format_reason, live.name)
        self.project, self.title, self.format_summary, self.members = (live.project, live.title,
                                                                       live.format_summary, live.members)
        self.as_of = as_of
        self.live_count = live_count


def snapshot(s: SessionIndex, n: int) -> Snapshot:
    """The session right after its first n events (n is clamped to what has been read).

    Built from the nearest cached snapshot before n when there is one (copied, then fed the events
    between), so stepping through a big session replays a few events, not all n again.
    """
    with s.lock:
        n = min(n, s.count)
        key = (s.serial, s.epoch, n)
        with _cache_lock:
            if key in _cache:
                _cache.move_to_end(key)
                return _cache[key]
            earlier = [k for k in _cache if k[:2] == key[:2] and k[2] < n]
            base = _cache[max(earlier, key=lambda k: k[2])] if earlier else None
        stored, lines = s.events.prefix(n), s.line_numbers[:n]
        last_line = lines[-1] if lines else 0
        # problems of the lines themselves are not found again by replaying events: kept for the lines covered
        parse_problems = [p for p in s.problems if p.of_line and p.line <= last_line]
        epoch, updated_at, total = s.epoch, s.updated_at, s.count
    with gcpause.batch() as counter:  # an index of its own: as many objects as the session's, kept as long
        if base is not None:
            frozen, start = base.copy(), base.as_of
        else:
            frozen, start = Snapshot(s), 0
        frozen.epoch, frozen.updated_at = epoch, updated_at
        for position in range(start, n):  # the same rules as the live ingest, event by event
            frozen.add(stored.load(position), lines[position])
        frozen.events.share(stored, start)  # lines kept as the live session keeps them, not as parsed copies
        frozen.problems = parse_problems + [p for p in frozen.problems if not p.of_line]
        counter["added"] = n - start  # a copy adds a few big containers; only a replay adds objects by the million
    frozen.as_of, frozen.live_count = n, total
    with _cache_lock:
        _cache[key] = frozen
        while len(_cache) > CACHE_SIZE or (len(_cache) > 1 and sum(k[2] for k in _cache) > CACHE_EVENTS):
            _cache.popitem(last=False)
    return frozen


def for_request(s: SessionIndex) -> SessionIndex:
    """The session a view should read: frozen at ?at=N when the request asks for it."""
    n = requested()
    if n is None:
        if "at" in request.args:
            abort(400, "?at= takes a whole number of events.")
        return s
    frozen = snapshot(s, n)
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
