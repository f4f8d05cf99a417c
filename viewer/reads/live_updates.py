"""What a live page's poll reads: what arrived after the position its cursor names (an agent's new entries, results
under calls already shown, agents created since, messages that grew in place; the tree's new and moved agents;
raw events), each costing what is new, not what the session holds.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Iterable

from viewer.core import model
from viewer.core.model import Event
from viewer.core.positions import window
from viewer.index.session_index import SessionIndex

from .queries import agent_facts, agent_summary, call_item, entry, shown_alone, spawning_index, subtree, tree_rows

# A live poll renders at most this many new entries; the rest waits for the next poll, which the page
# asks for at once (a poll answer stays small and prompt however far behind the page is).
POLL_ENTRIES = 200


def perspective_updates(s: SessionIndex, agent_id: str, include_subagents: bool, after: int,
                        filters=None, limit: int = POLL_ENTRIES) -> dict:
    """What a perspective page showing events before `after` needs to add, up to `limit` new entries.

    Reads only the agents' new entries, the agents created since, and the messages that grew since
    (kept at ingest): a poll of one agent costs what is new for it, not all that is new.
    `stop` is the position the page has then seen up to (the next poll's cursor).
    """
    with s.lock:
        agent_ids = set(subtree(s, agent_id) if include_subagents else [agent_id])
        positions, stop = window([s.agents[a].entries for a in agent_ids], after, limit, s.count)
        grown = {}
        growth = s.growth_positions  # kept at ingest: a poll never waits for the facets to catch up
        for i in range(bisect_left(growth, after), bisect_left(growth, stop)):
            target = s.grown_positions[i]  # a message that grew in place: redraw it
            if target < after and s.events[target]["agent_id"] in agent_ids:
                grown[target] = entry(s, target, stop)
        spawned = []
        for created in sorted((a for a in s.agents.values() if a.created_position is not None
                               and after <= a.created_position < stop and a.cause in s.by_id),
                              key=lambda a: a.created_position):
            holder_position = s.by_id[created.cause]  # a call already on the page spawned it
            holder = s.events[holder_position]
            if holder["agent_id"] in agent_ids and holder_position < after:
                spawned.append({"call_position": holder_position, "call_index": spawning_index(s, created, holder),
                                "agent_id": created.agent_id, "name": created.display_name,
                                **agent_facts(s, created)})
        items, results = [], []
        for p in positions:
            if filters and not filters.passes(s, p):
                continue
            item = entry(s, p, stop)
            if shown_alone(s, item, filters):
                items.append(item)
                continue
            call_position = s.by_id[item["paired_call"]]
            if call_position < after:  # the call is already on the page: add the result under it
                calls = model.tool_calls(s.events[call_position])
                call_id = s.events[p].get("tool_call_id")
                index = next((i for i, c in enumerate(calls) if c.id == call_id), 0)
                results.append({"call_position": call_position, "call_index": index, "item": item})
            # else the call is new too and renders its results itself
        updates = {"items": items, "results": results, "spawned": spawned, "stop": stop}
        if grown:  # only formats whose messages grow in place (Claude Code) ever have these
            updates["grown"] = list(grown.values())
        return updates


def calls_to_redraw(s: SessionIndex, agent_ids: Iterable[str], after: int, stop: int, results: list[dict]) -> dict:
    """The calls a perspective page of `agent_ids` drawn before `after` shows whose line changed by `stop`: a result
    came (`results`, perspective_updates': its status and duration) or an agent it created wrote since (its entries
    and cost). (position, index) -> the call as drawn then. The caller holds the lock."""
    agent_ids = set(agent_ids)
    where = {(r["call_position"], r["call_index"]) for r in results}
    for agent_id in agent_ids:
        for child in (s.agents[child_id] for child_id in s.agents[agent_id].children):
            holder_position = s.by_id.get(child.cause) if child.cause else None
            if (not child.entries or child.entries[-1] < after or holder_position is None
                    or holder_position >= after or child.created_position is None or child.created_position >= after):
                continue  # it wrote nothing since, or its call is not on the page yet (drawn with it, then)
            holder = s.events[holder_position]
            if holder["agent_id"] in agent_ids:
                where.add((holder_position, spawning_index(s, child, holder)))
    drawn = {}
    for position, index in sorted(where):
        made = model.tool_calls(s.events[position])
        if index < len(made):
            drawn[(position, index)] = {"call_position": position, "call_index": index, "event": s.events[position],
                                        "call": call_item(s, position, index, made[index], stop)}
    return drawn


def events_after(s: SessionIndex, after: int, limit: int = 1000) -> tuple[list[Event], int]:
    with s.lock:
        end = min(s.count, after + limit)
        return s.events[after:end], end


def _with_subtree(rows: list[dict]) -> dict:
    return {**rows[0], "subtree": rows[1:]}


def tree_updates(s: SessionIndex, after: int) -> dict:
    """Agents that appeared or moved in the tree, and entry counts that changed, since `after`.

    Costs one look per agent at its last entry, however many events arrived: no event is read."""
    with s.lock:
        start = bisect_left(s.tree_changes, (after, ""))
        changed = list(dict.fromkeys(agent_id for _, agent_id in s.tree_changes[start:]))
        appeared = [a for a in changed if s.agents[a].first_position >= after]
        moved = [a for a in changed if s.agents[a].first_position < after]
        return {
            # rows as tree_rows makes them: an appeared agent alone (its children that appeared too come in
            # turn), a moved one with the rows of its subtree under "subtree"
            "appeared": [{**agent_summary(s, s.agents[a]), "depth": 0, "closes": 1} for a in appeared],
            "moved": [_with_subtree(tree_rows(s, [a])) for a in moved],
            **count_updates(s, after),
        }


def count_updates(s: SessionIndex, after: int) -> dict:
    """The entry counts that changed since `after` ("counts": agent id -> entries), with each agent's ordinal
    ("ordinals"): what a rail's counts follow. One look per agent at its last entry."""
    with s.lock:
        touched = [a for a, agent in s.agents.items() if agent.entries and agent.entries[-1] >= after]
        return {"counts": {a: len(s.agents[a].entries) for a in touched},
                "ordinals": {a: s.agents[a].ordinal for a in touched}}
