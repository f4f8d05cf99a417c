"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`): a root thread and the
sub-agent threads it spawned (and theirs) as ONE session.

Each line is `{"timestamp", "type", "payload"}` (`session_meta`, `turn_context`, `response_item`, `event_msg`,
`compacted`), as openai/codex's protocol crate defines them; a sub-agent thread's `session_meta.source` names its
parent thread, whose `spawn_agent` call is its cause.
"""

from __future__ import annotations

import glob
import os
import re

import orjson

from viewer.core import failures, model
from viewer.core.model import Event

from .base import NOT_READABLE, Normalizer, SpawnLinks, agent_created, as_dict, first_record, tool_call

MAIN = "main"
KINDS = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
SPAWNING_TOOLS = ("spawn_agent",)
# event_msg payloads that repeat a response item (shown once, from the response item)
REPEATS = frozenset({"user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
                     "agent_reasoning_section_break"})
# text Codex sends as the user's that no person typed (instructions, the environment): shown as context
CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions",
                    "<turn_aborted>", "<user_shell_command>")
# event_msg kinds that record a failure (core/failures.py): the API's errors and retries, a turn stopped
FAILED_EVENTS = {"error": failures.API_ERROR, "stream_error": failures.API_ERROR, "turn_aborted": failures.INTERRUPTED}
# a shell's exit status as a tool output's text says it (newer rollouts), on one of its first lines
_EXIT_LINE = re.compile(r"^(?:Exit code|Process exited with code):? (-?\d+)\s*$", re.MULTILINE)
PARENT_DEPTH = 16  # sub-agents of sub-agents: at most this many parents looked up to find the root thread


def looks_like(record: dict) -> bool:
    return record.get("type") in KINDS and isinstance(record.get("payload"), dict) and "message_id" not in record


def _parent_thread(record: dict) -> str | None:
    """The thread that spawned this one, from a `session_meta` record's source."""
    payload = as_dict(record.get("payload"))
    if record.get("type") != "session_meta":
        return None
    spawn = as_dict(as_dict(as_dict(payload.get("source")).get("subagent")).get("thread_spawn"))
    parent = spawn.get("parent_thread_id") or payload.get("parent_thread_id")
    return parent if isinstance(parent, str) and parent else None


def thread_agent(thread_id: str) -> str:
    """A sub-agent thread's agent id: its id's random tail (UUID v7 ids of threads spawned together share
    their first, time-based, digits)."""
    return f"thread-{thread_id.rsplit('-', 1)[-1]}"


def _file_of_thread(folder: str, thread_id: str) -> str | None:
    """The rollout file of a thread: beside the file naming it, or in the day folders next to it."""
    pattern = f"rollout-*-{glob.escape(thread_id)}.jsonl"
    days = [folder]
    parent = os.path.dirname(folder)
    try:  # a thread spawned just before midnight: its parent's file is one day folder back
        siblings = sorted(os.listdir(parent)) if os.path.basename(parent).isdigit() else []
    except OSError:
        siblings = []
    here = os.path.basename(folder)
    if here in siblings:
        i = siblings.index(here)
        days += [os.path.join(parent, d) for d in siblings[max(0, i - 1):i]]
    for day in days:
        found = sorted(glob.glob(os.path.join(glob.escape(day), pattern)))
        if found:
            return found[0]
    return None


def member_of(path: str, record: dict) -> dict:
    """Which session a rollout belongs to: its root thread's (a sub-agent thread's file names its parent, whose
    file names its own, and so on); the root's file is the main one."""
    folder, filename = os.path.split(path)
    main, parent, agent = path, _parent_thread(record), MAIN
    if parent is not None:
        thread = as_dict(record.get("payload")).get("id")
        agent = thread_agent(thread if isinstance(thread, str) else filename)
    for _ in range(PARENT_DEPTH):
        if parent is None:
            break
        found = _file_of_thread(os.path.dirname(main), parent)
        if found is None or os.path.islink(found):  # a link may lead out of the folder: not followed here  # its parent's file is not there (yet): shown as a session of its own
            main, agent = path, MAIN
            break
        try:
            first, _ = first_record(found)
        except NOT_READABLE:
            main, agent = path, MAIN
            break
        main, parent = found, _parent_thread(first) if isinstance(first, dict) else None
    kind = MAIN if agent == MAIN else "subagent"
    return {"kind": kind, "agent": agent, "folder": os.path.dirname(main),
            "session": os.path.basename(main).removesuffix(".jsonl")}


