"""What a shared file holds: a head (the session, its agents and problems) and the events' records, as compact
plain data, from the same reads the pages use. Masking and path anonymizing apply to the serialized bytes of
each piece (`Sealer`), so no field can slip past them.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

import orjson

from viewer.core import redact
from viewer.index.session_index import SessionIndex
from viewer.reads import costs, queries

VERSION = 2


def session_head(s: SessionIndex, opening_agent: str | None = None) -> dict:
    """The file's head: the session, its agents (in order of appearance) and problems (the events go in parts, and
    the pairs of results and calls are added once the parts are made). Under the session's lock."""
    with s.host.gc.batch():  # what it builds is plain data: no cycles for the collector to look for
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
            "problems": problems,
        }


# A home folder in a path, as logs write it: /home/NAME, /Users/NAME, C:\Users\NAME (JSON-escaped: C:\\Users\\),
# and Claude Code's project folder names, which spell the path with dashes (-home-NAME-project)
_HOMES = re.compile(rb"(/home/|/Users/|[A-Za-z]:\\\\Users\\\\|-home-|-Users-)([A-Za-z0-9._][A-Za-z0-9._-]*?)(?=[/\\\-\"\s]|$)")
_KEEP = {b"shared", b"Shared", b"Public", b"runner", b"user"}


def anonymized_paths(data: bytes, names: dict[bytes, bytes] | None = None) -> bytes:
    """Every home folder's user name replaced, the same name by the same stand-in (user1, user2, ...); `names`: the
    stand-ins given so far (several pieces of one file share them)."""
    names = {} if names is None else names

    def replace(match: re.Match) -> bytes:
        name = match.group(2)
        if name in _KEEP:
            return match.group(0)
        if name not in names:
            names[name] = b"user%d" % (len(names) + 1)
        return match.group(1) + names[name]

    return _HOMES.sub(replace, data)


class Sealer:
    """Each piece of a file's data as the JSON bytes it carries (paths anonymized, one stand-in per name across
    the pieces; secrets masked), counting the values masked in all of them."""

    def __init__(self, redact_secrets: bool = True, anonymize_paths: bool = False) -> None:
        self.redact_secrets = redact_secrets
        self.names: dict[bytes, bytes] | None = {} if anonymize_paths else None
        self.masked = 0

    def __call__(self, value) -> bytes:
        raw = orjson.dumps(value)
        if self.names is not None:
            raw = anonymized_paths(raw, self.names)
        if not self.redact_secrets:
            return raw
        masked = redact.mask_json(raw)
        if masked is raw:  # nothing to mask (the same bytes object): no count over megabytes
            return raw
        self.masked += masked.count(redact.MASK.encode()) - raw.count(redact.MASK.encode())
        return masked
