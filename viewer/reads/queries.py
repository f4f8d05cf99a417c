"""Pure reads over a SessionIndex: tree, transcript, perspective (what a live poll reads after its cursor:
live_updates.py; causality: causality.py; the dialog: dialogs.py).

Every function returns plain, JSON-able data, so the pages, the JSON API and the Python API share one
implementation of each rule. Each takes the session's lock itself; none rescans the whole session.
"""

from __future__ import annotations

import weakref
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any, Iterable

from viewer.core import failures, model
from viewer.core.model import AgentNode, Event
from viewer.core.positions import intersection, merge, union
from viewer.index import facets, failed, usage
from viewer.index.agent_tree import answered_at, creation_of, creations, spawning_call
from viewer.index.session_index import SessionIndex

# --- agents and the tree -------------------------------------------------------------------

def spawning_index(s: SessionIndex, agent: AgentNode, event: Event) -> int:
    """Where `spawning_call` is among its message's calls (0 when none is): what a page's call ids are made of."""
    call = spawning_call(s, agent, event)
    return model.tool_calls(event).index(call) if call else 0


def created_by(s: SessionIndex, agent: AgentNode, creating: tuple | None = None) -> dict | None:
    """The spawning tool call: its message, name and a summary of its arguments (`creating`: creation_of's
    answer, when the caller has it)."""
    if agent.cause is None:
        return None
    position, agent_id, call_id, tool, summary = creating or creation_of(s, agent)
    if position is None:
        return {"message_id": agent.cause, "missing": True}
    return {"message_id": agent.cause, "agent_id": agent_id, "call_id": call_id, "tool": tool, "summary": summary,
            "missing": False}


# A sub-agent's status, read from the call that created it. Where a format answers a spawning call when its agent
# ends (Format.spawns_answered_at_end: Claude Code's Task), a call with no result yet means the agent still runs, and
# one the session ended without means it stopped. Other formats (seed-000 never answers `task`; Codex answers
# spawn_agent at once) give their sub-agents none.
RUNNING, DONE, FAILED, STOPPED = "running", "done", "failed", "stopped"
# What each status says on hover: the rail shows the word alone.
STATUS_MEANINGS = {RUNNING: "its creating call has no result yet", DONE: "its creating call has its result",
                   FAILED: "its creating call's result is a failure",
                   STOPPED: "the session ended before its result came"}


def agent_status(s: SessionIndex, agent: AgentNode, creating: tuple | None = None) -> tuple[str | None, int]:
    """(the agent's status or None, where its creating call's result is: -1 when it has none). `creating`:
    creation_of's answer, when the caller has it. The caller holds the lock."""
    if agent.cause is None or not s.format.spawns_answered_at_end:
        return None, -1
    creating = creating or creation_of(s, agent)
    if not creating[2]:  # no call created it
        return None, -1
    answered = answered_at(s, agent.agent_id, creating)
    if answered < 0:
        return (STOPPED if failed.finished(s) else RUNNING), -1
    return (FAILED if failed.failed_at(s, answered) else DONE), answered


def agent_statuses(s: SessionIndex) -> dict[str, str]:
    """agent id -> its status, for the agents that have one. The caller holds the lock."""
    if not s.format.spawns_answered_at_end:
        return {}
    shown = {}
    for agent_id, agent in s.agents.items():
        now, _ = agent_status(s, agent)
        if now is not None:
            shown[agent_id] = now
    return shown


def statuses_answered_since(s: SessionIndex, touched, after: int) -> list[tuple[int, str]]:
    """(ordinal, status) of the sub-agents of the `touched` agents whose creating call got its result at or after
    position `after`: what a live poll swaps in. Only the results logged since are looked at, so a parent of
    hundreds of sub-agents costs a poll what its new entries cost. The caller holds the lock."""
    if not s.format.spawns_answered_at_end:
        return []
    agents, events, changed, seen = s.agents, s.events, [], set()
    for parent in touched:
        entries = agents[parent].entries if parent in agents else ()
        for position in entries[bisect_left(entries, after):]:
            if not model.is_tool_result(events[position]):
                continue
            call_at = s.call_position_for_result(position)
            message_id = events[call_at].get("message_id") if call_at is not None else None
            for child in s.spawned.get(message_id, ()) if message_id is not None else ():
                agent = agents.get(child)
                if agent is None or child in seen:
                    continue
                now, answered_at = agent_status(s, agent)
                if now is not None and answered_at == position:
                    seen.add(child)
                    changed.append((agent.ordinal, now))
    return changed


