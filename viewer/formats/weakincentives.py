"""weakincentives transcripts (FORMATS.md section 4): TranscriptEntry slice files and `transcript.entry` log records.

Each `source` is one agent; `subagent:*` agents are children of the primary one.
"""

from __future__ import annotations

import heapq

from viewer.core import failures, model
from viewer.core.model import Event

from .base import Normalizer, SpawnLinks, agent_created, as_dict, content_text, tool_call
from .claude_code_content import result_failure

PRIMARY_SOURCES = ("primary", "main")
SPAWNING_TOOLS = ("Task", "Agent", "subagent", "spawn_subagent")
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
    context = as_dict(record.get("context"))
    value = record.get("created_at") or context.get("timestamp") or record.get("timestamp") or ""
    return value if isinstance(value, str) else str(value)


class WeakIncentivesNormalizer(Normalizer):
    def __init__(self) -> None:
        super().__init__()
        self.created: set[str] = set()
        self.count = 0
        self.open_spawns: list[tuple[str, str, str]] = []  # (message id, call id, prompt) of primary spawning calls
        self.links = SpawnLinks()

    def order(self, stream):
        """By sequence within a source, by time across sources (items: (time, line, member, record, ...)): a
        member's records are all read before the first is fed."""
        by_source: dict[str, list] = {}
        for item in stream:
            record = item[3]
            context = as_dict(record.get("context"))
            source = str(record.get("source") or context.get("source") or "primary")
            by_source.setdefault(source, []).append(item)
        for items in by_source.values():
            items.sort(key=lambda item: _sequence(item[3], item[1]))
        return list(heapq.merge(*by_source.values(), key=lambda item: _time(item[3])))

    def time_of(self, record: dict) -> str:
        return _time(record)

    def feed(self, record: dict, line: int, member: dict, source: tuple | None = None) -> list[Event]:
        if "context" in record and "role" not in record:
            if record.get("event") != "transcript.entry":
                return []  # other log records of the library: not part of a transcript
            return self._log_record(record, line)
        return self._entry(record, line)

    def _agent(self, source: str) -> tuple[str, list[Event]]:
        agent = "primary" if source in PRIMARY_SOURCES else source
        out: list[Event] = []
        if agent != "primary" and "primary" not in self.created:
            out += self._agent("primary")[1]
        if agent not in self.created:
            self.created.add(agent)
            event = agent_created(agent, name=agent)
            if agent != "primary":  # the primary agent started it: by its latest open spawning call if any
                event["name"] = agent.removeprefix("subagent:")
                if self.open_spawns:
                    message_id, call_id, prompt = self.open_spawns.pop()
                    event.update(cause=message_id, spawn_call_id=call_id,
                                 inferred={"cause": "the primary agent's latest spawning call", "tool_call_id": call_id})
                    self.links.spawned(agent, call_id, message_id, prompt)
                else:
                    event["cause"] = "primary:created"
            out.append(event)
        return agent, out

    @staticmethod
    def _call(event: Event, calls: list, call_id, name: str, arguments) -> None:
        """Add a tool call to the event, and to `calls` with its arguments as they are (read by _links)."""
        call_id = call_id if isinstance(call_id, str) else None
        event.setdefault("tool_calls", []).append(tool_call(call_id, name, arguments))
        calls.append((call_id, name, arguments))

    def _links(self, event: Event, calls: list) -> Event:
        """Spawning calls, a sub-agent's first prompt and its answer carried back: the substance links."""
        agent = event["agent_id"]
        if event["role"] == "assistant":
            for call_id, name, arguments in calls:
                if call_id and name in SPAWNING_TOOLS and agent == "primary":
                    prompt = arguments.get("prompt", "") if isinstance(arguments, dict) else ""
                    self.open_spawns.append((event["message_id"], call_id, str(prompt)))
            self.links.said(event)
        elif event["role"] == "user":
            self.links.prompt(event)
        elif event["role"] == "tool":
            self.links.answer(event, self.links.by_call.get(event.get("tool_call_id")))
        return event

    def _message_id(self, value) -> str:
        self.count += 1
        return value if isinstance(value, str) and value else f"entry-{self.count}"

    def _entry(self, record: dict, line: int) -> list[Event]:
        agent, out = self._agent(str(record.get("source") or "primary"))
        role = record.get("role") if record.get("role") in ("system", "user", "assistant", "tool") else "system"
        content, _ = content_text(record.get("content"))
        event: Event = {"message_id": self._message_id(record.get("entry_id")), "event_type": model.TRANSCRIPT_ENTRY,
                        "agent_id": agent, "role": role, "content": content, "timestamp": record.get("created_at"),
                        "sequence": record.get("sequence"), "line": line, "raw": record}
        call_id = record.get("tool_call_id") if isinstance(record.get("tool_call_id"), str) else None
        calls: list = []
        if role == "assistant" and record.get("tool_name"):
            self._call(event, calls, call_id, str(record["tool_name"]), record.get("tool_input") or {})
        elif role == "tool" and call_id:
            event["tool_call_id"] = call_id
            event["name"] = record.get("tool_name")
        metadata = as_dict(record.get("metadata"))
        if isinstance(metadata.get("model"), str):
            event["model"] = metadata["model"]
        return out + [self._links(event, calls)]

    def _log_record(self, record: dict, line: int) -> list[Event]:
        context = as_dict(record.get("context"))
        agent, out = self._agent(str(context.get("source") or "main"))
        kind = str(context.get("entry_type") or "unknown")
        detail = as_dict(context.get("detail"))
        sdk = as_dict(detail.get("sdk_entry"))
        message = as_dict(sdk.get("message"))
        blocks = message.get("content")
        event: Event = {"message_id": self._message_id(sdk.get("uuid") or context.get("entry_id")),
                        "event_type": model.TRANSCRIPT_ENTRY, "agent_id": agent, "role": ROLES.get(kind, "system"),
                        "content": "", "timestamp": context.get("timestamp") or record.get("timestamp"),
                        "sequence": context.get("sequence_number"), "line": line, "raw": record,
                        "markers": [kind] if kind not in ROLES else []}
        if isinstance(message.get("model"), str):
            event["model"] = message["model"]
        if isinstance(message.get("usage"), dict):
            event["usage"] = message["usage"]
        texts, calls = [], []
        for block in blocks if isinstance(blocks, list) else ([{"type": "text", "text": blocks}] if isinstance(blocks, str) else []):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                event["role"] = "assistant"
                self._call(event, calls, block.get("id"), str(block.get("name", "?")), block.get("input") or {})
            elif block.get("type") == "tool_result":
                event["role"] = "tool"
                event["tool_call_id"] = block.get("tool_use_id")
                texts.append(content_text(block.get("content"))[0])
                if block.get("is_error") is True:  # a Claude Code result marked failed (its kind: claude_code)
                    event["is_error"], event["failure"] = True, result_failure(texts[-1])
            elif block.get("type") == "thinking":
                event.setdefault("thinking", []).append(str(block.get("thinking", "")))
            else:
                texts.append(content_text([block])[0])
        if not sdk:
            texts.append(str(record.get("message") or ""))
            for key in ("content", "text"):
                if isinstance(detail.get(key), str):
                    texts = [detail[key]]
        if kind == "thinking" and not event.get("thinking"):
            event["thinking"], texts = ["\n".join(texts)], []
        if kind == "token_usage" and isinstance(detail.get("usage"), dict):
            event["usage"] = detail["usage"]
        if kind == "error":  # the adapter logged an error (the model's API, the SDK)
            event["is_error"], event["failure"] = True, failures.ERROR
        event["content"] = "\n".join(t for t in texts if t)
        return out + [self._links(event, calls)]


def _sequence(record: dict, line: int):
    context = as_dict(record.get("context"))
    value = record.get("sequence", context.get("sequence_number"))
    return (0, value, line) if isinstance(value, (int, float)) else (1, 0, line)
