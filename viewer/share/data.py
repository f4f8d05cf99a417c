"""What a shared file holds: one session's agents, events and problems as compact plain data.

Built in one walk over the session's events (O(events)), from the same reads the pages use: perspective
kinds, paired calls and results, spawned agents, deliveries, causes. Masking and path anonymizing apply to
the serialized bytes (`sealed`), so no field can slip past them.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

import orjson

from viewer.core import redact
from viewer.index.session_index import SessionIndex
from viewer.reads import costs, queries

from .events import records

VERSION = 1


def session_data(s: SessionIndex, opening_agent: str | None = None) -> dict:
    """The file's data object: the session, its agents (in order of appearance), every event by position."""
    with s.lock, s.host.gc.batch():  # what it builds is plain data: no cycles for the collector to look for
        agents = queries.agents(s)
        cost = costs.tree_costs(s)
        order = {a: depth for a, depth, _ in queries.tree_order(s)}
        rows = []
        for summary in agents:
            node = s.agents[summary["agent_id"]]
            own = cost.get(node.agent_id, {}).get("own", {}).get("cost_usd")
            below = cost.get(node.agent_id, {}).get("subtree", {}).get("cost_usd")
            rows.append({
                "id": node.agent_id, "name": node.display_name, "ordinal": node.ordinal,
                "parent": summary["parent_ordinal"],
                "model": node.language_model, "entries": list(node.entries),
                "dialog": list(node.dialog_entries), "depth": order.get(node.agent_id, 0),
                "cost": costs.usd(own) if own is not None else None,
                "subtree_cost": costs.usd(below) if below is not None else None,
                "created_by": (summary["created_by"] or {}).get("message_id"),
                "flags": summary["flags"], "implicit": summary["implicit"],
            })
        events = records(s, s.events.walk(0, s.count))  # read back in runs, not one event at a time
        problems = [p.as_dict() for p in s.problems]
        session_cost = costs.session_cost(s)["cost_usd"]
        return {
            "version": VERSION,
            "session": {"id": s.id, "name": s.name, "title": s.title, "path": s.relpath, "format": s.format.label,
                        "project": s.project, "events": s.shown_count,
                        "cost": costs.usd(session_cost) if session_cost is not None else None,
                        "shared_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                        "opening_agent": opening_agent},
            "agents": rows,
            "events": events,
            "problems": problems,
        }


# A home folder in a path, as logs write it: /home/NAME, /Users/NAME, C:\Users\NAME (JSON-escaped: C:\\Users\\),
# and Claude Code's project folder names, which spell the path with dashes (-home-NAME-project)
_HOMES = re.compile(rb"(/home/|/Users/|[A-Za-z]:\\\\Users\\\\|-home-|-Users-)([A-Za-z0-9._][A-Za-z0-9._-]*?)(?=[/\\\-\"\s]|$)")
_KEEP = {b"shared", b"Shared", b"Public", b"runner", b"user"}


def anonymized_paths(data: bytes) -> bytes:
    """Every home folder's user name replaced, the same name by the same stand-in (user1, user2, ...)."""
    names: dict[bytes, bytes] = {}

    def replace(match: re.Match) -> bytes:
        name = match.group(2)
        if name in _KEEP:
            return match.group(0)
        if name not in names:
            names[name] = b"user%d" % (len(names) + 1)
        return match.group(1) + names[name]

    return _HOMES.sub(replace, data)


def sealed(data: dict, redact_secrets: bool = True, anonymize_paths: bool = False) -> tuple[bytes, int]:
    """The data object as the JSON bytes a file carries, and how many values were masked in it."""
    raw = orjson.dumps(data)
    if anonymize_paths:
        raw = anonymized_paths(raw)
    if not redact_secrets:
        return raw, 0
    masked = redact.mask_json(raw)
    if masked is raw:  # nothing to mask (the same bytes object): no count over megabytes
        return raw, 0
    return masked, masked.count(redact.MASK.encode()) - raw.count(redact.MASK.encode())
