"""GitHub Copilot CLI sessions: `~/.copilot/session-state/<session uuid>/events.jsonl`, sub-agents inline.

Shapes from github/copilot-sdk `nodejs/src/generated/session-events.ts` (docs/formats.md has the fields): a
sub-agent's events carry its `agentId` (older versions `data.parentToolCallId`), and `subagent.started` names the
call that started it, so each sub-agent sits under that call.
"""

from __future__ import annotations

import os

from viewer.core import failures, jsonio, model
from viewer.core.model import Event

from .base import Normalizer, SpawnLinks, agent_created, as_dict, tool_call

MAIN = "main"
PREFIXES = ("session.", "user.", "assistant.", "tool.", "subagent.", "hook.", "system.", "skill.", "abort")
# events that repeat or stream what another event holds whole, or only mark time: not shown
QUIET = frozenset({"assistant.turn_start", "assistant.turn_end", "assistant.message_delta", "assistant.message_start",
                   "assistant.reasoning_delta", "assistant.streaming_delta", "assistant.tool_call_delta",
                   "assistant.idle", "session.idle", "tool.execution_partial_result", "tool.execution_progress",
                   "tool.execution_start", "pending_messages.modified", "session.usage_info"})


def looks_like(record: dict) -> bool:
    kind = record.get("type")
    return (isinstance(kind, str) and kind.startswith(PREFIXES) and isinstance(record.get("data"), dict)
            and "message_id" not in record and "payload" not in record)


def member_of(path: str, record: dict) -> dict:
    """A session of one file; its project is the folder it ran in (session.start's context.cwd)."""
    folder, name = os.path.split(path)
    stem = name.removesuffix(".jsonl")
    context = as_dict(as_dict(record.get("data")).get("context"))
    cwd = context.get("gitRoot") or context.get("cwd")
    shown = os.path.basename(folder) if name == "events.jsonl" else stem  # the session's uuid
    member = {"kind": MAIN, "agent": MAIN, "folder": folder, "session": stem, "name": shown}
    if isinstance(cwd, str) and cwd.strip("/\\"):
        member["project"] = os.path.basename(cwd.rstrip("/\\"))
    return member


def agent_of(call_id: str) -> str:
    """A sub-agent's id: the call that started it (its instance id is known only to later versions)."""
    return f"agent-{call_id}"


def _result_text(data: dict) -> str:
    result, error = as_dict(data.get("result")), as_dict(data.get("error"))
    text = result.get("content") if isinstance(result.get("content"), str) else ""
    detail = result.get("detailedContent")
    if isinstance(detail, str) and detail.strip() and detail.strip() != text.strip():
        text = f"{text}\n\n[shown] {detail}" if text else detail
    if isinstance(error.get("message"), str):
        text = f"{text}\n{error['message']}".strip()
    if not text and not isinstance(data.get("result"), dict) and data.get("result") is not None:
        text = jsonio.text(data["result"])
    return text


def _arguments(value):
    if isinstance(value, str):
        try:
            return jsonio.loads(value)
        except ValueError:
            return value
    return value


