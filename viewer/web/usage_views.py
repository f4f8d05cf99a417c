"""Usage across sessions: the page, its JSON twin GET /api/usage, and its live poll (reads/usage_report.py builds
the data).

?days= (7, 30, 90, 365, all) or ?from=&to= pick the days; ?project=, ?model=, ?cli= narrow to one; ?split= draws
bars by model, project or cli; ?metric= is cost or tokens. Every bar, breakdown row and filter is a link: the
sessions behind it are one click away.
"""

from __future__ import annotations

import math
from datetime import date
from typing import NamedTuple

from flask import Blueprint, Response, abort, render_template, request, url_for

from viewer.reads import costs
from viewer.reads.usage_report import DIMENSIONS, METRICS, SPANS, Ask, BadRequest, report

from . import shapes
from .render import as_json, built, session_rows, wants_json
from .state import library, state, watched_library

bp = Blueprint("usage", __name__)


class Named(NamedTuple):
    title: str  # a heading or a column's
    name: str  # within a sentence


NAMES = {"model": Named("Model", "model"), "project": Named("Project", "project"), "cli": Named("Agent CLI", "agent CLI")}
ARGS = ("days", "from", "to", "project", "model", "cli", "split", "metric")


def _asked() -> dict:
    return {name: request.args[name] for name in ARGS if request.args.get(name)}


def link(**changes) -> str:
    """This page's URL with some arguments changed (None drops one); a new window drops the other kind."""
    args = {**_asked(), **changes}
    if "days" in changes:
        args.pop("from", None), args.pop("to", None)
    if "from" in changes or "to" in changes:
        args.pop("days", None)
    return url_for("usage.usage", **{k: v for k, v in args.items() if v is not None})


def _data() -> dict:
    try:
        ask = Ask.parse(request.args)
    except BadRequest as error:
        abort(400, str(error))
    lib = watched_library()
    version = lib.version  # read first: a change while summing shows on the next poll
    listed = lib.listing()
    data = report(listed, ask, state().runtime.host.prices)
    behind = {row["id"] for row in data["sessions"]}
    rows = {row["id"]: row for row in session_rows(lib, [s for s in listed if s.id in behind])}
    for row in data["sessions"]:
        shown = rows[row["id"]]
        row.update(title=shown["title"], name=shown["name"], path=shown["path"], url=shown["url"],
                   started_at=shown["started_at"], active_at=shown["active_at"])
    data["version"] = version
    data["url"] = url_for("usage.usage", **_asked())
    return data


@bp.get("/usage")
@bp.get("/api/usage", endpoint="usage_json")
def usage():
    data = built(shapes.Usage, _data())
    if wants_json():
        return as_json(data)
    return render_template("usage.html", usage=data, **_context(data))


@bp.get("/poll/usage")
def poll():
    """The report again once anything in the folder changed since ?v= (204 until then: an empty poll's cost)."""
    if request.args.get("v") == str(library().version):
        return Response(status=204)
    data = built(shapes.Usage, _data())
    return render_template("_usage_report.html", usage=data, **_context(data))


def _context(data: dict) -> dict:
    top, ticks = scale(data["peak"])
    return dict(link=link, compact=compact, amount=lambda v: costs.usd(v) if data["metric"] == "cost" else compact(v),
                dayname=dayname, chosen=[d for d in DIMENSIONS if data["filters"][d]],
                dimensions=NAMES, metrics=METRICS, spans=SPANS, top=top, ticks=ticks,
                labels=_labels(data["bars"], data["window"]["bucket"]),
                json_url=url_for("usage.usage_json", **_asked()),
                poll_url=url_for("usage.poll", v=data["version"], **_asked()))


def scale(peak: float) -> tuple[float, list[float]]:
    """The chart's top and its gridlines: 1, 2 or 5 times a power of ten, three or four lines up to the peak."""
    if peak <= 0:
        return 1.0, []
    step = 10 ** math.floor(math.log10(peak / 3))
    for factor in (1, 2, 5, 10):
        if peak / (step * factor) <= 4:
            step *= factor
            break
    top = step * math.ceil(peak / step)
    return top, [step * i for i in range(1, round(top / step) + 1)]


def compact(value: float) -> str:
    """A count as people read it at a glance: 950, 12.3k, 4.1M, 2.0B."""
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.1f}{suffix}"
    return f"{value:,.0f}"


def dayname(day: str) -> str:
    """An ISO date as people say it: "Nov 3, 2026"."""
    return date.fromisoformat(day).strftime("%b %-d, %Y")


def _labels(bars: list[dict], bucket: str) -> list[str | None]:
    """Each bar's label under the chart, or None: at most eight, evenly spaced, so none overlap on a phone."""
    step = max(1, math.ceil(len(bars) / 8))
    shown = "%b %Y" if bucket == "month" else "%b %-d"
    return [date.fromisoformat(bar["from"]).strftime(shown) if i % step == 0 else None for i, bar in enumerate(bars)]