def agent_summary(s: SessionIndex, agent: AgentNode, creating: tuple | None = None) -> dict:
    """`creating`: creation_of's answer, when the caller has it."""
    parent = s.agents.get(agent.parent_id) if agent.parent_id else None
    creating = creating or creation_of(s, agent)
    return {
        "agent_id": agent.agent_id,
        "name": agent.display_name,
        "parent_id": agent.parent_id,
        "language_model": agent.language_model,
        "entries": len(agent.entries),
        "implicit": agent.implicit,
        "flags": list(agent.flags),
        "created_by": created_by(s, agent, creating),
        "status": agent_status(s, agent, creating)[0],  # running, done, failed, stopped, or None
        "ordinal": agent.ordinal,
        "parent_ordinal": parent.ordinal if parent else None,
    }


def agents(s: SessionIndex) -> list[dict]:
    """Every agent, flat, in order of first appearance."""
    with s.lock:
        made = creations(s)  # each summary names the call that created its agent
        return [agent_summary(s, s.agents[a], made.get(a)) for a in s.agent_order]


def agent_names(s: SessionIndex) -> dict[str, str]:
    with s.lock:
        return {a: s.agents[a].display_name for a in s.agent_order}


def subtree(s: SessionIndex, agent_id: str) -> list[str]:
    """The agent and all its descendants, parents before children."""
    with s.lock:
        kept = _reading_order(s)
        row = kept.rows.get(agent_id)
        if row is None:  # no agent of the tree
            return [descendant for descendant, _, _ in tree_order(s, [agent_id])]
        return kept.ids[row:kept.ends[row]]


def tree_node(s: SessionIndex, agent_id: str) -> dict:
    """An agent with its whole subtree nested under "children"."""
    with s.lock:
        root = agent_summary(s, s.agents[agent_id])
        stack = [root]
        while stack:
            node = stack.pop()
            node["children"] = [agent_summary(s, s.agents[c]) for c in s.agents[node["agent_id"]].children]
            stack.extend(node["children"])
        return root


def tree(s: SessionIndex) -> list[dict]:
    with s.lock:
        return [tree_node(s, r) for r in s.roots]


def tree_rows(s: SessionIndex, agent_ids: Iterable[str] | None = None, summaries: dict[str, dict] | None = None
              ) -> list[dict]:
    """`tree_order` as rows, each an agent_summary with its `depth` and `closes`: a page nests the rows with these,
    without recursion, so a tree of any depth renders. `summaries`: agent id -> its agent_summary, when the caller
    made them already (the session page lists every agent twice: each creator's call is read once)."""
    with s.lock:
        return [{**(agent_summary(s, s.agents[agent_id]) if summaries is None else summaries[agent_id]),
                 "depth": depth, "closes": closes}
                for agent_id, depth, closes in tree_order(s, agent_ids)]


def tree_order(s: SessionIndex, agent_ids: Iterable[str] | None = None) -> list[tuple[str, int, int]]:
    """(agent id, depth, closes) of the tree (or the subtrees of `agent_ids`) in reading order, parents first:
    `closes` is how many of the nodes open at it end after it. The caller holds the lock; no recursion."""
    return list(_reading_order(s).order) if agent_ids is None else _tree_order(s, agent_ids)


@dataclass(frozen=True)
class _ReadingOrder:
    """The whole tree's tree_order as of one version of the session, with where each agent's subtree lies in it."""

    version: tuple  # (epoch, count) when read: the tree changes only as events are read, or when read again
    order: list[tuple[str, int, int]]  # tree_order(s)
    ids: list[str]  # its agent ids
    rows: dict[str, int]  # agent id -> its row
    ends: list[int]  # per row: the row after its agent's subtree (a subtree is the rows from its agent to there)


_orders: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # session -> its _ReadingOrder


