"""One colour per agent, the same on every page: chosen by the agent's ordinal (its order of appearance in the
session), as a CSS class `agent-cN` whose custom property --agent the stylesheets use (no inline styles: CSP)."""

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
