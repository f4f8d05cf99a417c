"""Pure reads of causality over a SessionIndex: what each message came of (its parent), the chain that led to a
message, and the entries that carry a message on (its references). Each takes the session's lock itself.
"""

from __future__ import annotations

from viewer.core import model
from viewer.core.model import Event
from viewer.index.session_index import SessionIndex


def parent_of(s: SessionIndex, position: int) -> str | list[str] | None:
    """substance if present, else cause (a list stays a list), else a tool result's call message."""
    event = s.events[position]
    if model.is_delivery(event):
        return event["substance"]
    cause = event.get("cause")
    if isinstance(cause, str) and cause:
        return cause
    if isinstance(cause, list):
        causes = model.causes_of(event)
        return causes or None
    if model.is_tool_result(event):
        call_position = s.call_position_for_result(position)
        if call_position is not None:
            return s.events[call_position]["message_id"]
    return None


def causality_index(s: SessionIndex) -> dict[str, str | list[str]]:
    with s.lock:
        index = {}
        for position, event in enumerate(s.events):
            parent = parent_of(s, position)
            if parent is not None and event["message_id"] not in index:
                index[event["message_id"]] = parent
        return index


def causality_chain(s: SessionIndex, message_id: str) -> list[Event]:
    """The causality chain ending at a message, oldest first; stops at a cycle or a gap."""
    with s.lock:
        chain, seen, current = [], set(), message_id
        while isinstance(current, str) and current not in seen:
            position = s.by_id.get(current)
            if position is None:
                break
            seen.add(current)
            chain.append(s.events[position])
            parent = parent_of(s, position)
            current = parent[0] if isinstance(parent, list) else parent
        return chain[::-1]


def references(s: SessionIndex, message_id: str) -> list[Event]:
    """Every transcript entry whose substance chain reaches the message, in file order."""
    with s.lock:
        found, frontier, seen = [], [message_id], {message_id}
        while frontier:
            key = frontier.pop()
            for p in s.references.get(key, ()):
                entry_id = s.events[p]["message_id"]
                if entry_id not in seen:
                    seen.add(entry_id)
                    found.append(p)
                    frontier.append(entry_id)
        return [s.events[p] for p in sorted(found)]
