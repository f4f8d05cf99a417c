"""Compare two runs: the page and its JSON twin GET /api/compare (reads/compare.py builds the data).

?a= and ?b= name the sessions; ?a_agent=/?b_agent= narrow a side to one agent's subtree and ?a_at=/?b_at= freeze it
as of event N, so one session can be compared with itself at two points. Without both sessions the page offers a
choice of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import Blueprint, abort, current_app, render_template, request, url_for

from viewer.reads.asof import snapshot

from . import shapes
from .asked import agent_or_404, locate, whole_number
from .render import as_json, built, session_rows, wants_json
from .search_views import target
from .state import library, state

if TYPE_CHECKING:
    from viewer.reads.compare import Run

bp = Blueprint("compare", __name__)
ARGS = ("a", "b", "a_agent", "b_agent", "a_at", "b_at")


def _run(side: str) -> Run:
    from viewer.reads.compare import Run  # imported when two runs are first compared, not at every start

    session_id = request.args.get(side, "")
    s = locate(session_id).session
    if s is None:
        abort(404, f"There is no session {session_id!r} to compare (it may have been moved or deleted).")
    at = request.args.get(f"{side}_at")
    if at is not None:
        n = whole_number(at)
        if n is None:
            abort(400, f"?{side}_at= takes a whole number of events.")
        s = snapshot(s, n, state().snapshots)
    agent_id = request.args.get(f"{side}_agent") or None
    if agent_id is not None:
        agent_or_404(s, agent_id)
    return Run(s, agent_id)


def _with_urls(data: dict, a: Run, b: Run) -> None:
    """Each entry shown gets the URL of its place on its agent's page (frozen as its run is)."""
    size = current_app.config["AGENT_PAGE_SIZE"]

    def link(run: Run, entry: dict | None) -> None:
        if entry is None:
            return
        s = run.session
        with s.lock:
            where = target(s, entry["position"], size)
        at = getattr(s, "as_of", None)
        entry["url"] = url_for("pages.agent", session_id=s.id, agent_id=where.get("agent_id", entry["agent_id"]),
                               start=where.get("start") or None, at=at, _anchor=where.get("anchor"))

    for pair in data["pairs"]:
        for hunk in pair["hunks"]:
            for entry in hunk.get("a", ()):
                link(a, entry)
            for entry in hunk.get("b", ()):
                link(b, entry)
            link(a, hunk.get("a_first"))
            link(b, hunk.get("b_first"))
    first = data["first_divergence"]
    if first is not None:
        link(a, first["a_entry"])
        link(b, first["b_entry"])


@bp.get("/compare")
@bp.get("/api/compare", endpoint="compare_json")
def comparison():
    args = {name: request.args[name] for name in ARGS if request.args.get(name)}
    if "a" not in args or "b" not in args:
        if wants_json():
            abort(400, "Compare takes two sessions: ?a=ID&b=ID (and optionally a_agent, b_agent, a_at, b_at).")
        folder = library()
        rows = sorted(session_rows(folder, folder.listing()), key=lambda row: row["updated_at"] or 0, reverse=True)
        return render_template("compare.html", data=None, sessions=rows, chosen=args)
    from viewer.reads.compare import compare  # as in _run

    a, b = _run("a"), _run("b")
    data = compare(a, b)
    _with_urls(data, a, b)
    data["url"] = url_for("compare.comparison", **args)
    built(shapes.Compare, data)
    if wants_json():
        return as_json(data)
    return render_template("compare.html", data=data, sessions=None, chosen=args,
                           json_url=url_for("compare.compare_json", **args))
