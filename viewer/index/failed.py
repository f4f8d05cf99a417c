"""A session's failures as the index holds them: its failed entries (filed by the facets at ingest, by the rule of
core/failures.py) and, once it has ended, its tool calls that were never answered. Counts per agent, rolled up
its sub-agents, and per session, without reading an event.
"""

from __future__ import annotations

import time
from bisect import bisect_left

from viewer.core import failures, model
from viewer.core.positions import filed_at
from viewer.search.index import QUERY_BUDGET

from .agent_tree import spawning_call


def finished(s) -> bool:
    """Whether the session has ended: its format says it settled, or its files were left alone as long as a
    session takes to settle (Tuning.settle_after). A call without a result before that may still be answered; so may
    one of a session seen as of an earlier event."""
    if vars(s).get("live_count", 0) > s.count:  # as of an earlier event (reads/asof.py): it went on from there
        return False
    normalizer = s.normalizer
    if normalizer is not None and getattr(normalizer, "settled", False):
        return True
    return s.updated_at is not None and time.time() - s.updated_at >= s.host.tuning.settle_after


def unanswered(s) -> list[tuple[int, str]]:
    """(position of the entry holding the call, call id) of each tool call no result answered, in file order,
    once the session has ended; none before (the caller holds the lock). A call that created a sub-agent is answered
    by it (seed-000 logs no result for `task`). Kept until the session grows."""
    if not finished(s):
        return []
    return _kept(s)[2]


def is_unanswered(s, position: int, call_id: str) -> bool:
    """Whether the call `call_id` of the entry at `position` went unanswered (see `unanswered`)."""
    return finished(s) and (position, call_id) in _kept(s)[3]


def _kept(s) -> tuple:
    """(its events, their count, the unanswered calls in file order, the same as a set), found again when the session
    grew or was read again (its events another list); kept in its cache entry (`kept_unanswered`), so a woken
    session's page reads none of its tool calls."""
    events = s.events  # a sleeping session wakes first: it takes them back
    kept = s.__dict__.get("unanswered")
    if kept is not None and kept[0] is events and kept[1] == len(events):
        return kept
    results = s.result_positions
    found = sorted((position, call_id) for (agent_id, call_id) in s.call_positions if (agent_id, call_id) not in results
                   for position in filed_at(s.call_positions, (agent_id, call_id))
                   if not _made_an_agent(s, position, call_id))  # a spawning call's outcome is its agent
    return take_back_unanswered(s, found)


def kept_unanswered(s) -> list[tuple[int, str]]:
    """The calls no result answered, whether or not the session has ended: what its cache entry keeps."""
    return _kept(s)[2]


def take_back_unanswered(s, found: list[tuple[int, str]]) -> tuple:
    """`kept_unanswered`'s answer for the session's events now (as its cache entry kept it: the same index)."""
    kept = s.__dict__["unanswered"] = (s.events, len(s.events), found, frozenset(found))
    return kept


def _made_an_agent(s, position: int, call_id: str) -> bool:
    """Whether the call `call_id` of the entry at `position` created a sub-agent (its other calls are owed results)."""
    event = s.events[position]
    made = s.spawned.get(event["message_id"])
    if not made:
        return False
    if len(model.tool_calls_of(event)) == 1:  # its one call made them (spawning_call's answer, read no further)
        return True
    return any(getattr(spawning_call(s, s.agents[a], event), "id", None) == call_id for a in made if a in s.agents)


def kind_at(s, position: int) -> str | None:
    """What failed in the entry at `position` (core/failures.py's rule), a failed result of a call that created a
    sub-agent being that sub-agent's failure: the one label the pages, the Failures view and the MCP tools give it."""
    event = s.events[position]
    kind = failures.kind_of(event, s.format.failure_texts)
    if kind in (failures.TOOL_ERROR, failures.ERROR) and model.is_tool_result(event):
        call_position = s.call_position_for_result(position)
        if call_position is not None and _made_an_agent(s, call_position, event.get("tool_call_id")):
            return failures.SUBAGENT_FAILED
    return kind


def failed_at(s, position: int) -> bool:
    """Whether the entry at `position` failed (kind_at names something): found among the facets' failed entries
    when they hold it, so a tree of hundreds of sub-agents reads none of their results from its files."""
    held = s.facets
    if held.indexed > position:
        found = held.failed
        at = bisect_left(found, position)
        return at < len(found) and found[at] == position
    return kind_at(s, position) is not None


def _facets(s, caught_up: bool):
    """The session's facets, caught up (`caught_up`, or when they are behind by no more than a search takes in
    first: some milliseconds), else as far as they are built."""
    held, count = s.facets, s.count
    behind = count - held.indexed
    if behind > 0 and (caught_up or behind <= QUERY_BUDGET):
        held.catch_up(count)
    return held


def own_counts(s, caught_up: bool = True) -> dict[str, int]:
    """agent id -> how many of its entries failed and calls went unanswered (agents without any left out)."""
    held = _facets(s, caught_up)
    counts = {agent_id: len(positions) for agent_id, positions in held.failures.items()}
    events = s.events
    for position, _ in unanswered(s):
        agent_id = events[position]["agent_id"]
        counts[agent_id] = counts.get(agent_id, 0) + 1
    return counts


def total(s, caught_up: bool = True) -> int:
    """How many failures the session holds (`caught_up`: with every event read so far in the facets; else as far
    as they are built, unless they are close: what the sessions list and a summary written while they catch up
    say)."""
    held = _facets(s, caught_up)
    return len(held.failed) + len(unanswered(s))


def rolled_up(s, own: dict[str, int] | None = None) -> dict[str, int]:
    """agent id -> its failures and its sub-agents', at any depth (agents with none left out); `own`: own_counts,
    when the caller has them already."""
    own = own_counts(s) if own is None else own
    counts = dict(own)
    agents = s.agents
    for agent_id in own:
        seen = {agent_id}
        parent = agents[agent_id].parent_id if agent_id in agents else None
        while parent is not None and parent not in seen and parent in agents:
            seen.add(parent)
            counts[parent] = counts.get(parent, 0) + own[agent_id]
            parent = agents[parent].parent_id
    return counts
