"""The compact agent tree beside an agent's transcript: names and ordinals only.

Leaner than queries.tree_rows (no creator summaries, flags or models) and written as HTML here rather than by a
Jinja loop: every agent page carries it, and a session of hundreds of agents would otherwise cost the page more
than its transcript. Every printed value goes through security.printed, as a template's would (masked)."""

from __future__ import annotations

from markupsafe import Markup, escape

from .. import queries
from ..index import SessionIndex
from .colours import colour_class
from .render import agent_urls
from .security import printed

def outline(s: SessionIndex) -> list[dict]:
    """Every agent in reading order, parents first, with its `depth` and `closes` (queries.tree_order). The
    caller holds the session's lock."""
    agents = s.agents
    return [{"agent_id": agent_id, "name": agents[agent_id].display_name, "ordinal": agents[agent_id].ordinal,
             "entries": len(agents[agent_id].entries), "depth": depth, "closes": closes}
            for agent_id, depth, closes in queries.tree_order(s)]


def sidebar(s: SessionIndex, session_id: str, current: str) -> Markup:
    """The nested list of links, the current agent marked (aria-current). The caller holds the lock."""
    url_of = agent_urls(session_id)
    parts = ['<ul class="agent-tree">']
    for row in outline(s):
        href = escape(printed(url_of(row["agent_id"])))
        mark = ' aria-current="page"' if row["agent_id"] == current else ""
        parts.append(f'<li class="{colour_class(row["ordinal"])}"><a class="agent-name" href="{href}"{mark}>'
                     f'{escape(printed(row["name"]))}</a><ul>')
        parts.append("</ul></li>" * row["closes"])
    parts.append("</ul>")
    return Markup("".join(parts))