def _reading_order(s: SessionIndex) -> _ReadingOrder:
    """The whole tree in reading order, read again only when the session has changed: an agent page asks for its
    neighbours and its subtree's cost on every request. The caller holds the lock."""
    version = (s.epoch, s.count)
    kept = _orders.get(s)
    if kept is not None and kept.version == version:
        return kept
    order = _tree_order(s, None)
    ids = [agent_id for agent_id, _, _ in order]
    ends, open_rows = [len(order)] * len(order), []  # rows whose subtree has not ended yet, deepest last
    for row, (_, depth, _) in enumerate(order):
        while open_rows and order[open_rows[-1]][1] >= depth:
            ends[open_rows.pop()] = row
        open_rows.append(row)
    kept = _orders[s] = _ReadingOrder(version, order, ids, {agent_id: row for row, agent_id in enumerate(ids)}, ends)
    return kept


def _tree_order(s: SessionIndex, agent_ids: Iterable[str] | None) -> list[tuple[str, int, int]]:
    order = []
    stack = [(agent_id, 0) for agent_id in reversed(list(s.roots if agent_ids is None else agent_ids))]
    while stack:
        agent_id, depth = stack.pop()
        order.append((agent_id, depth))
        stack.extend((child, depth + 1) for child in reversed(s.agents[agent_id].children))
    return [(agent_id, depth, depth + 1 - (order[i + 1][1] if i + 1 < len(order) else 0))
            for i, (agent_id, depth) in enumerate(order)]


def lineage(s: SessionIndex, agent_id: str) -> list[dict]:
    """root -> ... -> agent, each with the call that created it."""
    with s.lock:
        chain, current, seen = [], agent_id, set()
        while current is not None and current not in seen:
            seen.add(current)
            chain.append(agent_summary(s, s.agents[current]))
            current = s.agents[current].parent_id
        return chain[::-1]


# --- transcripts and the perspective --------------------------------------------------------

def transcript(s: SessionIndex, agent_id: str, start: int = 0, limit: int | None = None) -> list[Event]:
    with s.lock:
        positions = s.agents[agent_id].entries
        end = len(positions) if limit is None else start + limit
        return [s.events[p] for p in positions[start:end]]


def _positions(s: SessionIndex, agent_ids: Iterable[str]) -> list[int]:
    return merge([s.agents[a].entries for a in agent_ids])


def filtered_positions(s: SessionIndex, agent_ids: list[str], filters=None):
    """The positions of the agents' entries a filter passes, in file order (the caller holds the lock).

    Each part of a filter is a list kept per agent (kinds at ingest, tools and modified deliveries in
    the facets), so a filtered page intersects lists instead of reading the whole transcript.
    """
    if not filters:
        return _positions(s, agent_ids)
    chosen = []
    if filters.kinds:
        chosen.append([s.agents[a].by_kind[k] for a in agent_ids for k in filters.kinds if k in s.agents[a].by_kind])
    if filters.tool or filters.modified:
        kept = facets.caught_up(s)
        if filters.tool:
            chosen.append([(kept.tools_of(a) or {}).get(model.tool_key(filters.tool), ()) for a in agent_ids])
        if filters.modified:
            chosen.append([kept.modified.get(a, ()) for a in agent_ids])
    return list(intersection([union(lists) for lists in chosen]))


def delivery_of(s: SessionIndex, event: Event) -> dict | None:
    if not model.is_delivery(event):
        return None
    original = s.event(event["substance"])
    sender = s.agents.get(original["agent_id"]) if original else None
    quoted = model.quoted_original(event)
    return {
        "original_id": event["substance"],
        "original_found": original is not None,
        "original_content": (quoted if quoted is not None
                             else model.content_of(original) if original else None),
        "original_kind": original.get("event_type") if original else None,
        "from_agent_id": sender.agent_id if sender else None,
        "from_name": sender.display_name if sender else None,
        "modified": model.is_modified(event, original),
    }


def _before(position: int | None, horizon: int | None) -> bool:
    return horizon is None or position is None or position < horizon


def agent_facts(s: SessionIndex, agent: AgentNode) -> dict:
    """What a call shows of an agent it created, beside its name: its entries and cost so far."""
    return {"entries": len(agent.entries), "cost_usd": usage.cost_of_agent(s, agent.agent_id)["cost_usd"]}


