"""The hook audit: deliveries a hook modified, by receiving agent, with word diffs; and its JSON twin."""

from __future__ import annotations

from flask import Blueprint, request

from viewer.reads import provenance

from . import shapes
from .asked import agent_or_404, int_arg, session_or_404, with_facets
from .render import page_or_twin

bp = Blueprint("hooks", __name__)

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
@bp.get("/api/sessions/<session_id>/hooks", endpoint="audit_json")
def audit(session_id):
    s = with_facets(session_or_404(session_id))
    return page_or_twin(s, _audit(s), shapes.Hooks, template="hooks.html", name="audit", page="hooks.audit")
