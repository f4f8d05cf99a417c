"""One colour per agent, the same on every page: chosen by the agent's ordinal (its order of appearance in the
session), as a CSS class `agent-cN` whose custom property --agent the stylesheets use (no inline styles: CSP);
and, in a transcript that interleaves sub-agents, each entry's indent by its agent's depth below the page's."""

from __future__ import annotations

from .state import library

PALETTE_SIZE = 10  # --agent-0 ... --agent-9 in static/agentview.css


def colour_class(ordinal: int | None) -> str:
    """The class of the agent with this ordinal ("" when it is not known)."""
    return "" if ordinal is None else f"agent-c{ordinal % PALETTE_SIZE}"


def agent_colour(session_id: str, agent_id: str) -> str:
    """The class of an agent named by its session and id, for templates that have only the ids."""
    s = library().get(session_id)
    agent = s.agents.get(agent_id) if s is not None else None
    return colour_class(agent.ordinal if agent is not None else None)


MAX_INDENT = 6  # depth-1 ... depth-6 in static/agentview.css; deeper agents indent as far as the sixth


def indent_class(session_id: str, agent_id: str, top: str | None) -> str:
    """`depth-N`: how many levels below `top` (the page's agent) `agent_id` sits ("" at the top or unknown)."""
    s = library().get(session_id)
    if s is None or top is None:
        return ""
    depth, current = 0, s.agents.get(agent_id)
    while current is not None and current.agent_id != top and depth <= len(s.agents):
        depth += 1
        current = s.agents.get(current.parent_id) if current.parent_id is not None else None
    return f"depth-{min(depth, MAX_INDENT)}" if current is not None and depth else ""
