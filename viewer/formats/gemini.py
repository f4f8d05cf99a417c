"""Gemini CLI chats: `~/.gemini/tmp/<project>/chats/session-*.jsonl` with the sub-agents it ran in
`chats/<session id>/<agent id>.jsonl`, as one session; older chats are one `.json` document.

Shapes from google-gemini/gemini-cli `chatRecordingService.ts` (docs/formats.md has the fields). A message is
appended again, whole, each time it changes: the later copy wins, so it grows in place here. `$set` updates the
metadata, `$rewindTo` drops a message and all after it (folded, as Claude Code rewinds are).
"""

from __future__ import annotations

import glob
import os

from viewer.core import failures, jsonio, model
from viewer.core.model import RESPONSE_PART, SPAWN_LINK, Event

from .base import NOT_READABLE, Normalizer, SpawnLinks, agent_created, as_dict, first_record, tool_call

MAIN = "main"
SUFFIX = ".jsonl"
MESSAGE_TYPES = ("user", "gemini", "info", "error", "warning")
DONE = ("success", "error", "cancelled")  # a tool call's status once it has its result
NESTING = 8  # sub-agents of sub-agents: at most this many parents looked up to find the main chat


def looks_like(record: dict) -> bool:
    """A chat's metadata line (or a whole older chat document): sessionId and projectHash, no message fields."""
    return (isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str)
            and "type" not in record and "message_id" not in record)


def agent_of(agent_id: str) -> str:
    return f"agent-{agent_id}"


def _session_id(path: str) -> str | None:
    try:
        record, _ = first_record(path)
    except NOT_READABLE:
        return None
    return record.get("sessionId") if isinstance(record, dict) else None


def _main_file(chats: str, session_id: str) -> str | None:
    """The main chat of a session in `chats`: `session-<time>-<first 8 of its id>.jsonl` whose metadata names it."""
    pattern = os.path.join(glob.escape(chats), f"session-*-{glob.escape(session_id[:8])}{SUFFIX}")
    for found in sorted(glob.glob(pattern)):
        if not os.path.islink(found) and _session_id(found) == session_id:
            return found
    return None


def _project(chats: str) -> str | None:
    """The project a chats folder belongs to: the folder above it (a slug, or the sha256 of the project path)."""
    return os.path.basename(os.path.dirname(chats)) if os.path.basename(chats) == "chats" else None


def member_of(path: str, record: dict) -> dict:
    """Which session a chat file belongs to: a sub-agent's (`chats/<parent session>/<agent>.jsonl`) is its main
    chat's, found by the parent's id (a nested sub-agent's parent may itself be a sub-agent); else its own."""
    folder, name = os.path.split(path)
    stem = name.removesuffix(SUFFIX)
    here = {"kind": MAIN, "agent": MAIN, "folder": folder, "session": stem}
    if name.startswith("session-") and record.get("kind") != "subagent":
        return {**here, "project": _project(folder)}
    parent, chats = os.path.basename(folder), os.path.dirname(folder)
    for _ in range(NESTING):
        main = _main_file(chats, parent)
        if main is not None:
            return {"kind": "subagent", "agent": agent_of(stem), "folder": chats,
                    "session": os.path.basename(main).removesuffix(SUFFIX), "project": _project(chats)}
        above = [p for p in glob.glob(os.path.join(glob.escape(chats), "*", glob.escape(parent) + SUFFIX))
                 if not os.path.islink(p)]
        if not above:
            break
        parent = os.path.basename(os.path.dirname(above[0]))
    # its parent's chat is not there (yet): a session of its own
    return {**here, "project": _project(folder) or _project(os.path.dirname(folder))}


# --- the files of a session (detect.companions) ---

def folders_of(main: str) -> list[str]:
    """The folders of the main chat's sub-agents: `chats/<session id>/`, and a sub-agent's own `chats/<its id>/`
    where its sub-agents were written beside it instead."""
    chats, found = os.path.dirname(main), []
    ids = [_session_id(main)]
    for _ in range(NESTING):
        folders = [os.path.join(chats, i) for i in ids if i]
        folders = [f for f in folders if os.path.isdir(f) and not os.path.islink(f) and f not in found]
        if not folders:
            break
        found += folders
        ids = [n.removesuffix(SUFFIX) for f in folders for n in sorted(os.listdir(f)) if n.endswith(SUFFIX)]
    return found


