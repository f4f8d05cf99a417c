"""The timeline: a lane per agent, each model call, tool call and wait a bar (reads/timeline.py); its JSON twin,
its live fragment (204 while nothing is new) and the link from a bar to its entry."""

from __future__ import annotations

import math

from flask import Blueprint, abort, current_app, redirect, render_template, request, url_for
from markupsafe import Markup, escape

from viewer.reads import timeline as timelines

from . import shapes
from .asked import int_arg, session_or_404, with_facets
from .polling import answered_on, poll_session
from .render import built, page_or_twin, session_row
from .search_views import target

bp = Blueprint("timeline", __name__)
answered_on(bp)
BAR_ROWS = {"model": (3, 6), "tool": (11, 6), "wait": (8, 4)}  # each kind's y and height in its 20 px lane


def length_text(value: float, axis: str) -> str:
    """A call's length as people say it: "3.2 s", "4 min 10 s", "1 h 5 min"; or a number of events."""
    if axis != timelines.TIME:
        return f"{int(value)} events"
    if value < 60:
        return f"{value:.3g} s"
    if value < 3600:
        return f"{int(value // 60)} min {int(value % 60)} s"
    return f"{int(value // 3600)} h {int((value % 3600) // 60)} min"


def lane_marks(lane: dict, timeline: dict, bar_url: str) -> Markup:
    """A lane's bars as SVG, each a link to its entry with its title: written here rather than in the template,
    as a lane of a long session holds hundreds (only numbers and the escaped lane name go in)."""
    name, scale, axis = escape(lane["name"]), 100 / timeline["width"], timeline["axis"]
    out = []
    for bar in lane["bars"]:
        y, height = BAR_ROWS[bar["kind"]]
        noun = "wait" if bar["kind"] == "wait" else f"{bar['kind']} call"
        failed = f", {bar['failed']} failed" if bar["failed"] else ""
        out.append(f'<a href="{bar_url}{bar["position"]}"><rect class="bar {bar["kind"]}'
                   f'{" failed" if bar["failed"] else ""}" x="{bar["x"] * scale:.3f}%" '
                   f'width="{max(bar["w"] * scale, 0.15):.3f}%" y="{y}" height="{height}"><title>{name}: '
                   f'{bar["count"]} {noun}{"s" if bar["count"] != 1 else ""}{failed}; longest '
                   f'{length_text(bar["longest"], axis)}</title></rect></a>')
    return Markup("".join(out))


def _bound(name: str) -> float | None:
    """?start= or ?end=: a place on the axis (seconds since the epoch, or an event's number)."""
    text = request.args.get(name)
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        abort(400, f"?{name}= takes a number (a place on the timeline's axis).")
    if not math.isfinite(value):
        abort(400, f"?{name}= takes a finite number.")
    return value


def _data(s) -> dict:
    data = timelines.timeline(with_facets(s), _bound("start"), _bound("end"),
                              int_arg("width", timelines.WIDTH, minimum=10), int_arg("lanes"),
                              int_arg("lanes_shown", timelines.LANES, minimum=1))
    data["cursor"] = s.cursor
    return data


def _range_args() -> dict:
    """What a page's links keep: the range drawn and the first lane."""
    return {name: request.args.get(name) or None for name in ("start", "end", "lanes")}


def _zoom(s, data: dict) -> dict:
    """The links that move the drawn range: in, out, earlier, later, the whole session."""
    low, high, first, last = data["start"], data["end"], data["first"], data["last"]
    span = max(high - low, 1e-9)
    middle = (low + high) / 2

    def link(start: float, end: float) -> str | None:
        start, end = max(first, start), min(last, end)
        if (start, end) == (low, high) or end <= start:
            return None
        whole = start <= first and end >= last
        return url_for("timeline.timeline", session_id=s.id, start=None if whole else round(start, 3),
                       end=None if whole else round(end, 3), lanes=request.args.get("lanes") or None)

    return {"in": link(middle - span / 4, middle + span / 4), "out": link(middle - span, middle + span),
            "earlier": link(low - span / 2, high - span / 2), "later": link(low + span / 2, high + span / 2),
            "whole": link(first, last)}


@bp.get("/s/<session_id>/timeline")
@bp.get("/api/sessions/<session_id>/timeline", endpoint="timeline_json")
def timeline(session_id):
    s = session_or_404(session_id)
    data = _data(s)
    range_args = _range_args()
    return page_or_twin(s, data, shapes.Timeline, template="timeline.html", name="timeline",
                        page="timeline.timeline", url_args=range_args,
                        context=dict(zoom=_zoom(s, data), marks=lane_marks, length=length_text,
                                     poll=url_for("timeline.poll", session_id=s.id, after=data["cursor"],
                                                  **range_args)))


@bp.get("/s/<session_id>/poll/timeline")
def poll(session_id):
    """The chart again once the session has grown past ?after= (204 until then: what any empty poll costs)."""
    s, _ = poll_session(session_id)  # gone, moved, read again or nothing new: answered as every poll is
    data = built(shapes.Timeline, {"id": s.id, **_data(s), "url": url_for("timeline.timeline", session_id=s.id)})
    range_args = _range_args()
    return render_template("_timeline_chart.html", timeline=data, session=session_row(s), zoom=_zoom(s, data),
                           marks=lane_marks, length=length_text,
                           poll=url_for("timeline.poll", session_id=s.id, after=data["cursor"], **range_args))


@bp.get("/s/<session_id>/timeline/at/<int:position>")
def entry(session_id, position):
    """A bar's entry: its place on its agent's page (bars name positions, so drawing them reads no event)."""
    s = session_or_404(session_id)
    with s.lock:
        if not 0 <= position < s.count:
            abort(404, f"Session {s.name!r} has no event {position}.")
        where = target(s, position, current_app.config["AGENT_PAGE_SIZE"])
    if where["page"] == "agent":
        return redirect(url_for("pages.agent", session_id=s.id, agent_id=where["agent_id"],
                                start=where["start"] or None, _anchor=where["anchor"]))
    return redirect(url_for("pages.session", session_id=s.id, _anchor=where.get("anchor")))