def _text(content) -> str:
    """The text of a message's content items (`input_text`, `output_text`; images as placeholders)."""
    if isinstance(content, str):
        return content
    parts = []
    for item in content if isinstance(content, list) else []:
        item = as_dict(item)
        if isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif item.get("type") in ("input_image", "image"):
            parts.append("[image]")
    return "\n".join(parts)


def _output_text(output) -> str:
    """A tool output: a string, `{"content", "success"}` (older rollouts), or content items."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return output["content"]
    if isinstance(output, list):
        return _text(output)
    return "" if output is None else orjson.dumps(output).decode()


def failed_output(output) -> bool:
    """Whether a tool output says its command failed: `{"success": false}` (older rollouts), a non-zero
    `metadata.exit_code` in the JSON text Codex writes, or a non-zero "Exit code: N" line near its start."""
    if isinstance(output, dict):
        return output.get("success") is False
    if not isinstance(output, str):
        return False
    if output.startswith("{") and '"exit_code"' in output:
        try:
            code = as_dict(as_dict(orjson.loads(output)).get("metadata")).get("exit_code")
        except orjson.JSONDecodeError:
            code = None
        return isinstance(code, int) and code != 0
    found = _EXIT_LINE.search(output[:400])
    return found is not None and int(found.group(1)) != 0


def _arguments(value):
    """A call's arguments: the JSON string Codex writes, parsed when it is JSON."""
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _usage(info: dict) -> dict | None:
    """A turn's usage from a token_count's `last_token_usage`, in the keys the viewer sums (input without the
    cached part; cached input as cache reads), the original keys kept."""
    last = as_dict(info.get("last_token_usage"))
    if not last:
        return None
    numbers = {k: v for k, v in last.items() if isinstance(v, int)}
    cached = numbers.get("cached_input_tokens", 0)
    return {**numbers, "input_tokens": max(numbers.get("input_tokens", 0) - cached, 0),
            "cache_read_input_tokens": cached, "output_tokens": numbers.get("output_tokens", 0)}


