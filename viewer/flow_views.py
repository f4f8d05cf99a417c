"""Pages about how information flowed: exports, provenance, the spawn graph, the chart, tracing.

Each page builds one data dict (from exports.py, provenance.py, pictures.py) and renders it or
returns it as JSON: the JSON twins live here too, under /api.
"""

from __future__ import annotations

from flask import Blueprint, Response, abort, render_template, request, url_for

from . import asof, exports, pictures, provenance, queries
from .api import as_json, session_row, twin
from .lookup import agent_list_arg, agent_or_404, chosen_agents, flag_arg, int_arg, message_or_404, session_or_404

bp = Blueprint("flow", __name__)


@bp.record_once
def _setup(setup_state) -> None:
    """What the flow templates need from the app, so app.py only registers this blueprint."""
    setup_state.app.jinja_env.filters["word_diff"] = provenance.word_diff
    setup_state.app.jinja_env.globals.update(as_of=asof.requested, as_of_banner=asof.banner)
    setup_state.app.url_defaults(asof.inject_at)


# --- exports -----------------------------------------------------------------------------------------

@bp.get("/s/<session_id>/export/<fmt>")
def export(session_id, fmt):
    s = session_or_404(session_id)
    if fmt not in exports.FORMATS:
        abort(404, f"There is no {fmt!r} export; try one of {', '.join(exports.FORMATS)}.")
    try:
        text = exports.export(s, fmt, request.args.get("agent") or None, agent_list_arg(), flag_arg("sub"))
    except exports.ExportError as error:
        abort(400, str(error))
    return Response(text, content_type=exports.MEDIA_TYPES[fmt])



# --- the hook audit: modified deliveries by receiving agent ------------------------------------------

HOOK_PAGE = 20  # diffs of one receiving agent on its audit page (?agent=)
HOOK_GROUPS, HOOK_GROUP_PAGE = 10, 5  # on the page of every agent: agents shown, and diffs of each


def _audit(s) -> dict:
    """?agent= narrows to one receiving agent; ?start= and ?limit= window each group's deliveries;
    ?from= is the first agent shown when every agent is."""
    agent_id = request.args.get("agent") or None
    if agent_id is not None:
        agent_or_404(s, agent_id)
        return provenance.hook_audit(s, agent_id, int_arg("start"), int_arg("limit", HOOK_PAGE, minimum=1))
    return provenance.hook_audit(s, None, int_arg("start"), int_arg("limit", HOOK_GROUP_PAGE, minimum=1),
                                 int_arg("from"), HOOK_GROUPS)



@bp.get("/s/<session_id>/hooks")
def hooks(session_id):
    s = session_or_404(session_id)
    return render_template("hooks.html", session=session_row(s), audit=_audit(s))


@bp.get("/api/sessions/<session_id>/hooks")
def hooks_json(session_id):
    s = session_or_404(session_id)
    return twin(s, _audit(s), "flow.hooks")


# --- the spawn graph and the breadcrumbs -------------------------------------------------------------

@bp.get("/s/<session_id>/spawn")
def spawn(session_id):
    s = session_or_404(session_id)
    return render_template("spawn.html", session=session_row(s), graph=pictures.spawn_graph(s))


@bp.get("/api/sessions/<session_id>/spawn")
def spawn_json(session_id):
    s = session_or_404(session_id)
    return twin(s, pictures.spawn_graph(s), "flow.spawn")


@bp.get("/api/sessions/<session_id>/lineage/<path:agent_id>")
def lineage_json(session_id, agent_id):
    s = session_or_404(session_id)
    agent_or_404(s, agent_id)
    return as_json({"agent_id": agent_id, "breadcrumbs": pictures.breadcrumbs(s, agent_id),
                    "url": url_for("pages.agent", session_id=s.id, agent_id=agent_id)})


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
def chart(session_id):
    s = session_or_404(session_id)
    data = _chart_data(s)
    return render_template("chart.html", session=session_row(s), chart=data, names=queries.agent_names(s))


@bp.get("/api/sessions/<session_id>/chart")
def chart_json(session_id):
    s = session_or_404(session_id)
    data = _chart_data(s)
    return twin(s, data, "flow.chart", agents=",".join(data["agents"]) or None, start=data["start"], size=data["size"],
                trace=data["trace"])


@bp.get("/s/<session_id>/trace/<path:message_id>")
def trace(session_id, message_id):
    s = session_or_404(session_id)
    message_or_404(s, message_id)
    return render_template("trace.html", session=session_row(s), trace=pictures.trace(s, message_id))


@bp.get("/api/sessions/<session_id>/trace/<path:message_id>")
def trace_json(session_id, message_id):
    s = session_or_404(session_id)
    message_or_404(s, message_id)
    return twin(s, pictures.trace(s, message_id), "flow.trace", message_id=message_id)
