"""Exports of a session (Markdown, the seed-004 trace, GraphViz DOT, normalized JSON, a shared HTML file) as downloads."""

from __future__ import annotations

from flask import Blueprint, Response, abort, request

from viewer.core.redact import ACTIVE

from .asked import agent_list_arg, agent_or_404, flag_arg, session_or_404, with_facets

bp = Blueprint("exports", __name__)


@bp.get("/s/<session_id>/export/<fmt>")
def export(session_id, fmt):
    from viewer.export import text as exports  # imported when a download is first asked for, not at every start

    s = with_facets(session_or_404(session_id))
    if fmt not in exports.FORMATS:
        abort(404, f"There is no {fmt!r} export; try one of {', '.join(exports.FORMATS)}.")
    try:
        text = exports.export(s, fmt, request.args.get("agent") or None, agent_list_arg(), flag_arg("sub"))
    except exports.ExportError as error:
        abort(400, error.page)
    return Response(text, content_type=exports.MEDIA_TYPES[fmt])


@bp.get("/s/<session_id>/share.html")
def share(session_id):
    """The file `agentview share` writes, masked as this page is (?agent=: it opens on that perspective), sent as it
    is made: a part of the session's events at a time."""
    from viewer.share.page import share_pieces  # as `export`'s

    s = session_or_404(session_id)
    agent = request.args.get("agent") or None
    if agent is not None:
        agent_or_404(s, agent)
    pieces = share_pieces(s, agent, redact_secrets=ACTIVE.get())
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in s.id)[:120] or "session"
    return Response(pieces, content_type="text/html; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}.html"'})
