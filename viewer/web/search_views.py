"""Search: the results page, its live fragment, and the JSON twin GET /api/search."""

from __future__ import annotations

from bisect import bisect_left
from itertools import groupby

from flask import Blueprint, Response, current_app, render_template, request, url_for

from viewer.core import model
from viewer.search import query as search

from . import shapes
from .asked import int_arg, search_after_arg, search_cursor_arg
from .render import as_json, built, session_row
from .state import library, state

bp = Blueprint("search", __name__)
MAX_LIMIT = 500


def _shown_position(s, position: int) -> int:
    """Where an entry appears in its agent's perspective: a paired tool result shows under its call."""
    if model.is_tool_result(s.events[position]):
        call_position = s.call_position_for_result(position)
        if call_position is not None:
            return call_position
    return position


def target(s, position: int, page_size: int) -> dict:
    """Where a hit is shown: its agent page (the page of `page_size` holding it), the tree (at the agent's
    node, whose DOM id tree_rows.py writes), or the message. Callers hold the session lock."""
    event = s.events[position]
    agent = s.agents.get(event["agent_id"])
    if model.is_transcript_entry(event) and agent is not None:
        i = bisect_left(agent.entries, _shown_position(s, position))
        return {"page": "agent", "agent_id": agent.agent_id, "start": i // page_size * page_size,
                "anchor": event["message_id"]}
    if event["event_type"] == model.AGENT_CREATED and agent is not None and agent.created_position == position:
        return {"page": "tree", "agent_id": agent.agent_id, "anchor": f"av-node-{agent.ordinal}"}
    return {"page": "message", "message_id": event["message_id"]}


def place(hits: list[dict], cursors: str) -> None:
    """Each hit's target and url. `cursors` (the answer's) says which reading of each session the hits
    came from: a session replaced or gone since then links its hits to their message pages."""
    page_size = current_app.config["AGENT_PAGE_SIZE"]
    for session_id, same_session in groupby(hits, key=lambda h: h["session"]):
        s = library().get(session_id)
        if s is None:
            for hit in same_session:
                hit["target"] = {"page": "message", "message_id": hit["message_id"]}
            continue
        with s.lock:
            current = s.position_after(search.cursor_of(cursors, session_id)) is not None  # same reading: positions hold
            for hit in same_session:
                hit["target"] = (target(s, hit["position"], page_size) if current
                                 else {"page": "message", "message_id": hit["message_id"]})
    for hit in hits:
        hit["url"] = hit_url(hit)


def grouped(hits: list[dict]) -> list[dict]:
    """One row per distinct message: the deliveries of one substance (its `heard` copies) join the row of the
    message they deliver, which says who said it and to whom it was delivered. Rows keep the order of their
    first hit; a row's hit is the original when it is among the hits, else its first delivery."""
    rows: dict[tuple[str, str], dict] = {}
    for session_id, same_session in groupby(hits, key=lambda h: h["session"]):
        same_session = list(same_session)
        s = library().get(session_id)
        origins: dict[int, tuple[str, str | None]] = {}  # position -> (substance, who said it)
        if s is not None:
            with s.lock:
                for h in same_session:
                    event = s.events[h["position"]] if h["position"] < s.count else None
                    if event is None or not model.is_delivery(event) or event["substance"] not in s.by_id:
                        continue
                    original = s.events[s.by_id[event["substance"]]]
                    speaker = s.agents.get(original["agent_id"])
                    origins[h["position"]] = (event["substance"], speaker.display_name if speaker else None)
        for h in same_session:
            substance, speaker = origins.get(h["position"], (None, None))
            key = (session_id, substance or h["message_id"])
            row = rows.setdefault(key, {"hit": h, "said_by": None, "delivered_to": [], "hits": 0})
            row["hits"] += 1
            if substance is None:
                row["hit"], row["said_by"] = h, h["agent_name"]
            else:
                row["said_by"] = row["said_by"] or speaker
                if h["agent_name"] not in row["delivered_to"]:
                    row["delivered_to"].append(h["agent_name"])
    return list(rows.values())


def hit_url(hit: dict) -> str:
    """The page a hit is shown on, at its anchor (the agent page of the 200 entries holding it)."""
    where = hit["target"]
    if where["page"] == "agent":
        return url_for("pages.agent", session_id=hit["session"], agent_id=where["agent_id"],
                       start=where["start"] or None, _anchor=where["anchor"])
    if where["page"] == "tree":
        return url_for("pages.session", session_id=hit["session"], _anchor=where["anchor"])
    return url_for("pages.message", session_id=hit["session"], message_id=where["message_id"])


def _args() -> tuple[str, str | None]:
    return request.args.get("q", ""), request.args.get("session") or None


def _results() -> dict:
    """One page of hits for the request's ?q=&session=&from=&limit=, each with its url, and the "total": how
    many hits in all (see search_count.Tally)."""
    q, session_id = _args()
    limit = min(int_arg("limit", 50, minimum=1), MAX_LIMIT)
    sessions = library()
    version = sessions.version  # read before it lists: a change meanwhile is looked at by the next search
    data = search.search(sessions.listing(), q, session_id, search_cursor_arg("from"), limit,
                         count_budget=current_app.config["SEARCH_COUNT_BUDGET"], counts=state().runtime.counts,
                         folder_words=sessions.folder_words, version=version)
    place(data["hits"], data["cursor"])
    data["cursor"] = state().runtime.cursor_names.name(data["cursor"])
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
                           rows=grouped(data["hits"]), total=data["total"], unclosed=search.unclosed_quote(q),
                           first_page=not request.args.get("from"), version=version,
                           poll=_poll_url(q, session_id, data["cursor"], _polled_version(version, data)))


def _polled_version(version: int, data: dict):
    """What the next poll compares with the folder's version: nothing it can equal while a session searched is
    indexed only in part (the poll must search what the index took in meanwhile, though no file changed)."""
    return "indexing" if data.get("partial") else version


@bp.get("/search/poll")
def poll():
    served = library()
    version = served.version
    if request.args.get("v") == str(version):  # no file changed anywhere: the cheap common case
        return Response(status=204)
    q, session_id = _args()
    after = state().runtime.cursor_names.cursor(search_after_arg() or "")
    if after is None:  # a cursor's name no longer kept: how far the page got is unknown, start again
        return Response(status=200, headers={"HX-Refresh": "true"})
    data = search.updates(served.listing(), q, session_id, after)
    if data is None:
        return Response(status=204)
    if data["reset"]:  # a file was replaced: its old hits are wrong, start again
        return Response(status=200, headers={"HX-Refresh": "true"})
    place(data["hits"], data["cursor"])
    data["cursor"] = state().runtime.cursor_names.name(data["cursor"])
    return render_template("_search_poll.html", hits=data["hits"], search_q=q, session_id=session_id,
                           poll=_poll_url(q, session_id, data["cursor"], _polled_version(version, data)))


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
    return as_json(built(shapes.Search, {"query": data["query"], "parsed": data["parsed"], "results": results,
                                         "next": data["next_url"], "cursor": data["cursor"], "total": data["total"],
                                         "partial": data["partial"]}))