def files_beside(main: str, inside: str | None):
    return iter(())  # sub-agents' files lie in their own folder (folders_of)


# --- what a record says ---

def text_of(content) -> str:
    """The text of a PartListUnion: a string, a part, or a list of parts (`text`; other parts as placeholders)."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content] if isinstance(content, dict) else []
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            if not part.get("thought"):
                out.append(part["text"])
        elif isinstance(part, dict) and part:
            out.append(f"[{next(iter(part))}]")
    return "\n".join(out)


def _result_text(call: dict) -> str:
    """A tool call's result as the model got it (functionResponse.response: output or error), and the display
    text the CLI showed when it says more."""
    texts = []
    for part in call.get("result") if isinstance(call.get("result"), list) else [call.get("result")]:
        response = as_dict(as_dict(as_dict(part).get("functionResponse")).get("response"))
        for key in ("output", "error", "llmContent"):
            if isinstance(response.get(key), str):
                texts.append(response[key])
                break
        else:
            if response:
                texts.append(jsonio.text(response))
            elif isinstance(part, dict) and part.get("text"):
                texts.append(str(part["text"]))
    text = "\n".join(texts)
    display = call.get("resultDisplay")
    if isinstance(display, dict):  # a file diff and the like: its text
        display = display.get("fileDiff") or display.get("output") or jsonio.text(display)
    if isinstance(display, str) and display.strip() and display.strip() != text.strip():
        text = f"{text}\n\n[shown] {display}" if text else display
    return text


def _usage(tokens) -> dict | None:
    """A response's tokens in the keys the viewer sums: input without its cached part, cached input as cache
    reads, output with the thought tokens (billed as output); the original keys kept."""
    numbers = {k: v for k, v in as_dict(tokens).items() if isinstance(v, int) and not isinstance(v, bool)}
    if not numbers:
        return None
    cached = numbers.get("cached", 0)
    return {**numbers, "input_tokens": max(numbers.get("input", 0) - cached, 0), "cache_read_input_tokens": cached,
            "output_tokens": numbers.get("output", 0) + numbers.get("thoughts", 0)}


def _thoughts(record: dict) -> list[str]:
    out = []
    for thought in record.get("thoughts") if isinstance(record.get("thoughts"), list) else ():
        thought = as_dict(thought)
        subject, description = thought.get("subject"), thought.get("description")
        text = "\n\n".join(str(t) for t in (f"**{subject}**" if subject else None, description) if t)
        if text:
            out.append(text)
    return out


def _prompt(arguments: dict) -> str:
    for key in ("prompt", "query", "objective", "task", "request"):
        if isinstance(arguments.get(key), str):
            return arguments[key]
    return jsonio.text(arguments)


class GeminiNormalizer(Normalizer):
    """Normalizes the chat files of one Gemini CLI session (main chat and sub-agents) into native events.

    Every record makes its events at once (a message appended again grows the one shown, by a RESPONSE_PART
    event), so a whole read and a live read make the same events."""

    def __init__(self) -> None:
        super().__init__()
        self.title: str | None = None
        self._summary_title: str | None = None
        self.created: set[str] = set()
        self.shown: dict[tuple[str, str], Event] = {}  # (agent, message id in the file) -> its entry
        self.sequence: dict[str, list[tuple[str, list[str]]]] = {}  # agent -> (message id, its entries' ids)
        self.results: set[tuple[str, str]] = set()  # (agent, call id) whose result entry is out
        self.entries: dict[str, list[str]] = {}  # a message's entry id -> its entries' ids (it, its results)
        self.used: set[str] = set()  # the entry ids given to messages
        self.parts = 0
        self.abandoned: dict[str, str] = {}  # entry id left behind by a rewind -> the entry it went back to
        self.rewinds: list[str] = []
        self.forked: dict[str, str] = {}  # agent -> where its last rewind went back to (its next message begins)
        self.spawns: dict[str, tuple[str, str, str, str]] = {}  # sub-agent -> (message, call id, parent, name)
        self.links = SpawnLinks()

    def time_of(self, record: dict) -> object:
        return record.get("timestamp") or record.get("startTime")

    def rewound(self, event: Event) -> str | None:
        return self.abandoned.get(event.get("message_id"))

    def feed(self, record: dict, line: int, member: dict, source: tuple | None = None) -> list[Event]:
        agent = member.get("agent", MAIN)
        base = {"agent_id": agent, "timestamp": self.time_of(record), "line": line, "file": member.get("rel"),
                "raw": record}
        out: list[Event] = []
        if agent not in self.created:
            out += self._create(agent, record)
        if isinstance(record.get("$rewindTo"), str):
            self._rewind(agent, record["$rewindTo"])
            return out
        if isinstance(record.get("$set"), dict):
            return out + self._set(agent, record["$set"], base)
        if isinstance(record.get("id"), str):
            return out + self._message(agent, record, base)
        if looks_like(record):
            out.append(self._entry(f"{agent}:{line}", base, "system", self._meta_text(record), markers=["session"]))
            for message in record.get("messages") if isinstance(record.get("messages"), list) else ():
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    out += self._message(agent, message, {**base, "timestamp": message.get("timestamp"),
                                                          "raw": message})
            return out
        keys = ", ".join(sorted(map(str, record))[:6])
        return out + [self._entry(f"{agent}:{line}", base, "system", f"[record] {keys}", markers=["record"])]

    # --- agents ----------------------------------------------------------------------------------

    def _create(self, agent: str, record: dict) -> list[Event]:
        self.created.add(agent)
        event = agent_created(agent, timestamp=self.time_of(record))
        if agent == MAIN:
            return [{**event, "name": "main agent"}]
        spawn = self.spawns.get(agent)
        if spawn is None:
            event["name"] = agent.removeprefix("agent-")
            if MAIN in self.created:  # no call names it yet: under the main agent until one does
                event["listed_under"] = MAIN
            return [event]
        message_id, call_id, _, name = spawn
        return [{**event, "name": name, "cause": message_id, "spawn_call_id": call_id}]

    def _spawned(self, agent: str, message_id: str, call: dict) -> list[Event]:
        """A tool call carrying a sub-agent's agentId: its cause (a link now when the sub-agent came first)."""
        sub = agent_of(str(call["agentId"]))
        if sub in self.spawns or sub == agent:
            return []
        name = str(call.get("displayName") or call.get("name") or sub)
        self.spawns[sub] = (message_id, str(call.get("id")), agent, name)
        self.links.spawned(sub, str(call.get("id")), message_id, _prompt(as_dict(call.get("args"))))
        if sub not in self.created:
            return []
        self.links.heard.add(sub)  # its first prompt went by unlinked
        return [{"message_id": f"{sub}:linked", "event_type": SPAWN_LINK, "agent_id": agent, "links": sub,
                 "cause": message_id, "spawn_call_id": str(call.get("id")), "name": name, "raw": None}]

    # --- records ---------------------------------------------------------------------------------

    @staticmethod
    def _meta_text(record: dict) -> str:
        parts = [f"{k}={record[k]}" for k in ("sessionId", "kind", "startTime") if isinstance(record.get(k), str)]
        return "[session] " + " ".join(parts)

    def _entry(self, message_id: str, base: dict, role: str, content: str, **extra) -> Event:
        return {"message_id": message_id, "event_type": model.TRANSCRIPT_ENTRY, **base, "role": role,
                "content": content, **extra}

    def _set(self, agent: str, changes: dict, base: dict) -> list[Event]:
        if agent == MAIN and isinstance(changes.get("summary"), str) and changes["summary"].strip():
            self.title = self._summary_title = " ".join(changes["summary"].split())[:120]
        out = []
        for message in changes.get("messages") if isinstance(changes.get("messages"), list) else ():
            if isinstance(message, dict) and isinstance(message.get("id"), str) and (agent, message["id"]) in self.shown:
                out += self._message(agent, message, {**base, "raw": message})  # masked results synced back
        return out

    def _rewind(self, agent: str, to: str) -> None:
        """Messages from `to` on are dropped (all of them when `to` is not one): their entries are folded."""
        order = self.sequence.get(agent, [])
        at = next((i for i, (gid, _) in enumerate(order) if gid == to), 0)
        if at >= len(order):
            return
        fork = order[at - 1][1][-1] if at else f"{agent}:created"
        for gid, entries in order[at:]:
            self.shown.pop((agent, gid), None)
            for entry in entries:
                self.abandoned.setdefault(entry, fork)
        del order[at:]
        self.forked[agent] = fork

    def _message(self, agent: str, record: dict, base: dict) -> list[Event]:
        gid, kind = record["id"], record.get("type")
        shown = self.shown.get((agent, gid))
        if shown is not None:
            return self._grow(agent, shown, record, base)
        message_id = gid if agent == MAIN else f"{agent}:{gid}"
        while message_id in self.used:
            message_id += "'"  # a message id again after a rewind dropped it: a new entry
        self.used.add(message_id)
        text = text_of(record.get("displayContent") if kind == "user" and record.get("displayContent") else
                       record.get("content"))
        extra: dict = {}
        fork = self.forked.pop(agent, None)
        if fork is not None:
            extra = {"rewinds_to": fork, "markers": ["rewind"]}
            self.rewinds.append(message_id)
        if kind == "user":
            event = self._entry(message_id, base, "user", text, **extra)
            self.links.prompt(event)
            event.pop("original_text", None)  # its spawn call's prompt as written: no part of it to quote
            if agent == MAIN and self._summary_title is None and self.title is None and text.strip():
                self.title = " ".join(text.split())[:120]
        elif kind == "gemini":
            event = self._entry(message_id, base, "assistant", text, **extra)
        else:
            markers = [str(kind or "message"), *extra.pop("markers", ())]
            event = self._entry(message_id, base, "system", text, markers=markers, **extra)
            if kind == "error":  # the CLI's own error line (the API failed, a quota, a retry given up)
                event["is_error"], event["failure"] = True, failures.API_ERROR
            elif kind == "info" and text.strip().startswith("Request cancelled"):  # the user stopped the turn
                event["failure"] = failures.INTERRUPTED
        self.shown[(agent, gid)] = event
        self.sequence.setdefault(agent, []).append((gid, self.entries.setdefault(message_id, [message_id])))
        out = [event]
        if kind == "gemini":
            out += self._apply(agent, event, record)
        return out

    def _grow(self, agent: str, event: Event, record: dict, base: dict) -> list[Event]:
        """The same message appended again (tokens, tool calls or results added): the entry shown takes it in."""
        text = text_of(record.get("content"))
        if text and record.get("type") != "user":  # a prompt shows what was typed (displayContent)
            event["content"] = text
        event["raw"] = record
        self.parts += 1
        part = {"message_id": f"{event['message_id']}+{self.parts}", "event_type": RESPONSE_PART,
                "agent_id": agent, "grows": event["message_id"], "timestamp": base["timestamp"], "raw": None}
        return [part] + (self._apply(agent, event, record) if record.get("type") == "gemini" else [])

    def _apply(self, agent: str, event: Event, record: dict) -> list[Event]:
        """A gemini message's thoughts, model, tokens and tool calls onto its entry; the results of calls that
        are done as tool entries (once each)."""
        thinking = _thoughts(record)
        if thinking:
            event["thinking"] = thinking
        if isinstance(record.get("model"), str):
            event["model"] = record["model"]
        usage = _usage(record.get("tokens"))
        if usage:
            event["usage"] = usage
        calls = [as_dict(c) for c in record.get("toolCalls") or () if isinstance(c, dict)]
        if calls:
            event["tool_calls"] = [tool_call(str(c.get("id")), str(c.get("name") or "?"), c.get("args"))
                                   for c in calls]
        self.links.said(event)
        out: list[Event] = []
        entries = self.entries.get(event["message_id"])
        for call in calls:
            call_id = str(call.get("id"))
            if isinstance(call.get("agentId"), str) and call["agentId"]:
                out += self._spawned(agent, event["message_id"], call)
            if (agent, call_id) in self.results or (call.get("status") not in DONE and not call.get("result")):
                continue
            self.results.add((agent, call_id))
            result = self._entry(f"{event['message_id']}#{call_id}", {**self._base_of(event), "timestamp":
                                 call.get("timestamp") or event.get("timestamp")}, "tool", _result_text(call),
                                 tool_call_id=call_id, name=str(call.get("name") or "?"))
            if call.get("status") in ("error", "cancelled"):  # cancelled: declined at its confirmation, or stopped
                result["is_error"] = True
                result["markers"] = [str(call["status"])]
                result["failure"] = failures.TOOL_ERROR if call["status"] == "error" else failures.REFUSED
            sub = agent_of(call["agentId"]) if isinstance(call.get("agentId"), str) else None
            self.links.answer(result, sub)
            if entries is not None:
                entries.append(result["message_id"])
            out.append(result)
        return out

    @staticmethod
    def _base_of(event: Event) -> dict:
        return {k: event[k] for k in ("agent_id", "line", "file", "raw")}
