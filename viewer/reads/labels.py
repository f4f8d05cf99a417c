"""How exports and pictures print log content: masked whole before any cut, and labelled one way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from viewer.core import model, redact
from viewer.index.session_index import SessionIndex

FULL = 1 << 30  # a ToolCall.summary limit that never cuts: texts are masked whole, then shortened


def log_text(text: str) -> str:
    """Log content as an export prints it (masked while masking is active).

    Always applied to whole texts before any shortening, so a cut never splits a secret."""
    return redact.shown(text)


def log_value(value) -> str:
    """Any value from the log as an export prints it: a string as it is, anything else as JSON; masked
    either way (the rule pages print by too: redact.shown_value)."""
    return redact.shown_value(value)


def log_json(data: bytes) -> bytes:
    """The serialized JSON export as it is printed (masked while masking is active)."""
    return redact.shown_json(data)



@dataclass(frozen=True)
class Edge:
    source: str  # message ids
    target: str
    link: str  # "cause", "substance", "tool_call_id", or what an inference matched on
    explicit: bool = True


def causality_edges(s: SessionIndex, positions: Iterable[int] | None = None) -> list[Edge]:
    """The links the log states, from each named message to the event naming it.

    Links a reader inferred (legacy name matching, Claude Code prompt matching) are marked in the
    event's `inferred` and come out as Edge(..., explicit=False); a native log states all of its links.
    """
    edges: list[Edge] = []
    with s.lock:
        for p in range(s.count) if positions is None else positions:
            event = s.events[p]
            target = event["message_id"]
            # A reader marks links it had to infer: {"cause": "why", ...} (see viewer/formats)
            inferred = event.get("inferred") if isinstance(event.get("inferred"), dict) else {}
            for cause in model.causes_of(event):
                edges.append(Edge(cause, target, "cause", explicit="cause" not in inferred))
            if model.is_delivery(event):
                edges.append(Edge(event["substance"], target, "substance", explicit="substance" not in inferred))
            if isinstance(event.get("tool_call_id"), str):
                call_position = s.call_position_for_result(p)
                if call_position is not None:
                    edges.append(Edge(s.events[call_position]["message_id"], target, "tool_call_id"))
    return edges


def label_text(event: model.Event) -> str:
    """What a picture labels an event with: its content, or else the calls it makes."""
    return model.content_of(event) or ", ".join(c.summary(FULL) for c in model.tool_calls(event))
