"""Search: the results page, its live fragment, and the JSON twin GET /api/search."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, render_template, request, url_for

from .. import search
from .args import int_arg, search_after_arg, search_cursor_arg
from .render import as_json, session_row
from .state import library

bp = Blueprint("search", __name__)
MAX_LIMIT = 500


def hit_url(hit: dict) -> str:
    """The page a hit is shown on, at its anchor (the agent page of the 200 entries holding it)."""
    target = hit["target"]
    if target["page"] == "agent":
        return url_for("pages.agent", session_id=hit["session"], agent_id=target["agent_id"],
                       start=target["start"] or None, _anchor=target["anchor"])
    if target["page"] == "tree":
        return url_for("pages.session", session_id=hit["session"], _anchor=target["anchor"])
    return url_for("pages.message", session_id=hit["session"], message_id=target["message_id"])


def _args() -> tuple[str, str | None]:
    return request.args.get("q", ""), request.args.get("session") or None


def _results() -> dict:
    """One page of hits for the request's ?q=&session=&from=&limit=, each with its url."""
    q, session_id = _args()
    limit = min(int_arg("limit", 50, minimum=1), MAX_LIMIT)
    data = search.search(library().listing(), q, session_id, search_cursor_arg("from"), limit,
                         current_app.config["AGENT_PAGE_SIZE"])
    for hit in data["hits"]:
        hit["url"] = hit_url(hit)
    data["next_url"] = (url_for(request.endpoint, q=q, session=session_id, limit=request.args.get("limit"),
                                **{"from": data["next"]}) if data["next"] else None)
    return data


def _scope(session_id: str | None) -> dict | None:
    s = library().get(session_id) if session_id else None
    return session_row(s) if s else None


def _poll_url(q: str, session_id: str | None, cursor: str, version) -> str:
    """The live fragment of these results: hits after `cursor`, once the folder's `version` changed."""
    return url_for("search.poll", q=q, session=session_id, after=cursor, v=version)


@bp.get("/search")
def page():
    version = library().version  # read first: a change during the search shows up on the next poll
    data = _results()
    q, session_id = _args()
    scope = _scope(session_id)
    return render_template("search.html", result=data, search_q=q, session=scope, session_id=session_id,
                           first_page=not request.args.get("from"), version=version,
                           poll=_poll_url(q, session_id, data["cursor"], version))


@bp.get("/search/poll")
def poll():
    served = library()
    version = served.version
    if request.args.get("v") == str(version):  # no file changed anywhere: the cheap common case
        return Response(status=204)
    q, session_id = _args()
    data = search.updates(served.listing(), q, session_id, search_after_arg() or "",
                          page_size=current_app.config["AGENT_PAGE_SIZE"])
    if data is None:
        return Response(status=204)
    if data["reset"]:  # a file was replaced: its old hits are wrong, start again
        return Response(status=200, headers={"HX-Refresh": "true"})
    for hit in data["hits"]:
        hit["url"] = hit_url(hit)
    return render_template("_search_poll.html", hits=data["hits"], search_q=q, session_id=session_id,
                           poll=_poll_url(q, session_id, data["cursor"], version))


def _marks(pieces) -> list[list[int]]:
    """[start, end) of each highlighted piece within the joined snippet."""
    out, at = [], 0
    for text, marked in pieces:
        if marked:
            out.append([at, at + len(text)])
        at += len(text)
    return out


@bp.get("/api/search")
def api():
    data = _results()
    results = [{"session": h["session"], "agent_id": h["agent_id"], "message_id": h["message_id"],
                "role": h["role"], "snippet": h["snippet"], "url": h["url"],
                "kind": h["kind"], "agent_name": h["agent_name"], "highlights": _marks(h["pieces"])}
               for h in data["hits"]]
    return as_json({"query": data["query"], "parsed": data["parsed"], "results": results,
                    "next": data["next_url"], "cursor": data["cursor"]})
