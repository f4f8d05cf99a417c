"""A session's failures as a list: each with its agent, the call it answers, what kind it is and its error text
(the Failures view, its JSON twin and the MCP tool `session_failures` read this).

What counts is decided once (core/failures.py) and filed by the index (index/failed.py): a page reads only the
window it shows.
"""

from __future__ import annotations

from viewer.core import failures, model
from viewer.core.positions import merge
from viewer.index import facets, failed

from . import queries

TEXT_CHARS = 4000  # of an error's text in the list (its entry has it whole)


def positions(s, agents: list[str] | None = None) -> list[tuple[int, str | None]]:
    """(position, call id) of each failure in file order (of `agents` only, if given): a failed entry (call id
    None) or an unanswered call (the entry holding it). The caller holds the lock."""
    held = facets.caught_up(s)
    missing = failed.unanswered(s)
    if agents is None:
        entries = held.failed
    else:
        entries = merge([held.failures[a] for a in agents if a in held.failures] or [[]])
        wanted = set(agents)
        missing = [(p, c) for p, c in missing if s.events[p]["agent_id"] in wanted]
    if not missing:
        return [(p, None) for p in entries]
    return sorted([(p, None) for p in entries] + missing)


def listing(s, start: int = 0, limit: int | None = None, agent_id: str | None = None) -> dict:
    """{total, start, failures: a window of `item`s, agents: {agent id: its own failures}}; with `agent_id`, of
    that agent and its sub-agents only."""
    with s.lock:
        found = positions(s, None if agent_id is None else queries.subtree(s, agent_id))
        window = found[start:] if limit is None else found[start:start + limit]
        items = [item(s, p, call_id) for p, call_id in window]
        return {"total": len(found), "start": start, "failures": items, "agents": failed.own_counts(s)}


def item(s, position: int, call_id: str | None = None) -> dict:
    """One failure: the entry at `position` that failed, or its call `call_id` that was never answered."""
    event = s.events[position]
    agent_id = event["agent_id"]
    agent = s.agents.get(agent_id)
    if call_id is not None:
        call = next((c for c in model.tool_calls(event) if c.id == call_id), None)
        tool = call.name if call else None
        text = f"no result for the {tool or 'tool'} call {call_id}: the session ended without one"
        kind, call_message = failures.UNANSWERED, event["message_id"]
    else:
        text = model.content_of(event)
        kind = failed.kind_at(s, position) or failures.ERROR
        call_message, call_id, tool = _call_of(s, position, event)
    return {"message_id": event["message_id"], "agent_id": agent_id,
            "agent_name": agent.display_name if agent else agent_id, "kind": kind, "tool": tool,
            "call_message_id": call_message, "call_id": call_id, "error": failures.first_line(text),
            "text": text[:TEXT_CHARS], "timestamp": _stamp(event)}


def _stamp(event: dict) -> str | None:
    stamp = event.get("timestamp")
    return stamp if isinstance(stamp, str) else None


def _call_of(s, position: int, event: dict) -> tuple[str | None, str | None, str | None]:
    """(message id of the entry holding the call a result answers, the call's id, its tool), Nones if none."""
    if not model.is_tool_result(event):
        return None, None, None
    call_id = event.get("tool_call_id")
    call_position = s.call_position_for_result(position)
    if call_position is None:
        return None, call_id if isinstance(call_id, str) else None, event.get("name")
    holder = s.events[call_position]
    tool = next((c.name for c in model.tool_calls(holder) if c.id == call_id), event.get("name"))
    return holder["message_id"], call_id, tool
