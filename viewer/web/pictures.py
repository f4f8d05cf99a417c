"""Pictures of how information flowed: the who-said-what-to-whom chart, tracing a message, the spawn
graph and an agent's breadcrumbs. Each page builds one data object (from pictures.py) and renders it, or
returns it as its JSON twin under /api."""

from __future__ import annotations

from flask import Blueprint, request, url_for

from viewer.reads import pictures, queries

from . import shapes
from .asked import agent_or_404, chosen_agents, int_arg, message_or_404, session_or_404, with_facets
from .render import as_json, built, page_or_twin

bp = Blueprint("pictures", __name__)


# --- the spawn graph and the breadcrumbs -------------------------------------------------------------

@bp.get("/s/<session_id>/spawn")
@bp.get("/api/sessions/<session_id>/spawn", endpoint="spawn_json")
def spawn(session_id):
    s = session_or_404(session_id)
    return page_or_twin(s, pictures.spawn_graph(s), shapes.Spawn, template="spawn.html", name="graph", page="pictures.spawn")


@bp.get("/api/sessions/<session_id>/lineage/<path:agent_id>")
def lineage_json(session_id, agent_id):
    s = session_or_404(session_id)
    agent_or_404(s, agent_id)
    return as_json(built(shapes.Lineage, {"agent_id": agent_id, "breadcrumbs": pictures.breadcrumbs(s, agent_id),
                                          "url": url_for("pages.agent", session_id=s.id, agent_id=agent_id)}))


# --- the who-said-what-to-whom chart, and tracing a message ------------------------------------------

def _chart_data(s) -> dict:
    """The chart window a request asks for: ?agents= (a dialog selection), ?start=, ?size=, ?trace=."""
    chosen = chosen_agents(s)
    size = int_arg("size", pictures.DEFAULT_WINDOW, minimum=1)
    traced = None
    if request.args.get("trace"):
        message_or_404(s, request.args["trace"])
        traced = pictures.trace(s, request.args["trace"])
    start = int_arg("start") if "start" in request.args or traced is None else None  # None: near the traced message
    return pictures.chart(s, start, size, chosen, traced)


@bp.get("/s/<session_id>/chart")
@bp.get("/api/sessions/<session_id>/chart", endpoint="chart_json")
def chart(session_id):
    s = with_facets(session_or_404(session_id))
    data = _chart_data(s)
    return page_or_twin(s, data, shapes.Chart, template="chart.html", name="chart", page="pictures.chart",
                        url_args=dict(agents=",".join(data["agents"]) or None, start=data["start"],
                                      size=data["size"], trace=data["trace"]),
                        context=dict(names=queries.agent_names(s)))


@bp.get("/s/<session_id>/trace/<path:message_id>")
@bp.get("/api/sessions/<session_id>/trace/<path:message_id>", endpoint="trace_json")
def trace(session_id, message_id):
    s = session_or_404(session_id)
    message_or_404(s, message_id)
    return page_or_twin(s, pictures.trace(s, message_id), shapes.Trace, template="trace.html", name="trace", page="pictures.trace",
                        url_args=dict(message_id=message_id))
