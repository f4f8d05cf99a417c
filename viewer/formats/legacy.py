"""The legacy event stream (seed 001): no event_type on messages, `utterance_ref`, `source`, inferred parents."""

from __future__ import annotations

from viewer.core import model
from viewer.core.model import Event

from .base import Normalizer


def looks_like(record: dict) -> bool:
    """A message line of the old schema: no event_type, but an agent, a role and an id."""
    return ("event_type" not in record and isinstance(record.get("message_id"), str)
            and isinstance(record.get("agent_id"), str) and isinstance(record.get("role"), str))


class LegacyNormalizer(Normalizer):
    """Turns legacy lines into native events, one per line, inferring each creation's parent.

    The parent of an agent is the agent whose `task` call is open (no result yet) when the
    creation appears, and whose parsed arguments carry the same `name`; failing an exact
    match, a call whose raw arguments contain the name; failing that, the latest open call.
    The native line parser (native.LineParser) calls `made_native` on each line of a legacy file.
    """

    def __init__(self) -> None:
        super().__init__()
        self.open_calls: list[tuple[str, str, object, str]] = []  # (message_id, call_id, parsed args, raw args)

    def feed(self, record: dict, line: int = 0, member: dict | None = None, source: tuple | None = None) -> list[Event]:
        return [self.made_native(record)]

    def made_native(self, record: dict) -> Event:
        """The native event of one legacy line (one event per line)."""
        event = dict(record)
        event["raw"] = record
        if event.get("event_type") == model.AGENT_CREATED:
            if "cause" not in event:
                self._infer_parent(event)
            return event
        if "event_type" in event:
            return event
        event["event_type"] = model.TRANSCRIPT_ENTRY
        ref = event.get("utterance_ref")
        if isinstance(ref, str) and ref and "substance" not in event:
            event["substance"] = ref
        message_id = event.get("message_id")
        for call in model.tool_calls(event):
            if call.name == "task" and call.id:
                self.open_calls.append((message_id, call.id, call.arguments, call.arguments_raw))
        call_id = event.get("tool_call_id")
        if isinstance(call_id, str):
            self.open_calls = [c for c in self.open_calls if c[1] != call_id]
        return event

    def _infer_parent(self, event: Event) -> None:
        name = event.get("name")
        how, chosen = None, None
        if isinstance(name, str) and name:
            for i in range(len(self.open_calls) - 1, -1, -1):
                args = self.open_calls[i][2]
                if isinstance(args, dict) and args.get("name") == name:
                    how, chosen = "a task call whose arguments name it exactly", i
                    break
            if chosen is None:
                for i in range(len(self.open_calls) - 1, -1, -1):
                    if name in self.open_calls[i][3]:
                        how, chosen = "a task call whose arguments contain its name", i
                        break
        if chosen is None and self.open_calls:
            how, chosen = "the latest task call without a result", len(self.open_calls) - 1
        if chosen is None:
            return
        message_id, call_id, _, _ = self.open_calls.pop(chosen)
        event["cause"] = message_id
        event["inferred"] = {"cause": how, "tool_call_id": call_id}
        event["spawn_call_id"] = call_id
