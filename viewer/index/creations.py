"""Which call created each agent, as plain data: the "created by" its row shows, and where its status is read from.

Found from the creating message (read back from its file) and its agent's creation; a session keeps every agent's in
its cache entry, so the first page of a woken session of hundreds of sub-agents reads none of their messages. What
was kept or found for every agent holds while the session has the events it had then: a message that grew, or an
agent linked late, comes with an event. Callers hold the session's lock.
"""

from __future__ import annotations

from viewer.core import model
from viewer.core.model import AgentNode

from .agent_tree import spawning_call

MISSING = (None, None, None, None, None)  # its creating message is not read (yet)


def found(s, agent: AgentNode) -> tuple | None:
    """(where the creating message is, that message's agent, the creating call's id, its tool, a summary of it: of
    the message's text when no call is found); MISSING when the message is not read; None when none created it."""
    if agent.cause is None:
        return None
    position = s.by_id.get(agent.cause)
    if position is None:
        return MISSING
    event = s.events[position]
    call = spawning_call(s, agent, event)
    if call is None:
        return position, event["agent_id"], None, None, model.content_of(event)[:80]
    return position, event["agent_id"], call.id, call.name, call.summary()


def _kept(s) -> dict | None:
    """Every agent's, when what was kept or found still holds (see the module), else None."""
    events = s.events  # a sleeping session wakes first: it takes them back
    kept = s.__dict__.get("creations")
    return kept[2] if kept is not None and kept[0] is events and kept[1] == len(events) else None


def of(s, agent: AgentNode) -> tuple | None:
    """`found`'s answer, from those kept when they hold."""
    kept = _kept(s) if agent.cause is not None else None
    made = kept.get(agent.agent_id) if kept is not None else None
    return made if made is not None else found(s, agent)


def every(s) -> dict[str, tuple]:
    """agent id -> `found`'s answer for each agent some message created, kept until the session grows: their
    messages read in one pass (EventList.read_ahead)."""
    kept = _kept(s)
    if kept is None:
        by_id, created = s.by_id, [agent for agent in s.agents.values() if agent.cause is not None]
        s.events.read_ahead([by_id[agent.cause] for agent in created if agent.cause in by_id])
        kept = {agent.agent_id: found(s, agent) for agent in created}
        s.__dict__["creations"] = (s.events, len(s.events), kept)
    return kept


def take_back(s, kept: dict) -> None:
    """`every`'s answer as a cache entry kept it, for the session restored from that entry (the same index): one
    for each agent some message created."""
    created = {agent_id for agent_id, agent in s.agents.items() if agent.cause is not None}
    if set(kept) == created and all(len(made) == len(MISSING) for made in kept.values()):
        s.__dict__["creations"] = (s.events, len(s.events), {agent_id: tuple(made) for agent_id, made in kept.items()})
