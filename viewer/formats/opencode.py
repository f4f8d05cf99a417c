"""OpenCode sessions: the records of one root session and its child sessions (opencode_store), as native events.

A session is an agent (the root `main`, each child session a sub-agent under the `task` call that made it); a
message's parts are its entries (anomalyco/opencode `src/session/message-v2.ts`; docs/formats.md has the fields).
Rows are read again when updated: each part is taken once, when first seen complete.
"""

from __future__ import annotations

import re

from viewer.core import failures, jsonio, model
from viewer.core.model import Event

from .ai_agent import _iso
from .base import Normalizer, SpawnLinks, agent_created, as_dict, tool_call

MAIN = "main"
SPAWNING_TOOLS = ("task",)
_TASK_ID = re.compile(r"task_id:\s*(ses_[A-Za-z0-9]+)")


def agent_of_session(session_id: str) -> str:
    return "session-" + session_id.removeprefix("ses_")[-12:]


def _text(value) -> str:
    return value if isinstance(value, str) else ("" if value is None else jsonio.text(value))


class OpenCodeNormalizer(Normalizer):
    """Normalizes one OpenCode root session and its child sessions (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self.title: str | None = None
        self.root: str | None = None
        self.sessions: dict[str, dict] = {}  # session id -> its row
        self.agents: dict[str, str] = {}  # session id -> agent id
        self.created: set[str] = set()
        self.messages: dict[str, dict] = {}  # message id -> its info (role, model, time, ...)
        self.taken: dict[str, str] = {}  # part id -> what of it became events ("call", "done", "text")
        self.thinking: dict[str, list[str]] = {}  # agent -> reasoning waiting for the entry it precedes
        self.spawns: dict[str, tuple[str, str, str]] = {}  # child session id -> (call message id, call id, prompt)
        self.unspawned: dict[str, list[tuple[str, str, str]]] = {}  # agent -> its task calls naming no session yet
        self.last_said: dict[str, str] = {}
        self.links = SpawnLinks()
        # results read complete with their call, held until their end time is reached (a task's result comes after
        # its sub-agent's answer): (end time, order, event, the sub-agent whose answer it carries)
        self.held: list[tuple[float, int, Event, str | None]] = []

    def time_of(self, record: dict) -> object:
        return record.get("time_created")

    def feed(self, record: dict, line: int, member: dict, source: tuple | None = None) -> list[Event]:
        kind = record.get("kind")
        if kind == "session":
            return self._session(record)
        session = record.get("session_id")
        if not isinstance(session, str):
            return []
        data = as_dict(record.get("data"))
        if kind not in ("message", "part"):
            return []
        out = self._due(record.get("time_created")) + self._create(session, record)
        base = {"agent_id": self.agents[session], "timestamp": _iso(record.get("time_created")), "line": line,
                "file": member.get("rel"), "raw": record}
        if kind == "message":
            message_id = str(record.get("id"))
            self.messages[message_id] = data
            return out + self._failed(message_id, data, base)
        return out + self._part(str(record.get("id")), data, self.messages.get(str(record.get("message_id")), {}),
                                base)

    def _failed(self, message_id: str, data: dict, base: dict) -> list[Event]:
        """A response that failed (its info's `error`: the provider's, an abort, an overflow): shown once, marked."""
        error = as_dict(data.get("error"))
        if not error or message_id + ":error" in self.taken:
            return []
        self.taken[message_id + ":error"] = "done"
        detail = as_dict(error.get("data")).get("message") or error.get("message") or ""
        text = f"[{_text(error.get('name') or 'error')}] {_text(detail)}".strip()
        failure = failures.INTERRUPTED if error.get("name") == "MessageAbortedError" else failures.API_ERROR
        return [self._entry(message_id + ":error", base, "system", text, markers=["error"], is_error=True,
                            failure=failure)]

    def flush(self) -> list[Event]:
        return self._due(None)

    def _due(self, now) -> list[Event]:
        """The held results that ended before `now` (all of them: None), in the order they ended."""
        if not self.held:
            return []
        self.held.sort(key=lambda h: (h[0], h[1]))
        out = []
        while self.held and (now is None or not isinstance(now, (int, float)) or self.held[0][0] <= now):
            _, _, event, child = self.held.pop(0)
            self.links.answer(event, self.agents.get(child or ""))
            self.last_said[event["agent_id"]] = event["message_id"]
            out.append(event)
        return out

    # --- sessions and agents ---------------------------------------------------------------------

    def _session(self, row: dict) -> list[Event]:
        sid = str(row.get("id"))
        self.sessions[sid] = row
        if self.root is None or sid == self.root:  # the store gives a root's own row first
            self.root = sid
            if isinstance(row.get("title"), str) and row["title"].strip():
                self.title = " ".join(row["title"].split())[:120]
            if isinstance(row.get("directory"), str) and row["directory"]:
                self.project = row["directory"]
        return []

    def _create(self, session: str, record: dict) -> list[Event]:
        if session in self.agents:
            return []
        row = self.sessions.get(session, {})
        parent = row.get("parent_id") if isinstance(row.get("parent_id"), str) else None
        agent = MAIN if session == self.root or parent not in self.sessions else agent_of_session(session)
        self.agents[session] = agent
        event = agent_created(agent, timestamp=_iso(record.get("time_created")))
        event["name"] = "main agent" if agent == MAIN else _text(row.get("title")) or agent
        if agent == MAIN:
            return [event]
        if isinstance(row.get("agent"), str):
            event["agent_type"] = row["agent"]
        parent_agent = self.agents.get(parent or "", MAIN)
        spawn = self.spawns.get(session)
        how = "the parent's earliest task call naming no session"
        if spawn is None and self.unspawned.get(parent_agent):  # a call whose metadata was not written yet
            spawn = self.unspawned[parent_agent].pop(0)
        if spawn is not None:
            message_id, call_id, prompt = spawn
            event["cause"], event["spawn_call_id"] = message_id, call_id
            if session not in self.spawns:
                event["inferred"] = {"cause": how, "tool_call_id": call_id}
            self.links.spawned(agent, call_id, message_id, prompt)
        elif parent_agent in self.last_said:
            event["cause"] = self.last_said[parent_agent]
            event["inferred"] = {"cause": "the parent session's latest entry (no task call names it)"}
        return [event]

    # --- parts -------------------------------------------------------------------------------------

    def _part(self, part_id: str, data: dict, message: dict, base: dict) -> list[Event]:
        kind = data.get("type")
        if kind == "tool":
            return self._tool(part_id, data, message, base)
        if part_id in self.taken:
            return []
        agent = base["agent_id"]
        if kind == "reasoning":
            if _ended(data, message):
                self.taken[part_id] = "text"
                self.thinking.setdefault(agent, []).append(_text(data.get("text")))
            return []
        if kind == "text":
            if not _ended(data, message):
                return []
            self.taken[part_id] = "text"
            text = _text(data.get("text"))
            if message.get("role") == "user":
                if data.get("synthetic") or data.get("ignored"):
                    return [self._entry(part_id, base, "system", text, markers=["context"])]
                event = self._entry(part_id, base, "user", text)
                self.links.prompt(event)
                return [event]
            return [self._assistant(part_id, base, message, text)]
        if kind == "step-finish":
            self.taken[part_id] = "done"
            return [self._usage(part_id, base, message, data)]
        if kind in ("step-start", "snapshot"):
            self.taken[part_id] = "done"
            return []
        self.taken[part_id] = "done"
        return [self._entry(part_id, base, "system", _other_text(kind, data), markers=[str(kind)])]

    def _tool(self, part_id: str, data: dict, message: dict, base: dict) -> list[Event]:
        state = as_dict(data.get("state"))
        status, taken = state.get("status"), self.taken.get(part_id)
        if status not in ("running", "completed", "error") or taken == "done":
            return []  # pending: its input may not be whole yet
        agent, call_id, name = base["agent_id"], str(data.get("callID") or part_id), str(data.get("tool") or "?")
        out: list[Event] = []
        metadata = as_dict(state.get("metadata"))
        if taken is None:
            event = self._assistant(part_id, base, message, "",
                                    tool_calls=[tool_call(call_id, name, state.get("input"))])
            out.append(event)
            self.taken[part_id] = "call"
            if name in SPAWNING_TOOLS:
                prompt = _text(as_dict(state.get("input")).get("prompt"))
                spawn = (part_id, call_id, prompt)
                child = metadata.get("sessionId")
                if isinstance(child, str) and child:
                    self.spawns[child] = spawn
                else:
                    self.unspawned.setdefault(agent, []).append(spawn)
        elif name in SPAWNING_TOOLS and isinstance(metadata.get("sessionId"), str):
            self.spawns.setdefault(metadata["sessionId"], (part_id, call_id, ""))
        if status == "running":
            return out
        self.taken[part_id] = "done"
        failed = status == "error"
        text = _text(state.get("error") if failed else state.get("output"))
        result = self._entry(part_id + ":result", {**base, "timestamp": _iso(as_dict(state.get("time")).get("end"))
                                                   or base["timestamp"]},
                             "tool", text, tool_call_id=call_id, name=name)
        if failed:
            result["is_error"] = True
        child = None
        if name in SPAWNING_TOOLS:
            child = metadata.get("sessionId")
            if not isinstance(child, str):
                match = _TASK_ID.search(text)
                child = match.group(1) if match else None
        end = as_dict(state.get("time")).get("end")
        self.held.append((end if isinstance(end, (int, float)) else 0, len(self.taken), result, child))
        return out

    # --- events ----------------------------------------------------------------------------------

    def _entry(self, message_id: str, base: dict, role: str, content: str, **extra) -> Event:
        event = {"message_id": message_id, "event_type": model.TRANSCRIPT_ENTRY, **base, "role": role,
                 "content": content, **extra}
        self.last_said[base["agent_id"]] = message_id
        return event

    def _assistant(self, message_id: str, base: dict, message: dict, content: str, **extra) -> Event:
        event = self._entry(message_id, base, "assistant", content, **extra)
        if _model(message):
            event["model"] = _model(message)
        thinking = self.thinking.pop(base["agent_id"], None)
        if thinking:
            event["thinking"] = thinking
        self.links.said(event)
        return event

    def _usage(self, part_id: str, base: dict, message: dict, data: dict) -> Event:
        tokens = as_dict(data.get("tokens"))
        cache = as_dict(tokens.get("cache"))
        usage = {"input_tokens": _int(tokens.get("input")), "output_tokens": _int(tokens.get("output")),
                 "cache_read_input_tokens": _int(cache.get("read")),
                 "cache_creation_input_tokens": _int(cache.get("write")),
                 "reasoning_tokens": _int(tokens.get("reasoning"))}
        text = (f"tokens: {usage['input_tokens']} in, {usage['output_tokens']} out, "
                f"{usage['cache_read_input_tokens']} cache read, {usage['cache_creation_input_tokens']} cache write")
        extra = {"usage": usage}
        cost = data.get("cost")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0:  # 0: OpenCode knew no price
            extra["cost_usd"] = cost
            text += f" · ${cost:.4f}"
        if _model(message):
            extra["model"] = _model(message)
        thinking = self.thinking.pop(base["agent_id"], None)  # reasoning that ended a step with no answer
        if thinking:
            extra["thinking"] = thinking
        return self._entry(part_id, base, "system", text, markers=["step-finish"], **extra)


def _ended(part: dict, message: dict) -> bool:
    """Whether a text or reasoning part is whole: it has an end time, or its message is complete, or is a user's."""
    return (message.get("role") == "user" or "end" in as_dict(part.get("time"))
            or "completed" in as_dict(message.get("time")) or not part.get("time"))


def _other_text(kind, data: dict) -> str:
    if kind == "file":
        return f"[file] {_text(data.get('filename') or data.get('url'))}"
    if kind == "patch":
        return "[patch] " + ", ".join(map(_text, data.get("files") or ()))
    if kind == "subtask":
        return f"[subtask @{_text(data.get('agent'))}] {_text(data.get('description'))}"
    if kind == "compaction":
        return "[compaction]"
    if kind == "agent":
        return f"[agent] {_text(data.get('name'))}"
    if kind == "retry":
        return f"[retry {data.get('attempt')}] {_text(as_dict(data.get('error')).get('data') or data.get('error'))}"
    return f"[{kind}]"


def _model(message: dict) -> str | None:
    """The model of a response as OpenCode names it, its provider first ("anthropic/claude-sonnet-4-5"): the provider
    decides the price (the same model through GitHub Copilot or OpenRouter is billed otherwise)."""
    name = message.get("modelID")
    if not isinstance(name, str) or not name:
        return None
    provider = message.get("providerID")
    return f"{provider}/{name}" if isinstance(provider, str) and provider else name


def _int(value) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
