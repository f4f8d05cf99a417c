"""A shared file's events: one compact record per event, in one pass over events already read.

The index gives what it filed at ingest (each event's perspective kind, the call a result answers, the agents a
call started); the event itself gives the rest. Each record holds the keys the file's script reads, in a fixed
order, and only those an event has: the rules are model's (content_of, is_modified, causes_of, LoggedCall).
"""

from __future__ import annotations

from array import array

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


class Records:
    """The session's records made a run of events at a time, in position order (a run is one part of the file).

    What a record needs from elsewhere in the session comes from the index (kinds, calls, spawned agents, message
    ids) or from the runs already made: the content and agent of recent events are kept (a delivery's original is
    usually close before it); an older or later one is read again. Each result paired with a call is noted in
    `paired` (result, call: the file carries the pairs once, so a page of a perspective needs no other event)."""

    WINDOW = 4096  # the latest events whose contents are kept for the deliveries after them

    def __init__(self, s: SessionIndex) -> None:
        self.s = s
        self.kinds = kinds_by_position(s)
        self.ordinals = {a: node.ordinal for a, node in s.agents.items()}
        self.agent_at = array("i")  # each event's agent ordinal, as its record says
        self.paired: list[int] = []
        self._contents: dict[int, str] = {}  # the latest events' contents, by position
        self._markdown: dict[str, bool] = {}  # whether a text looks like Markdown, asked once per text

    def _original(self, original: int, first: int, logged: list[dict]) -> tuple[str, int]:
        """The content and agent ordinal of the event at `original`."""
        content = self._contents.get(original)
        if content is not None:
            return content, self.agent_at[original]
        event = logged[original - first] if first <= original < first + len(logged) else self.s.events.load(original)
        return model.content_of(event), self.ordinals.get(event["agent_id"], -1)

    def run(self, first: int, logged: list[dict]) -> list[dict]:
        """The records of `logged`, the events at positions first, first + 1, ... (after the runs before it).

        The hot loop of `agentview share`: lookups are bound once and each key is tested directly (no helper per
        key), so a record costs a few dictionary reads; the helpers' rules apply where a value is not the plain
        case."""
        s, kinds, ordinals, agent_at, paired = self.s, self.kinds, self.ordinals, self.agent_at, self.paired
        letters, by_id = KINDS, s.by_id
        markdown, contents = self._markdown, self._contents
        if len(markdown) > 100_000:
            markdown.clear()
        call_position_of, text_of = s.call_position_of, model.text_of
        transcript, did, received = model.TRANSCRIPT_ENTRY, model.DID, model.RECEIVED
        rows = []
        for p, event in enumerate(logged, first):
            kind = kinds[p]
            ordinal = ordinals.get(event["agent_id"], -1)
            agent_at.append(ordinal)
            out = {"i": event["message_id"], "a": ordinal, "k": letters[kind]}
            event_type = event.get("event_type")
            if event_type != transcript:
                out["t"] = str(event_type)
            content = event.get("content")
            if type(content) is not str:
                content = text_of(content)
            contents[p] = content
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
                    paired += (p, call_position)
                if isinstance(event.get("tool_call_id"), str):
                    out["tc"] = event["tool_call_id"]
            if "substance" in event and event_type == transcript:
                substance = event["substance"]
                if isinstance(substance, str) and substance:  # a delivery (model.is_delivery)
                    out["sb"] = substance
                    original = by_id.get(substance)
                    if original is not None:
                        said, out["sa"] = self._original(original, first, logged)
                        quoted = model.quoted_original(event) if "original_text" in event else None
                        out["mo"] = (said if quoted is None else quoted) not in content
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
        for p in range(first - self.WINDOW, first + len(logged) - self.WINDOW):  # keep only the latest contents
            contents.pop(p, None)
        return rows
