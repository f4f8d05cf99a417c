"""What a shared file holds: one session's agents, events and problems as compact plain data.

Built in one walk over the session's events (O(events)), from the same reads the pages use: perspective
kinds, paired calls and results, spawned agents, deliveries, causes. Masking and path anonymizing apply to
the serialized bytes (`sealed`), so no field can slip past them.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

import orjson

from viewer.core import model, redact
from viewer.index.session_index import SessionIndex
from viewer.reads import costs, queries
from viewer.web.text import looks_like_markdown

VERSION = 1
# One letter a perspective kind: the file's script shows each as the pages do
KINDS = {model.HEARD: "H", model.DID: "D", model.RECEIVED: "R", model.SAID: "S", model.SYSTEM: "Y", model.NOTED: "N"}


def _call(s: SessionIndex, position: int, event: dict, call: model.LoggedCall) -> dict:
    spawned = [s.agents[a].ordinal for a in s.spawned.get(event["message_id"], ())
               if queries.spawning_call(s, s.agents[a], event) == call]
    out = {"n": call.name, "s": call.summary(120), "x": call.pretty_arguments}
    if call.id:
        out["id"] = call.id
    if spawned:
        out["sp"] = spawned
    return out


def _event(s: SessionIndex, position: int, event: dict, kind: str, ordinal: int, events: list[dict]) -> dict:
    """One event as the file's script reads it; `kind` and `ordinal` come from the index (kinds_by_position)."""
    out: dict = {"i": event["message_id"], "a": ordinal, "k": KINDS[kind]}
    if event.get("event_type") != model.TRANSCRIPT_ENTRY:
        out["t"] = str(event.get("event_type"))
    content = model.content_of(event)
    if content:
        out["c"] = content
        if kind != model.RECEIVED and looks_like_markdown(content):
            out["md"] = 1
    role = event.get("role")
    if isinstance(role, str):
        out["r"] = role
    if kind == model.DID:
        out["calls"] = [_call(s, position, event, c) for c in model.tool_calls(event)]
    elif kind == model.RECEIVED:
        call_position = s.call_position_for_result(position)
        if call_position is not None:
            out["pc"] = call_position
        if isinstance(event.get("tool_call_id"), str):
            out["tc"] = event["tool_call_id"]
    if "substance" in event and model.is_delivery(event):
        out["sb"] = event["substance"]
        original = s.by_id.get(event["substance"])
        modified = model.is_modified(event, events[original] if original is not None else None)
        if modified is not None:
            out["mo"] = modified
    if "cause" in event:
        causes = model.causes_of(event)
        if causes:
            out["ca"] = causes
    for key, short in (("timestamp", "ts"), ("thinking", "th"), ("usage", "u"), ("model", "m")):
        value = event.get(key)
        if not value:
            continue
        if short == "ts" and isinstance(value, (str, int, float)):
            out["ts"] = value
        elif short == "th":
            out["th"] = "\n\n".join(t for t in value if isinstance(t, str)) if isinstance(value, list) else str(value)
        elif short == "u" and isinstance(value, dict):
            out["u"] = {k: v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}
        elif short == "m":
            out["m"] = str(value)
    return out


def kinds_by_position(s: SessionIndex) -> list[str]:
    """Each event's perspective kind, from the index's per-agent lists (events in none of them: noted)."""
    kinds = [model.NOTED] * s.count
    for agent in s.agents.values():
        for kind, positions in agent.by_kind.items():
            for p in positions:
                kinds[p] = kind
    return kinds


def session_data(s: SessionIndex, opening_agent: str | None = None) -> dict:
    """The file's data object: the session, its agents (in order of appearance), every event by position."""
    with s.lock:
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
        logged = s.events.walk(0, s.count)  # read back in runs, not one event at a time
        kinds = kinds_by_position(s)
        ordinals = {a: node.ordinal for a, node in s.agents.items()}
        events = [_event(s, p, event, kinds[p], ordinals.get(event["agent_id"], -1), logged)
                  for p, event in enumerate(logged)]
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
    return masked, masked.count(redact.MASK.encode()) - raw.count(redact.MASK.encode())