class CopilotNormalizer(Normalizer):
    """Normalizes one Copilot CLI events file into native events; each line makes its events at once."""

    def __init__(self) -> None:
        super().__init__()
        self.title: str | None = None
        self._named = False  # a session.title_changed gave the title
        self.created: set[str] = set()
        self.instances: dict[str, str] = {}  # a sub-agent's instance id (`agentId`) -> its agent
        self.calls: dict[str, tuple[str, str, str]] = {}  # call id -> (agent, message id, tool)
        self.models: dict[str, str] = {}  # agent -> its model so far
        self.thinking: dict[str, list[str]] = {}  # agent -> reasoning waiting for its next message
        self.counted: dict[str, int] = {}  # agent -> output tokens its messages stated since its last usage
        self.tasks: dict[str, str] = {}  # sub-agent -> the task it was given, until it logs a prompt of its own
        self.arguments: dict[str, object] = {}  # call id -> its arguments (a sub-agent's prompt is read there)
        self.links = SpawnLinks()

    def feed(self, record: dict, line: int, member: dict, source: tuple | None = None) -> list[Event]:
        kind, data = str(record.get("type")), as_dict(record.get("data"))
        agent = self._agent(kind, record, data)
        message_id = record["id"] if isinstance(record.get("id"), str) and record["id"] else f"{agent}:{line}"
        base = {"agent_id": agent, "timestamp": record.get("timestamp"), "line": line, "file": member.get("rel"),
                "raw": record}
        out = self._create(MAIN, record) if MAIN not in self.created else []
        if agent not in self.created:
            out += self._create(agent, record)
        if kind == "subagent.started":
            return out + self._started(record, data, base)
        if kind in QUIET:
            return out + (self._unannounced(message_id, base, data) if kind == "tool.execution_start" else [])
        handler = {"user.message": self._user, "assistant.message": self._assistant, "assistant.reasoning":
                   self._reasoning, "assistant.usage": self._usage, "tool.execution_complete": self._result,
                   "subagent.completed": self._ended, "subagent.failed": self._ended}.get(kind)
        if handler is not None:
            return out + handler(message_id, base, data, kind)
        return out + [self._system(message_id, base, kind, data)]

    # --- agents ----------------------------------------------------------------------------------

    def _agent(self, kind: str, record: dict, data: dict) -> str:
        if kind.startswith("subagent."):  # about a sub-agent: in the transcript of the agent whose call started it
            owner = self.calls.get(str(data.get("toolCallId")))
            return owner[0] if owner else MAIN
        instance = record.get("agentId")
        if isinstance(instance, str) and instance:
            return self.instances.get(instance) or agent_of(instance)
        parent_call = data.get("parentToolCallId")
        return agent_of(parent_call) if isinstance(parent_call, str) and parent_call else MAIN

    def _create(self, agent: str, record: dict) -> list[Event]:
        self.created.add(agent)
        event = agent_created(agent, timestamp=record.get("timestamp"))
        if agent == MAIN:
            event["name"] = "main agent"
        else:  # its events came before a subagent.started named it: under the main agent until one does
            event["name"], event["listed_under"] = agent.removeprefix("agent-"), MAIN
        return [event]

    def _started(self, record: dict, data: dict, base: dict) -> list[Event]:
        call_id = str(data.get("toolCallId") or record.get("agentId") or record.get("id"))
        sub = agent_of(call_id)
        if isinstance(record.get("agentId"), str):
            self.instances[record["agentId"]] = sub
        if sub in self.created:
            return []
        self.created.add(sub)
        event = agent_created(sub, timestamp=record.get("timestamp"), raw=record,
                              name=str(data.get("agentDisplayName") or data.get("agentName") or sub))
        if isinstance(data.get("agentName"), str):
            event["agent_type"] = data["agentName"]
        if isinstance(data.get("model"), str):
            self.models[sub] = data["model"]
        owner = self.calls.get(call_id)
        if owner is None:
            event["listed_under"] = MAIN
            return [event]
        _, message_id, _ = owner
        event["cause"], event["spawn_call_id"] = message_id, call_id
        arguments = self.arguments.get(call_id)
        prompt = as_dict(arguments).get("prompt") or arguments or ""
        prompt = prompt if isinstance(prompt, str) else jsonio.text(prompt)
        self.links.spawned(sub, call_id, message_id, prompt)
        # The log holds no prompt of its own for a sub-agent: the task it was given stands for it, so the dialog
        # goes from the spawning call into the sub-agent.
        heard = self._entry(f"{record.get('id') or call_id}:prompt", {**base, "agent_id": sub}, "user", prompt,
                            markers=["task"])
        self.links.prompt(heard)
        heard.pop("original_text", None)
        self.tasks[sub] = prompt
        return [event, heard]

    # --- records ---------------------------------------------------------------------------------

    def _entry(self, message_id: str, base: dict, role: str, content: str, **extra) -> Event:
        return {"message_id": message_id, "event_type": model.TRANSCRIPT_ENTRY, **base, "role": role,
                "content": content, **extra}

    def _system(self, message_id: str, base: dict, kind: str, data: dict) -> Event:
        if kind == "session.start":
            context = as_dict(data.get("context"))
            if isinstance(data.get("selectedModel"), str):
                self.models[MAIN] = data["selectedModel"]
            facts = {**{k: data[k] for k in ("sessionId", "copilotVersion", "selectedModel") if isinstance(data.get(k), str)},
                     **{k: context[k] for k in ("cwd", "branch", "repository") if isinstance(context.get(k), str)}}
            text = "[session] " + " ".join(f"{k}={v}" for k, v in facts.items())
        elif kind == "session.model_change" and isinstance(data.get("newModel"), str):
            self.models[base["agent_id"]] = data["newModel"]
            text = f"[model] {data['newModel']}"
        elif kind == "session.title_changed" and isinstance(data.get("title"), str):
            self.title, self._named = " ".join(data["title"].split())[:120] or self.title, True
            text = f"[title] {data['title']}"
        else:
            said = next((data[k] for k in ("message", "content", "reason", "shutdownType", "summary")
                         if isinstance(data.get(k), str)), "")
            text = f"[{kind}] {said}".strip()
        event = self._entry(message_id, base, "system", text, markers=[kind])
        if kind in ("session.error", "abort"):
            event["is_error"] = True
            event["failure"] = failures.API_ERROR if kind == "session.error" else failures.INTERRUPTED
        return event

    def _user(self, message_id: str, base: dict, data: dict, kind: str) -> list[Event]:
        text = data.get("content") if isinstance(data.get("content"), str) else ""
        if self.tasks.pop(base["agent_id"], None) == text:
            return []  # a sub-agent's own copy of the task it was given: shown once, as its first entry
        event = self._entry(message_id, base, "user", text)
        self.links.prompt(event)
        event.pop("original_text", None)
        if base["agent_id"] == MAIN and not self._named and self.title is None and text.strip():
            self.title = " ".join(text.split())[:120]
        return [event]

    def _reasoning(self, message_id: str, base: dict, data: dict, kind: str) -> list[Event]:
        if isinstance(data.get("content"), str) and data["content"].strip():
            self.thinking.setdefault(base["agent_id"], []).append(data["content"])
        return []  # shown with the message it precedes

    def _assistant(self, message_id: str, base: dict, data: dict, kind: str) -> list[Event]:
        agent = base["agent_id"]
        text = data.get("content") if isinstance(data.get("content"), str) else ""
        event = self._entry(message_id, base, "assistant", text)
        thinking = self.thinking.pop(agent, [])
        if isinstance(data.get("reasoningText"), str) and data["reasoningText"].strip():
            thinking.append(data["reasoningText"])
        if thinking:
            event["thinking"] = thinking
        if isinstance(data.get("model"), str):
            self.models[agent] = data["model"]
        if agent in self.models:
            event["model"] = self.models[agent]
        if isinstance(data.get("outputTokens"), int):
            event["usage"] = {"output_tokens": data["outputTokens"]}
            self.counted[agent] = self.counted.get(agent, 0) + data["outputTokens"]
        calls = []
        for request in data.get("toolRequests") or ():
            request = as_dict(request)
            call_id = str(request.get("toolCallId") or "")
            name = str(request.get("name") or "?")
            arguments = _arguments(request.get("arguments"))
            calls.append(tool_call(call_id or None, name, arguments))
            if call_id:
                self.calls[call_id] = (agent, message_id, name)
                self.arguments[call_id] = arguments
        if calls:
            event["tool_calls"] = calls
        self.links.said(event)
        return [event]

    def _unannounced(self, message_id: str, base: dict, data: dict) -> list[Event]:
        """A tool run no assistant message asked for (the user's own, or a version writing no toolRequests)."""
        call_id = str(data.get("toolCallId") or "")
        if not call_id or call_id in self.calls:
            return []
        name = str(data.get("toolName") or "?")
        self.calls[call_id] = (base["agent_id"], message_id, name)
        self.arguments[call_id] = data.get("arguments")
        return [self._entry(message_id, base, "assistant", "", tool_calls=[tool_call(call_id, name, data.get("arguments"))],
                            markers=["tool.execution_start"])]

    def _result(self, message_id: str, base: dict, data: dict, kind: str) -> list[Event]:
        call_id = str(data.get("toolCallId") or "")
        owner, _, name = self.calls.get(call_id, (base["agent_id"], None, None))
        event = self._entry(message_id, {**base, "agent_id": owner}, "tool", _result_text(data),
                            tool_call_id=call_id or None)
        if name:
            event["name"] = name
        if data.get("success") is False:
            event["is_error"], event["markers"] = True, ["failed"]
        self.links.answer(event, agent_of(call_id) if agent_of(call_id) in self.created else None)
        return [event]

    def _usage(self, message_id: str, base: dict, data: dict, kind: str) -> list[Event]:
        agent = base["agent_id"]
        numbers = {k: v for k, v in data.items() if isinstance(v, int) and not isinstance(v, bool)}
        stated = self.counted.pop(agent, 0)  # output its messages already counted
        usage = {**numbers, "input_tokens": numbers.get("inputTokens", 0),
                 "output_tokens": max(numbers.get("outputTokens", 0) - stated, 0),
                 "cache_read_input_tokens": numbers.get("cacheReadTokens", 0),
                 "cache_creation_input_tokens": numbers.get("cacheWriteTokens", 0)}
        used = data.get("model") if isinstance(data.get("model"), str) else self.models.get(agent)
        text = (f"tokens: {usage['input_tokens']} in ({usage['cache_read_input_tokens']} cached), "
                f"{numbers.get('outputTokens', 0)} out")
        event = self._entry(message_id, base, "system", text, markers=["usage"], usage=usage)
        if used:
            event["model"] = used
        return [event]

    def _ended(self, message_id: str, base: dict, data: dict, kind: str) -> list[Event]:
        """A sub-agent finished, or failed: noted in the transcript of the agent that started it; a failure is
        also a problem of the session and the sub-agent's own last entry."""
        call_id = str(data.get("toolCallId") or "")
        sub = agent_of(call_id)
        name = str(data.get("agentDisplayName") or data.get("agentName") or sub)
        if kind == "subagent.completed":
            facts = " ".join(f"{k}={data[k]}" for k in ("totalToolCalls", "totalTokens", "durationMs") if k in data)
            return [self._entry(message_id, base, "system", f"[sub-agent completed] {name} {facts}".strip(),
                                markers=[kind])]
        error = str(data.get("error") or "no reason given")
        self.problems.append(("subagent_failed", f"sub-agent {name} ({sub}) failed: {error}"))
        # noted in both transcripts; the failure itself is counted once, on the result of the call that started it
        # (tool.execution_complete, success false)
        out = [self._entry(message_id, base, "system", f"[sub-agent failed] {name}: {error}", markers=[kind])]
        if sub in self.created:
            out.append(self._entry(f"{message_id}:failed", {**base, "agent_id": sub}, "system",
                                   f"[failed] {error}", markers=["failed"]))
        return out
