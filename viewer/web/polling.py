"""The one rule every live fragment's poll starts with: the session gone, moved or read again, or nothing new.

A poll calls poll_session(); when the answer is known before any fragment is built it raises PollEnds, whose
response a blueprint answers with once it has registered `answer` for it (answered_on)."""

from __future__ import annotations

from flask import Blueprint, Response, render_template, request

from .asked import cursor_arg, ended_since, int_arg, locate
from .state import library


class PollEnds(Exception):
    """A poll answered before any fragment is built; carries the response."""

    def __init__(self, response: Response):
        self.response = response


def poll_session(session_id: str):
    """The session and the position a poll asks after; raises PollEnds when the answer is already known.

    Gone: 286 (htmx stops polling) with a banner, swapped in out of band while the page keeps what it shows
    (HX-Reswap: none; a poller that targets a whole chart would otherwise swap it for nothing). Renamed, or a
    cursor from before the file was replaced: HX-Refresh reloads the page (a renamed session's page redirects); but
    while a resumed session is read again from its start (its epoch kept if what it held is unchanged), nothing yet.
    Nothing new: 204, the cheap common case; a page showing the session's problem count says how many it shows
    (?problems=N), and a problem found without an event (a line skipped) is news too; so is the session's end since
    a page drawn before it (?ended=0, see ended_since).
    """
    s, moved_to = locate(session_id)
    if moved_to is not None:
        raise PollEnds(Response(status=200, headers={"HX-Refresh": "true"}))
    if s is None:
        raise PollEnds(Response(render_template("_gone.html", session_id=session_id), status=286,
                                headers={"HX-Reswap": "none"}))
    after = s.position_after(cursor_arg())
    if after is None:
        if s in library().groups.reading_again:
            raise PollEnds(Response(status=204))
        # a read again may have ended between the two looks (its epoch given back before it is no longer marked)
        after = s.position_after(cursor_arg())
        if after is None:
            raise PollEnds(Response(status=200, headers={"HX-Refresh": "true"}))
    if after == s.count and ("problems" not in request.args or int_arg("problems") == len(s.problems)) and \
            not ended_since(s):
        raise PollEnds(Response(status=204))  # events only grow, so a later read under the lock still has these
    return s, after


def answered_on(bp: Blueprint) -> None:
    """Let the blueprint's polls end with PollEnds."""
    bp.register_error_handler(PollEnds, lambda stop: stop.response)
