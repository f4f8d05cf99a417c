"""weakincentives transcripts (FORMATS.md section 4): TranscriptEntry slice files and `transcript.entry` log records.

Each `source` is one agent; `subagent:*` agents are children of the primary one.
"""

from __future__ import annotations

import heapq

import orjson

from .. import model
from ..model import Event
from .claude_code import _text

PRIMARY_SOURCES = ("primary", "main")
ROLES = {"user_message": "user", "assistant_message": "assistant", "tool_use": "assistant", "tool_result": "tool",
         "thinking": "assistant"}


def looks_like(record: dict) -> bool:
    kind = record.get("__type__")
    if isinstance(kind, str) and kind.endswith(":TranscriptEntry"):
        return True
    if all(k in record for k in ("entry_id", "role", "source")):
        return True
    return record.get("event") == "transcript.entry" or ("logger" in record and "event" in record and "context" in record)


def _time(record: dict) -> str:
    context = record.get("context") if isinstance(record.get("context"), dict) else {}
    value = record.get("created_at") or context.get("timestamp") or record.get("timestamp") or ""
    return value if isinstance(value, str) else str(value)


class WeakIncentivesNormalizer:
    def __init__(self) -> None:
        self.created: set[str] = set()
        self.count = 0
        self.open_spawns: list[tuple[str, str, str]] = []  # (message id, call id, prompt) of primary spawning calls
        self.spawn: dict[str, tuple[str, str, str]] = {}  # sub-agent -> its spawning call
        self.by_call: dict[str, str] = {}  # call id -> the sub-agent it started
        self.last_said: dict[str, str] = {}
        self.heard: set[str] = set()

    @staticmethod
    def order(stream: list) -> list:
        """By sequence within a source, by time across sources (items: (time, line, member, record))."""
        by_source: dict[str, list] = {}
        for item in stream:
            record = item[3]
            context = record.get("context") if isinstance(record.get("context"), dict) else {}
            source = str(record.get("source") or context.get("source") or "primary")
            by_source.setdefault(source, []).append(item)
        for items in by_source.values():
            items.sort(key=lambda item: _sequence(item[3], item[1]))
        return list(heapq.merge(*by_source.values(), key=lambda item: _time(item[3])))

    def time_of(self, record: dict) -> str:
        return _time(record)

    def feed(self, record: dict, line: int, member: dict) -> list[Event]:
        if "context" in record and "role" not in record:
            if record.get("event") != "transcript.entry":
                return []  # other log records of the library: not part of a transcript
            return self._log_record(record, line)
        return self._entry(record, line)

    def flush(self) -> list[Event]:
        return []

    def _agent(self, source: str) -> tuple[str, list[Event]]:
        agent = "primary" if source in PRIMARY_SOURCES else source
        out: list[Event] = []
        if agent != "primary" and "primary" not in self.created:
            out += self._agent("primary")[1]
        if agent not in self.created:
            self.created.add(agent)
            event = {"message_id": f"{agent}:created", "event_type": model.AGENT_CREATED, "agent_id": agent,
                     "name": agent, "raw": None}
            if agent != "primary":  # the primary agent started it: by its latest open spawning call if any
                event["name"] = agent.removeprefix("subagent:")
                if self.open_spawns:
                    message_id, call_id, prompt = self.open_spawns.pop()
                    event.update(cause=message_id, spawn_call_id=call_id,
                                 inferred={"cause": "the primary agent's latest spawning call", "tool_call_id": call_id})
                    self.spawn[agent], self.by_call[call_id] = (message_id, call_id, prompt), agent
                else:
                    event["cause"] = "primary:created"
            out.append(event)
        return agent, out

    def _links(self, event: Event) -> Event:
        """Spawning calls, a sub-agent's first prompt and its answer carried back: the substance links."""
        agent = event["agent_id"]
        if event["role"] == "assistant":
            for call in model.tool_calls(event):
                if call.id and call.name in ("Task", "Agent", "subagent", "spawn_subagent") and agent == "primary":
                    prompt = call.arguments.get("prompt", "") if isinstance(call.arguments, dict) else ""
                    self.open_spawns.append((event["message_id"], call.id, str(prompt)))
            if model.is_utterance(event):
                self.last_said[agent] = event["message_id"]
        elif event["role"] == "user" and agent in self.spawn and agent not in self.heard:
            self.heard.add(agent)
            event["substance"], event["original_text"] = self.spawn[agent][0], self.spawn[agent][2]
        elif event["role"] == "tool" and event.get("tool_call_id") in self.by_call:
            said = self.last_said.get(self.by_call[event["tool_call_id"]])
            if said:
                event["substance"] = said
        return event

    def _message_id(self, value) -> str:
        self.count += 1
        return value if isinstance(value, str) and value else f"entry-{self.count}"

    def _entry(self, record: dict, line: int) -> list[Event]:
        agent, out = self._agent(str(record.get("source") or "primary"))
        role = record.get("role") if record.get("role") in ("system", "user", "assistant", "tool") else "system"
        content, _ = _text(record.get("content"))
        event: Event = {"message_id": self._message_id(record.get("entry_id")), "event_type": model.TRANSCRIPT_ENTRY,
                        "agent_id": agent, "role": role, "content": content, "timestamp": record.get("created_at"),
                        "sequence": record.get("sequence"), "line": line, "raw": record}
        call_id = record.get("tool_call_id") if isinstance(record.get("tool_call_id"), str) else None
        if role == "assistant" and record.get("tool_name"):
            event["tool_calls"] = [{"id": call_id, "type": "function", "function": {
                "name": str(record["tool_name"]), "arguments": orjson.dumps(record.get("tool_input") or {}).decode()}}]
        elif role == "tool" and call_id:
            event["tool_call_id"] = call_id
            event["name"] = record.get("tool_name")
        metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
        if isinstance(metadata.get("model"), str):
            event["model"] = metadata["model"]
        return out + [self._links(event)]

    def _log_record(self, record: dict, line: int) -> list[Event]:
        context = record["context"] if isinstance(record.get("context"), dict) else {}
        agent, out = self._agent(str(context.get("source") or "main"))
        kind = str(context.get("entry_type") or "unknown")
        detail = context.get("detail") if isinstance(context.get("detail"), dict) else {}
        sdk = detail.get("sdk_entry") if isinstance(detail.get("sdk_entry"), dict) else None
        message = sdk.get("message") if sdk and isinstance(sdk.get("message"), dict) else {}
        blocks = message.get("content")
        event: Event = {"message_id": self._message_id((sdk or {}).get("uuid") or context.get("entry_id")),
                        "event_type": model.TRANSCRIPT_ENTRY, "agent_id": agent, "role": ROLES.get(kind, "system"),
                        "content": "", "timestamp": context.get("timestamp") or record.get("timestamp"),
                        "sequence": context.get("sequence_number"), "line": line, "raw": record,
                        "markers": [kind] if kind not in ROLES else []}
        if isinstance(message.get("model"), str):
            event["model"] = message["model"]
        if isinstance(message.get("usage"), dict):
            event["usage"] = message["usage"]
        texts = []
        for block in blocks if isinstance(blocks, list) else ([{"type": "text", "text": blocks}] if isinstance(blocks, str) else []):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                event["role"] = "assistant"
                event.setdefault("tool_calls", []).append({"id": block.get("id"), "type": "function", "function": {
                    "name": str(block.get("name", "?")), "arguments": orjson.dumps(block.get("input") or {}).decode()}})
            elif block.get("type") == "tool_result":
                event["role"] = "tool"
                event["tool_call_id"] = block.get("tool_use_id")
                texts.append(_text(block.get("content"))[0])
            elif block.get("type") == "thinking":
                event.setdefault("thinking", []).append(str(block.get("thinking", "")))
            else:
                texts.append(_text([block])[0])
        if not sdk:
            texts.append(str(record.get("message") or ""))
            for key in ("content", "text"):
                if isinstance(detail.get(key), str):
                    texts = [detail[key]]
        if kind == "thinking" and not event.get("thinking"):
            event["thinking"], texts = ["\n".join(texts)], []
        if kind == "token_usage" and isinstance(detail.get("usage"), dict):
            event["usage"] = detail["usage"]
        event["content"] = "\n".join(t for t in texts if t)
        return out + [self._links(event)]


def _sequence(record: dict, line: int):
    context = record.get("context") if isinstance(record.get("context"), dict) else {}
    value = record.get("sequence", context.get("sequence_number"))
    return (0, value, line) if isinstance(value, (int, float)) else (1, 0, line)