def call_item(s: SessionIndex, position: int, index: int, call: model.LoggedCall, horizon: int | None = None,
              read: dict | None = None) -> dict:
    message_id = s.events[position]["message_id"]
    spawned = []
    for agent_id in s.spawned.get(message_id, ()):
        agent = s.agents[agent_id]
        if _before(agent.created_position, horizon) and spawning_call(s, agent, s.events[position]) == call:
            spawned.append({"agent_id": agent_id, "name": agent.display_name, "ordinal": agent.ordinal,
                            **agent_facts(s, agent)})
    results = [p for p in s.result_positions_for_call(position, call.id) if _before(p, horizon)] if call.id else []
    unanswered = not results and call.id is not None and failed.is_unanswered(s, position, call.id)
    return {
        "index": index,
        "id": call.id,
        "name": call.name,
        "summary": call.summary(),
        "arguments": call.arguments_raw,
        "pretty_arguments": call.pretty_arguments,
        "arguments_valid": call.arguments_valid,
        "results": [entry(s, p, read=read) for p in results],
        "spawned": spawned,
        **({"failure": {"kind": failures.UNANSWERED, "error": "no result: the session ended without one"}}
           if unanswered else {}),
    }


def entry(s: SessionIndex, position: int, horizon: int | None = None, read: dict | None = None) -> dict:
    """An event as an entry of a transcript shows it (a message's page draws it so, a result with its own); with a
    horizon, only the results and spawned agents logged before it (a live poll that stops at its window leaves the
    later ones to the next poll, which adds them under the call). `read`: _read's answers for a window."""
    event, kind = _read(s, position, read)
    agent = s.agents.get(event["agent_id"])
    item: dict[str, Any] = {
        "position": position,
        "kind": kind,
        "message_id": event["message_id"],
        "agent_id": event["agent_id"],
        "agent_name": agent.display_name if agent else event["agent_id"],
        "agent_ordinal": agent.ordinal if agent else None,
        "role": event.get("role"),
        "content": model.content_of(event),
        "event": event,
        "delivery": delivery_of(s, event),
        "calls": [],
        "heard_by": [],
        "paired_call": None,
    }
    if item["kind"] == model.DID:
        item["calls"] = [call_item(s, position, i, c, horizon, read) for i, c in enumerate(model.tool_calls(event))]
    if item["kind"] == model.RECEIVED:
        call_position = s.call_position_for_result(position)
        if call_position is not None:
            item["paired_call"] = s.events[call_position]["message_id"]
    if item["kind"] == model.SAID:
        item["heard_by"] = _heard_by(s, event["message_id"])
    if item["kind"] in (model.SAID, model.DID) and agent is not None:
        item["answered_at"] = _input_time(s, agent, position, read)
    failure = failed.kind_at(s, position)
    if failure:  # shown red, with its first line, wherever the entry is drawn (under its call too)
        item["failure"] = {"kind": failure, "error": failures.first_line(item["content"])}
    return item


def _input_time(s: SessionIndex, agent: AgentNode, position: int, read: dict | None = None):
    """When the input a response answers was logged (its `timestamp`, as logged): its agent's entry just before it,
    when that is what it heard, received or was told, not an earlier part of the same turn. None otherwise.
    `read`: _read's answer for a window, which mostly holds that entry."""
    i = bisect_left(agent.entries, position)
    if i == 0:
        return None
    before = agent.entries[i - 1]
    event, kind = _read(s, before, read)
    return event.get("timestamp") if kind in (model.HEARD, model.RECEIVED, model.SYSTEM) else None


def _read(s: SessionIndex, position: int, read: dict | None = None) -> tuple[Event, str]:
    """The event at `position` and its perspective kind (`read`: those of a window already read, by position)."""
    if read and position in read:
        return read[position]
    event = s.events[position]
    return event, model.perspective_kind(event)


def _heard_by(s: SessionIndex, message_id: str) -> list[dict]:
    seen, out = set(), []
    for p in s.references.get(message_id, ()):
        agent_id = s.events[p]["agent_id"]
        if agent_id not in seen:
            seen.add(agent_id)
            out.append({"agent_id": agent_id, "name": s.agents[agent_id].display_name})
    return out


def shown_alone(s: SessionIndex, item: dict, filters) -> bool:
    """A tool result shows under its call, unless a filter hides that call."""
    return _alone(s, item["position"], item["kind"], filters)


def _alone(s: SessionIndex, position: int, kind: str, filters) -> bool:
    """shown_alone of the entry at `position`, of that `kind`: told before its entry is built (a result shown
    under its call is built there, by call_item)."""
    if kind != model.RECEIVED:
        return True
    call_position = s.call_position_for_result(position)
    return call_position is None or bool(filters and not filters.passes(s, call_position))


