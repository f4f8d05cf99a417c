"""The data object of each page whose JSON twin lives in api.py: built here once, then rendered by the page
(with what only a page needs: poll URLs, page sizes, pictures) or answered as JSON by its twin.

Callers hold the session's lock. The shapes are declared in shapes.py and documented in docs/api.md.
"""

from __future__ import annotations

from viewer.index import usage
from viewer.reads import provenance, queries

from .render import agent_urls, session_row


def session_data(s) -> dict:
    """shapes.Session: the session's row, its cursor, its agents (with their pages' URLs), problems and usage."""
    agents, url_of = queries.agents(s), agent_urls(s.id)
    for agent in agents:
        agent["url"] = url_of(agent["agent_id"])
    return {**session_row(s), "cursor": s.cursor, "agents": agents,
            "problems": [p.as_dict() for p in s.problems],
            "usage": usage.for_session(s), "format_summary": s.format_summary}


def agent_data(s, agent_id: str) -> dict:
    """What an agent's page says of the agent above its transcript (shapes.Agent less the transcript window):
    its summary, the agents it descends from, its sub-agents and its token usage."""
    agent = s.agents[agent_id]
    return {**queries.agent_summary(s, agent), "lineage": queries.lineage(s, agent_id),
            "children": [queries.agent_summary(s, s.agents[c]) for c in agent.children],
            "usage": usage.for_agent(s, agent_id)}


def message_data(s, message_id: str, position: int) -> dict:
    """shapes.Message less its URL: the event, its causality chain, what represents it, where it came from."""
    return {"event": s.events[position], "flow": queries.causality_chain(s, message_id),
            "references": queries.references(s, message_id),
            "provenance": provenance.message_provenance(s, message_id)}
