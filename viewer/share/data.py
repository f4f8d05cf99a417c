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


def _event(s: SessionIndex, position: int) -> dict:
    event = s.events[position]
    agent = s.agents.get(event["agent_id"])
    kind = model.perspective_kind(event)
    out: dict = {"i": event["message_id"], "a": agent.ordinal if agent else -1, "k": KINDS[kind]}
    if not model.is_transcript_entry(event):
        out["t"] = str(event.get("event_type"))
    content = model.content_of(event)
    if content:
        out["c"] = content
        if looks_like_markdown(content) and kind != model.RECEIVED:
            out["md"] = 1
    if isinstance(event.get("role"), str):
        out["r"] = event["role"]
    if kind == model.DID:
        out["calls"] = [_call(s, position, event, c) for c in model.tool_calls(event)]
    elif kind == model.RECEIVED:
        call_position = s.call_position_for_result(position)
        if call_position is not None:
            out["pc"] = call_position
        if isinstance(event.get("tool_call_id"), str):
            out["tc"] = event["tool_call_id"]
    if model.is_delivery(event):
        out["sb"] = event["substance"]
        modified = model.is_modified(event, s.event(event["substance"]))
        if modified is not None:
            out["mo"] = modified
    causes = model.causes_of(event)
    if causes:
        out["ca"] = causes
    if isinstance(event.get("timestamp"), (str, int, float)):
        out["ts"] = event["timestamp"]
    thinking = event.get("thinking")
    if thinking:
        out["th"] = "\n\n".join(t for t in thinking if isinstance(t, str)) if isinstance(thinking, list) else str(thinking)
    if isinstance(event.get("usage"), dict):
        out["u"] = {k: v for k, v in event["usage"].items() if isinstance(v, int) and not isinstance(v, bool)}
    if event.get("model"):
        out["m"] = str(event["model"])
    return out


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
        events = [_event(s, p) for p in range(s.count)]
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