def perspective(s: SessionIndex, agent_id: str, include_subagents: bool = False,
                start: int = 0, limit: int | None = None, filters=None, positions=None) -> dict:
    """What an agent heard, did, received and said, in file order, windowed.

    A tool result is shown with the call it answers, not again in its own place.
    `filters` (a filters.EntryFilter) keeps only the entries it passes (`positions`: filtered_positions' already).
    """
    with s.lock:
        agent_ids = subtree(s, agent_id) if include_subagents else [agent_id]
        positions = filtered_positions(s, agent_ids, filters) if positions is None else positions
        total = len(positions)
        start = max(0, min(start, total))
        end = total if limit is None else min(total, start + limit)
        read = {p: _read(s, p) for p in positions[start:end]}  # each read once, also as the input of the next
        items = [entry(s, p, read=read) for p, (_, kind) in read.items() if _alone(s, p, kind, filters)]
        return {"items": items, "start": start, "end": end, "total": total, "agents": agent_ids}


def perspective_total(s: SessionIndex, agent_ids: list[str], filters=None) -> int:
    """`perspective`'s total, without building its list of positions when nothing filters."""
    if not filters:
        return sum(len(s.agents[a].entries) for a in agent_ids)
    return len(filtered_positions(s, agent_ids, filters))


def perspective_text(s: SessionIndex, agent_id: str, include_subagents: bool = False) -> str:
    """The perspective as readable text (SessionViewer.extract_agent_perspective)."""

    def block(label: str, text: str) -> str:
        body = (text or "").replace("\n", "\n    ")
        return f"{label}: {body}"

    with s.lock:
        agent = s.agents[agent_id]
        data = perspective(s, agent_id, include_subagents)
    lines = [f"Perspective of {agent.display_name} ({agent_id})"]
    for item in data["items"]:
        who = f"[{item['agent_name']}] " if include_subagents else ""
        kind, delivery = item["kind"], item["delivery"]
        if kind == model.SYSTEM:
            lines.append(who + block("SYSTEM PROMPT", item["content"]))
        elif kind == model.HEARD and delivery:
            source = delivery["from_name"] or "an unknown sender"
            label = f"HEARD from {source} (substance {delivery['original_id']})"
            if delivery["modified"]:
                label += " [modified on its way]"
            lines.append(who + block(label, item["content"]))
            if delivery["modified"]:
                lines.append(who + block("  ORIGINAL", delivery["original_content"]))
        elif kind == model.HEARD:
            lines.append(who + block("HEARD", item["content"]))
        elif kind == model.DID:
            if item["content"]:
                lines.append(who + block("THOUGHT", item["content"]))
            for call in item["calls"]:
                lines.append(who + block(f"DID {call['name']}", call["pretty_arguments"]))
                for agent_link in call["spawned"]:
                    lines.append(who + f"  -> created {agent_link['name']} ({agent_link['agent_id']})")
                for result in call["results"]:
                    lines.append(who + block(f"RECEIVED from {call['name']}", result["content"]))
        elif kind == model.RECEIVED:
            lines.append(who + block("RECEIVED", item["content"]))
        elif kind == model.SAID:
            lines.append(who + block("SAID", item["content"]))
        else:
            lines.append(who + block(f"NOTED ({item['role']})", item["content"]))
    return "\n".join(lines) + "\n"


# --- the integrity report -------------------------------------------------------------------------

def problems(s: SessionIndex) -> dict:
    """Everything skipped or unresolved while reading the session, with counts by kind."""
    with s.lock:
        listed = [p.as_dict() for p in s.problems]
    counts: dict[str, int] = {}
    for problem in listed:
        counts[problem["kind"]] = counts.get(problem["kind"], 0) + 1
    return {"problems": listed, "counts": dict(sorted(counts.items()))}


# --- the tree in reading order (keyboard [ and ]) ------------------------------------------------

def agent_neighbours(s: SessionIndex, agent_id: str) -> tuple[str | None, str | None]:
    """The agents before and after this one in the tree read top to bottom (parents first)."""
    with s.lock:
        kept = _reading_order(s)
        order, i = kept.ids, kept.rows[agent_id]
        return (order[i - 1] if i else None), (order[i + 1] if i + 1 < len(order) else None)
