"""A shared file's events: one compact record per event, in one pass over events already read.

The index gives what it filed at ingest (each event's perspective kind, the call a result answers, the agents a
call started); the event itself gives the rest. Each record holds the keys the file's script reads, in a fixed
order, and only those an event has: the rules are model's (content_of, is_modified, causes_of, LoggedCall).
"""

from __future__ import annotations

from viewer.core import model
from viewer.index.session_index import SessionIndex
from viewer.reads import queries
from viewer.web.text import looks_like_markdown

# One letter a perspective kind: the file's script shows each as the pages do
KINDS = {model.HEARD: "H", model.DID: "D", model.RECEIVED: "R", model.SAID: "S", model.SYSTEM: "Y", model.NOTED: "N"}


def kinds_by_position(s: SessionIndex) -> list[str]:
    """Each event's perspective kind, from the index's per-agent lists (events in none of them: noted)."""
    kinds = [model.NOTED] * s.count
    for agent in s.agents.values():
        for kind, positions in agent.by_kind.items():
            for p in positions:
                kinds[p] = kind
    return kinds


def _calls(s: SessionIndex, event: dict) -> list[dict]:
    """A message's tool calls, each with the agents it started (ordinals) when it started any."""
    started = s.spawned.get(event["message_id"], ())
    rows = []
    for call in model.tool_calls(event):
        row = {"n": call.name, "s": call.summary(120), "x": call.pretty_arguments}
        if call.id:
            row["id"] = call.id
        spawned = [s.agents[a].ordinal for a in started if queries.spawning_call(s, s.agents[a], event) == call]
        if spawned:
            row["sp"] = spawned
        rows.append(row)
    return rows


def records(s: SessionIndex, logged: list[dict]) -> list[dict]:
    """Every event as the file's script reads it (`logged`: the session's events, read in position order).

    The hot loop of `agentview share`: lookups are bound once and each key is tested directly (no helper per key),
    so a record costs a few dictionary reads; the helpers' rules apply where a value is not the plain case."""
    kinds = kinds_by_position(s)
    ordinals = {a: node.ordinal for a, node in s.agents.items()}
    letters, by_id = KINDS, s.by_id
    markdown: dict[str, bool] = {}  # whether a text looks like Markdown, asked once per text (deliveries repeat it)
    call_position_of, text_of = s.call_position_of, model.text_of
    transcript, did, received = model.TRANSCRIPT_ENTRY, model.DID, model.RECEIVED
    contents: list[str] = []  # each event's content, for the deliveries after it (is_modified)
    rows = []
    for p, event in enumerate(logged):
        kind = kinds[p]
        out = {"i": event["message_id"], "a": ordinals.get(event["agent_id"], -1), "k": letters[kind]}
        event_type = event.get("event_type")
        if event_type != transcript:
            out["t"] = str(event_type)
        content = event.get("content")
        if type(content) is not str:
            content = text_of(content)
        contents.append(content)
        if content:
            out["c"] = content
            if kind != received:
                found = markdown.get(content)
                if found is None:
                    found = markdown[content] = looks_like_markdown(content)
                if found:
                    out["md"] = 1
        role = event.get("role")
        if isinstance(role, str):
            out["r"] = role
        if kind == did:
            out["calls"] = _calls(s, event)
        elif kind == received:
            call_position = call_position_of(event["agent_id"], event.get("tool_call_id"), p)
            if call_position is not None:
                out["pc"] = call_position
            if isinstance(event.get("tool_call_id"), str):
                out["tc"] = event["tool_call_id"]
        if "substance" in event and event_type == transcript:
            substance = event["substance"]
            if isinstance(substance, str) and substance:  # a delivery (model.is_delivery)
                out["sb"] = substance
                original = by_id.get(substance)
                if original is not None:
                    quoted = model.quoted_original(event) if "original_text" in event else None
                    if quoted is None:
                        quoted = contents[original] if original <= p else model.content_of(logged[original])
                    out["mo"] = quoted not in content
        if "cause" in event:
            causes = model.causes_of(event)
            if causes:
                out["ca"] = causes
        if "timestamp" in event:
            value = event["timestamp"]
            if value and isinstance(value, (str, int, float)):
                out["ts"] = value
        if "thinking" in event:
            value = event["thinking"]
            if value:
                out["th"] = "\n\n".join(t for t in value if isinstance(t, str)) if isinstance(value, list) else str(value)
        if "usage" in event:
            value = event["usage"]
            if value and isinstance(value, dict):
                out["u"] = {k: v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}
        if "model" in event:
            value = event["model"]
            if value:
                out["m"] = str(value)
        rows.append(out)
    return rows
