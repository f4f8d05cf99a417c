"""The compact agent tree beside an agent's transcript: names, ordinals and entry counts only.

Leaner than queries.tree_rows (no creator summaries, flags or models), as a page that is re-rendered on every
visit of every agent reads it; nested by a flat loop in templates/_tree_node.html (agent_tree)."""

from __future__ import annotations

from ..index import SessionIndex


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
