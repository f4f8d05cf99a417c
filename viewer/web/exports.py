"""Exports of a session (Markdown, the seed-004 trace, GraphViz DOT, normalized JSON) as downloads."""

from __future__ import annotations

from flask import Blueprint, Response, abort, request

from viewer.export import text as exports

from .args import agent_list_arg, flag_arg
from .lookup import session_or_404, with_facets

bp = Blueprint("exports", __name__)


@bp.get("/s/<session_id>/export/<fmt>")
def export(session_id, fmt):
    s = with_facets(session_or_404(session_id))
    if fmt not in exports.FORMATS:
        abort(404, f"There is no {fmt!r} export; try one of {', '.join(exports.FORMATS)}.")
    try:
        text = exports.export(s, fmt, request.args.get("agent") or None, agent_list_arg(), flag_arg("sub"))
    except exports.ExportError as error:
        abort(400, error.page)
    return Response(text, content_type=exports.MEDIA_TYPES[fmt])
