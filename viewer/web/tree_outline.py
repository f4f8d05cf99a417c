"""The compact agent tree beside an agent's transcript: names and ordinals only.

Leaner than queries.tree_rows (no creator summaries, flags or models) and written as HTML here rather than by a
Jinja loop: every agent page carries it, and a session of hundreds of agents would otherwise cost the page more
than its transcript. Every printed value goes through security.printed, as a template's would (masked)."""

from __future__ import annotations

from urllib.parse import quote

from flask import url_for
from markupsafe import Markup, escape

from ..index import SessionIndex
from .colours import colour_class
from .security import printed

SLOT = "~agent~"  # where the agent's id goes in the one url_for (which keeps ?at=N and the session's id)


def outline(s: SessionIndex) -> list[dict]:
    """Every agent in reading order, parents first, with its `depth` and `closes` (how many of the nodes
    open at it end after it). The caller holds the session's lock."""
    rows: list[dict] = []
    stack = [(agent_id, 0) for agent_id in reversed(list(s.roots))]
    while stack:
        agent_id, depth = stack.pop()
        agent = s.agents[agent_id]
        rows.append({"agent_id": agent_id, "name": agent.display_name, "ordinal": agent.ordinal,
                     "entries": len(agent.entries), "depth": depth})
        stack.extend((child, depth + 1) for child in reversed(agent.children))
    for row, following in zip(rows, rows[1:] + [None]):
        row["closes"] = row["depth"] + 1 - (following["depth"] if following else 0)
    return rows


def sidebar(s: SessionIndex, session_id: str, current: str) -> Markup:
    """The nested list of links, the current agent marked (aria-current). The caller holds the lock."""
    head, tail = url_for("pages.agent", session_id=session_id, agent_id=SLOT).rsplit(SLOT, 1)
    parts = ['<ul class="agent-tree">']
    for row in outline(s):
        href = escape(printed(head + quote(row["agent_id"], safe="/") + tail))
        mark = ' aria-current="page"' if row["agent_id"] == current else ""
        parts.append(f'<li class="{colour_class(row["ordinal"])}"><a class="agent-name" href="{href}"{mark}>'
                     f'{escape(printed(row["name"]))}</a><ul>')
        parts.append("</ul></li>" * row["closes"])
    parts.append("</ul>")
    return Markup("".join(parts))
