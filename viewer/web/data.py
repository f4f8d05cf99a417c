"""The data object of the session, agent, dialog and message views (resource_views.py): built here once, then
rendered as the page (with what only a page needs: poll URLs, pictures) or answered as JSON.

Callers hold the session's lock. The shapes are declared in shapes.py and documented in docs/api.md.
"""

from __future__ import annotations

from flask import url_for

from viewer.index import failed, usage
from viewer.reads import causality, provenance, queries

from .render import agent_urls, session_row


def session_data(s) -> dict:
    """shapes.Session: the session's row (its failures counted with every event read so far), its cursor, its
    agents (with their pages' URLs), problems and usage."""
    agents, url_of = queries.agents(s), agent_urls(s.id)
    for agent in agents:
        agent["url"] = url_of(agent["agent_id"])
    return {**session_row(s), "failures": failed.total(s), "cursor": s.cursor, "agents": agents,
            "problems": [p.as_dict() for p in s.problems],
            "usage": usage.for_session(s), "format_summary": s.format_summary}


def agent_data(s, agent_id: str) -> dict:
    """What an agent's page says of the agent above its transcript (shapes.Agent less the transcript window):
    its summary, the agents it descends from, its sub-agents and its token usage."""
    agent = s.agents[agent_id]
    return {**queries.agent_summary(s, agent), "lineage": queries.lineage(s, agent_id),
            "children": [queries.agent_summary(s, s.agents[c]) for c in agent.children],
            "usage": usage.for_agent(s, agent_id)}


def agent_window(s, agent_id: str, positions, start: int, limit: int, url_args: dict) -> dict:
    """shapes.Agent: agent_data, and the events at `positions` (its entries, as its page chose them) from `start`;
    `url_args` (filters, sub-agents) make its page's URL and the next window's."""
    window = positions[start:start + limit]
    end = start + len(window)
    return {**agent_data(s, agent_id), "transcript": [s.events[p] for p in window], "start": start,
            "total": len(positions), "url": url_for("pages.agent", session_id=s.id, agent_id=agent_id, **url_args),
            "next": url_for("api.agent", session_id=s.id, agent_id=agent_id, start=end, limit=limit, **url_args)
            if end < len(positions) else None}


def dialog_data(s, chosen: list[str], view: dict) -> dict:
    """shapes.Dialog: the dialog's window (dialogs.dialog), each message its event and who said it to whom."""
    messages = [{**item["event"], "speaker": item["speaker"], "recipients": item["recipients"],
                 "modified": item["modified"]} for item in view["items"]]
    return {"agents": chosen, "messages": messages, "start": view["start"], "total": view["total"],
            "url": url_for("pages.dialog", session_id=s.id, agents=",".join(chosen))}


def message_data(s, message_id: str, position: int) -> dict:
    """shapes.Message: the event, its causality chain, what represents it, where it came from, its page's URL."""
    return {"event": s.events[position], "flow": causality.causality_chain(s, message_id),
            "references": causality.references(s, message_id),
            "provenance": provenance.message_provenance(s, message_id),
            "url": url_for("pages.message", session_id=s.id, message_id=message_id)}