class CodexNormalizer(Normalizer):
    """Normalizes the rollouts of one Codex thread tree into native events; each item one event (no item grows,
    so a whole read and a live read make the same events)."""

    def __init__(self) -> None:
        super().__init__()
        self.title: str | None = None
        self.created: set[str] = set()
        self.threads: dict[str, str] = {}  # thread id -> agent id
        self.models: dict[str, str] = {}  # agent -> model of its current turn
        self.thinking: dict[str, list[str]] = {}  # agent -> reasoning summaries waiting for the item they precede
        self.calls: dict[tuple[str, str], tuple[str, str]] = {}  # (agent, call id) -> (message id, tool)
        self.unspawned: dict[str, list[tuple[str, str, str]]] = {}  # agent -> its spawn calls (id, message, prompt)
        self.last_totals: dict[str, object] = {}  # agent -> the total usage of its latest token_count
        self.last_said: dict[str, str] = {}  # agent -> message id of its latest entry
        self.links = SpawnLinks()

    def feed(self, record: dict, line: int, member: dict, source: tuple | None = None) -> list[Event]:
        agent = member.get("agent", MAIN)
        out: list[Event] = []
        kind, payload = record.get("type"), as_dict(record.get("payload"))
        base = {"agent_id": agent, "timestamp": record.get("timestamp"), "line": line, "file": member.get("rel"),
                "raw": record}
        message_id = f"{agent}:{line}"
        if agent not in self.created:
            out += self._create(agent, record, payload)
        if kind == "session_meta":
            if isinstance(payload.get("id"), str):
                self.threads.setdefault(payload["id"], agent)
            return out + [self._system(message_id, base, self._meta_text(payload), "session_meta")]
        if kind == "turn_context":
            if isinstance(payload.get("model"), str):
                self.models[agent] = payload["model"]
            text = " ".join(f"{k}={payload[k]}" for k in ("model", "effort", "cwd", "approval_policy")
                            if isinstance(payload.get(k), str))
            return out + [self._system(message_id, base, f"[turn] {text}", "turn_context")]
        if kind == "compacted":
            event = self._system(message_id, base, str(payload.get("message") or "Conversation compacted"),
                                 "compacted")
            return out + [event]
        if kind == "event_msg":
            return out + self._event_msg(message_id, base, payload)
        if kind == "response_item":
            return out + self._item(message_id, base, payload)
        return out + [self._system(message_id, base, f"[{kind}]", "record", str(kind))]

    # --- agents ----------------------------------------------------------------------------------

    def _create(self, agent: str, record: dict, payload: dict) -> list[Event]:
        self.created.add(agent)
        event = agent_created(agent, timestamp=record.get("timestamp"))
        if agent == MAIN:
            event["name"] = "main agent"
            return [event]
        spawn = as_dict(as_dict(as_dict(payload.get("source")).get("subagent")).get("thread_spawn"))
        event["name"] = str(spawn.get("agent_nickname") or spawn.get("agent_role") or agent)
        if isinstance(spawn.get("agent_role"), str):
            event["agent_type"] = spawn["agent_role"]
        parent = self.threads.get(_parent_thread(record) or "", MAIN)
        waiting = self.unspawned.get(parent)
        if waiting:  # the parent's earliest spawn call no thread answered yet
            call_id, message_id, prompt = waiting.pop(0)
            event["cause"], event["spawn_call_id"] = message_id, call_id
            event["inferred"] = {"cause": "the parent thread's earliest spawn_agent call not yet matched",
                                 "tool_call_id": call_id}
            self.links.spawned(agent, call_id, message_id, prompt)
        elif parent in self.last_said:
            event["cause"] = self.last_said[parent]
            event["inferred"] = {"cause": "the parent thread's latest entry (no spawn_agent call found)"}
        return [event]

    # --- records ---------------------------------------------------------------------------------

    def _entry(self, message_id: str, base: dict, role: str, content: str, **extra) -> Event:
        event = {"message_id": message_id, "event_type": model.TRANSCRIPT_ENTRY, **base, "role": role,
                 "content": content, **extra}
        self.last_said[base["agent_id"]] = message_id
        return event

    def _system(self, message_id: str, base: dict, text: str, *markers: str) -> Event:
        return self._entry(message_id, base, "system", text, markers=list(markers))

    @staticmethod
    def _meta_text(payload: dict) -> str:
        parts = [f"{k}={payload[k]}" for k in ("id", "cwd", "originator", "cli_version", "model_provider")
                 if isinstance(payload.get(k), str)]
        return "[session] " + " ".join(parts)

    def _assistant(self, message_id: str, base: dict, content: str, **extra) -> Event:
        agent = base["agent_id"]
        event = self._entry(message_id, base, "assistant", content, **extra)
        if agent in self.models:
            event["model"] = self.models[agent]
        thinking = self.thinking.pop(agent, None)
        if thinking:
            event["thinking"] = thinking
        self.links.said(event)
        return event

    def _item(self, message_id: str, base: dict, payload: dict) -> list[Event]:
        agent, kind = base["agent_id"], payload.get("type")
        if kind == "message":
            role = payload.get("role")
            text = _text(payload.get("content"))
            if role == "assistant":
                return [self._assistant(message_id, base, text)]
            if role == "user" and not text.lstrip().startswith(CONTEXT_PREFIXES):
                event = self._entry(message_id, base, "user", text)
                self.links.prompt(event)
                # a sub-agent thread's first prompt is its spawn call's message as written: no part of it to quote
                # (and an OTLP export read back carries none: the same dialog either way)
                event.pop("original_text", None)
                if self.title is None and agent == MAIN and text.strip():
                    self.title = " ".join(text.split())[:120]
                return [event]
            return [self._system(message_id, base, text, "context" if role == "user" else str(role or "message"))]
        if kind == "reasoning":
            summary = [s.get("text") for s in map(as_dict, payload.get("summary") or ()) if isinstance(s.get("text"), str)]
            shown = summary or [c.get("text") for c in map(as_dict, payload.get("content") or ())
                                if isinstance(c.get("text"), str)]
            self.thinking.setdefault(agent, []).extend(shown or ["[encrypted reasoning]"])
            return []  # shown with the item it precedes
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            call_id = payload.get("call_id") if isinstance(payload.get("call_id"), str) else None
            name = str(payload.get("name") or ("shell" if kind == "local_shell_call" else "?"))
            arguments = _arguments(payload.get("arguments") if kind == "function_call" else
                                   payload.get("input") if kind == "custom_tool_call" else payload.get("action"))
            event = self._assistant(message_id, base, "", tool_calls=[tool_call(call_id, name, arguments)])
            if call_id:
                self.calls[(agent, call_id)] = (message_id, name)
                if name in SPAWNING_TOOLS:
                    prompt = as_dict(arguments).get("message") or as_dict(arguments).get("prompt") or ""
                    self.unspawned.setdefault(agent, []).append((call_id, message_id, str(prompt)))
            return [event]
        if kind in ("function_call_output", "custom_tool_call_output"):
            call_id = payload.get("call_id") if isinstance(payload.get("call_id"), str) else None
            event = self._entry(message_id, base, "tool", _output_text(payload.get("output")), tool_call_id=call_id)
            if failed_output(payload.get("output")):
                event["is_error"], event["failure"] = True, failures.TOOL_ERROR
            _, name = self.calls.get((agent, call_id or ""), (None, None))
            if name is not None:
                event["name"] = name
            return [event]
        if kind == "web_search_call":
            query = as_dict(payload.get("action")).get("query")
            return [self._assistant(message_id, base, f"[web search] {query or ''}".strip(), markers=["web_search"])]
        return [self._system(message_id, base, f"[{kind}]", "record", str(kind))]

    def _event_msg(self, message_id: str, base: dict, payload: dict) -> list[Event]:
        agent, kind = base["agent_id"], str(payload.get("type"))
        if kind in REPEATS:
            return []
        if kind == "token_count":
            info = as_dict(payload.get("info"))
            totals = info.get("total_token_usage")
            if not info or totals == self.last_totals.get(agent):  # rate limits only, or the same count again
                return []
            self.last_totals[agent] = totals
            usage = _usage(info)
            if usage is None:
                return []
            text = (f"tokens: {usage['input_tokens'] + usage['cache_read_input_tokens']} in "
                    f"({usage['cache_read_input_tokens']} cached), {usage['output_tokens']} out")
            window = info.get("model_context_window")
            if isinstance(window, int):
                text += f" · context window {window}"
            extra = {"usage": usage}
            if isinstance(window, int):
                extra["context_window"] = window  # the log's own window: what a context bar is drawn against
            if agent in self.models:
                extra["model"] = self.models[agent]
            return [self._entry(message_id, base, "system", text, markers=["token_count"], **extra)]
        text = payload.get("message") or payload.get("last_agent_message") or payload.get("reason") or ""
        event = self._system(message_id, base, f"[{kind}] {text}".strip(), "event", kind)
        if kind in FAILED_EVENTS:
            event["failure"] = FAILED_EVENTS[kind]
        return [event]


# --- the files of a session (detect.companions) ---

def folders_of(main: str) -> list[str]:
    return []  # sub-agent threads' files lie beside the root's, among other rollouts


def files_beside(main: str, inside: str | None):
    """The rollouts beside a root thread's file that belong to its session (its sub-agent threads), in name order."""
    folder, stem = os.path.split(main)
    stem = stem.removesuffix(".jsonl")
    for beside in sorted(glob.glob(os.path.join(glob.escape(folder), "rollout-*.jsonl"))):
        if beside == main:
            continue
        try:
            record, _ = first_record(beside, inside)
        except NOT_READABLE:
            continue
        if isinstance(record, dict) and _parent_thread(record) and member_of(beside, record)["session"] == stem:
            yield beside
