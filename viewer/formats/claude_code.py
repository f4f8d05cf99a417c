"""Claude Code session transcripts: a main file plus its sub-agent files, as ONE session.

Sub-agents are inline `isSidechain` groups, `agent-<id>.jsonl` files beside the main file, or
`<sessionId>/subagents/agent-<id>.jsonl` with a `.meta.json`. The lines of one API response become one message;
tool_result blocks become tool entries paired by id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from viewer.core import failures, model
from viewer.core.model import RESPONSE_PART, SPAWN_LINK, TRANSCRIPT_ENTRY, Event
from viewer.core.packed import Shapes

from .base import Normalizer, SpawnLinks, agent_created, as_dict, content_text
from .claude_code_branches import Branches
from .claude_code_content import (
    ASSISTANT,
    INTERRUPTED_PREFIX,
    RECORD,
    SPAN,
    SUMMARY,
    SYSTEM,
    TEXT,
    StoredEntry,
    add_blocks,
    record_summary,
    result_failure,
    system_text,
    user_blocks,
    user_images,
    user_text,
)
from .claude_code_layout import MAIN, read_meta
from .claude_code_settled import SettledClaude
from .claude_code_title import Titles

SPAWNING_TOOLS = ("Task", "Agent")
SPAWN_ARGUMENTS = ("description", "prompt", "subagent_type")  # all that is read of a call's input later
_AGENT_TAIL = re.compile(r"agentId:\s*([A-Za-z0-9_-]+)")


def looks_like(record: dict) -> bool:
    return (isinstance(record.get("type"), str) and "message_id" not in record and "event" not in record
            and any(k in record for k in ("uuid", "sessionId", "leafUuid", "messageId")))


@dataclass
class _Response:
    """The lines of one API response seen so far."""

    key: tuple
    event: Event
    spans: list = field(default_factory=list)  # where its lines are (None: a line that is not addressable)


class ClaudeNormalizer(Normalizer):
    """Normalizes the records of one Claude Code session (all its files) into native events."""

    stored_type = StoredEntry
    settled_from = staticmethod(SettledClaude.from_state)

    def __init__(self) -> None:
        super().__init__()
        self.shapes = Shapes()  # its session's app's, once the session hands them over
        self.created: set[str] = set()
        self.uuid_agent: dict[str, str] = {}  # line uuid -> its sidechain (inline sidechains follow parentUuid)
        self.named: dict[str, str] = {}  # agentId of an inline sidechain -> its agent (one begun unnamed keeps its id)
        self.last_side: str | None = None  # the agent of the latest inline sidechain line
        self.answered: dict[str, str] = {}  # agent a spawning call's result named before its first line -> the call
        self.id_named: set[str] = set()  # agents named only by their id (nothing described them yet)
        self.tool_uses: dict[str, tuple[str, str, str, dict]] = {}  # toolu id -> (message id, agent, tool, input)
        self.prompts: dict[str, list[str]] = {}  # prompt of a spawning call -> its toolu ids, not yet matched
        self.links = SpawnLinks()  # by toolu id
        self.pending: dict[str, _Response] = {}  # agent -> the response being assembled
        self.responses: dict[tuple, str] = {}  # (message.id, requestId) -> message id of its first part
        # agent -> (its key, the event or stored entry) of the agent's latest response in the log: only it can grow
        self.emitted: dict[str, tuple[tuple, Event | StoredEntry]] = {}
        self._sources: dict[str, tuple] = {}  # message id -> (how its text is made, its lines) until `keep`
        self._at: tuple[str, bytes] | None = None  # the line being fed: (path, packed span)
        self.last_entry: dict[str, str] = {}  # agent -> message id of its latest entry in the log
        self.seen_ids: set[str] = set()
        self.titles = Titles()  # custom-title > ai-title > its summary > the first prompt
        self.inside: str | None = None  # the folder the session's files must lie in (from its members)
        self.branches = Branches()  # where the conversation was rewound, and what it left behind
        self.rewinds = self.branches.rewinds
        self._forked: str | None = None  # the uuid the line being fed forks at (a rewind), if it does
        # sub-agents whose .meta.json was not there when they started -> (its path, the folder it must lie in)
        self.unmet: dict[str, tuple[str, str | None]] = {}

    # --- the records -----------------------------------------------------------------------------

    def feed(self, record: dict, line: int, member: dict, source: tuple | None = None) -> list[Event]:
        """The events a record makes; `source` = (path, byte offset, length, CRC-32) of its line, if addressable."""
        self._at = (source[0], SPAN.pack(source[1], source[2], source[3])) if source is not None else None
        self.inside = member.get("inside")
        out = self._feed(record, line, member)
        for event in out:
            if event["event_type"] == TRANSCRIPT_ENTRY and "record" not in event.get("markers", ()):
                self.last_entry[event["agent_id"]] = event["message_id"]
        return out

    def flush(self) -> list[Event]:
        out = []
        for agent in list(self.pending):
            out += self._flush(agent)
        for event in out:
            self.last_entry[event["agent_id"]] = event["message_id"]
        return out + self._metas_arrived()

    def _metas_arrived(self) -> list[Event]:
        """Sub-agents whose `.meta.json` was written after their file: the call it names is their parent now, as a
        whole read would have found it (the link is no longer inferred, the name is its description)."""
        out = []
        for agent, (path, inside) in list(self.unmet.items()):
            meta, problem = read_meta(path, inside)
            if problem is not None:
                self.problems.append(problem)
            if not meta and problem is None:
                continue  # not written yet
            del self.unmet[agent]
            toolu = meta.get("toolUseId")
            if not (isinstance(toolu, str) and toolu in self.tool_uses):
                continue
            message_id, parent, _, arguments = self.tool_uses[toolu]
            if parent == agent:
                continue
            self.links.spawned(agent, toolu, message_id, str(arguments.get("prompt", "")))
            name = meta.get("description") or arguments.get("description") or arguments.get("subagent_type")
            out.append({"message_id": f"{agent}:meta", "event_type": SPAWN_LINK, "agent_id": parent, "links": agent,
                        "cause": message_id, "spawn_call_id": toolu, "raw": None,
                        **({"name": str(name)} if name else {})})
        return out

    def keep(self, event: Event) -> StoredEntry | None:
        """What the index stores for an event it adds: its content left in the file when its lines are addressable."""
        source = self._sources.pop(event["message_id"], None)
        if source is None:
            return None
        how, spans = source
        first = spans[0] if spans else None
        if first is None:
            return None
        if len(spans) == 1:  # most entries are one line: no walk over their spans
            packed = first[1]
        elif any(s is None or s[0] != first[0] for s in spans):
            return None
        else:
            packed = b"".join(s[1] for s in spans)
        item = StoredEntry(event, first[0], packed, how, self.inside, self.shapes)
        entry = self.emitted.get(event["agent_id"])
        if entry is not None and entry[1] is event:
            self.emitted[event["agent_id"]] = (entry[0], item)
        return item

    def item_of(self, part: Event):
        """What the index stores, now, for the message a RESPONSE_PART event grew (its cached copy is stale)."""
        entry = self.emitted.get(part["agent_id"])
        if entry is None:
            return None
        shown = entry[1]
        return shown if (shown.message_id if isinstance(shown, StoredEntry) else shown["message_id"]) == part["grows"] else None

    def _feed(self, record: dict, line: int, member: dict) -> list[Event]:
        out: list[Event] = []
        agent = self._agent_of(record, member)
        if agent not in self.created:
            out += self._create(agent, record, member)
        elif agent in self.answered:  # an unnamed sidechain just named as a result's agentId named it before
            out += self._late_parent(agent, self.answered.pop(agent))
        kind = record.get("type")
        message = as_dict(record.get("message"))
        self.titles.feed(record, agent == MAIN)
        self._forked = self.branches.feed(agent, record)
        base = {"agent_id": agent, "timestamp": record.get("timestamp"), "line": line, "file": member.get("rel")}
        if kind == "assistant" and message:
            return out + self._assistant(record, message, base)
        out += self._flush(agent)  # a metadata record between lines of a response does not end it (last_entry)
        if kind == "user" and message:
            out += self._user(record, message, base)
        elif kind == "system":
            subtype = record.get("subtype") or "system"
            out.append(self._entry(record, base, "system", system_text(record), how=SYSTEM, markers=[subtype]))
            if subtype == "api_error":  # the API answered an error; Claude Code retries
                out[-1]["failure"] = failures.API_ERROR
        elif kind == "summary":
            out.append(self._entry(record, base, "system", str(record.get("summary", "")), how=SUMMARY,
                                   markers=["summary"]))
        else:  # file-history-snapshot, progress, attachment, titles, and types not invented yet: kept raw
            out.append(self._entry(record, base, "system", record_summary(record), how=RECORD,
                                   markers=["record", str(kind)]))
        return out

    @property
    def title(self) -> str | None:
        return self.titles.title

    def rewound(self, event: Event) -> str | None:
        return self.branches.fork_of(event.get("raw"))

    def settle(self) -> SettledClaude | None:
        if self.pending or self.unmet or self._sources:  # a response or a sub-agent's link still to come
            return None
        return SettledClaude(self)

    def orphans(self) -> dict[str, str]:
        """Summaries whose leafUuid is not a line of this session: they may belong to another of the project."""
        return self.titles.orphans()

    def take(self, notes: dict[str, str]) -> bool:
        """Summaries of other files of the project: one whose leafUuid is a line here may title this session."""
        return self.titles.take(notes)

    # --- agents ----------------------------------------------------------------------------------

    def _agent_of(self, record: dict, member: dict) -> str:
        uuid = record.get("uuid") if isinstance(record.get("uuid"), str) else None
        if member["kind"] != MAIN:
            agent = member["agent"]
        elif record.get("isSidechain") is True:  # a sidechain group inside the main file
            agent = self.last_side = self._sidechain_of(record, uuid)
        else:
            agent = MAIN
        if uuid and agent != MAIN and member["kind"] == MAIN:
            # only inline sidechain lines are looked up (a miss means MAIN): not one entry per line of the session
            self.uuid_agent[uuid] = agent
        return agent

    def _sidechain_of(self, record: dict, uuid: str | None) -> str:
        """The agent of an inline sidechain line: the one its parentUuid chain is of; where the chain breaks (a
        parent never written: neither a sidechain's line nor another line of the file), the latest sidechain's.

        2.0.x lines name their agent (`agentId`), some only: the first line naming it names the sidechain its
        chain (or, broken, the latest unnamed one) began, so it stays one agent, which a Task result naming that
        agentId joins to its call."""
        parent = record.get("parentUuid")
        agent = self.uuid_agent.get(parent) if isinstance(parent, str) else None
        if agent is None and isinstance(parent, str) and parent not in self.branches.where:
            agent = self.last_side  # a broken chain
        named = record.get("agentId")
        if isinstance(named, str) and named:
            if named not in self.named:
                begun = agent is not None and agent.startswith("sidechain-") and agent not in self.named.values()
                self.named[named] = agent if begun else "agent-" + named
                if begun and "agent-" + named in self.answered:  # a result named it first: joined in `_feed`
                    self.answered[agent] = self.answered.pop("agent-" + named)
            return self.named[named]
        return agent or f"sidechain-{(uuid or str(len(self.created)))[:8]}"

    def _create(self, agent: str, record: dict, member: dict) -> list[Event]:
        if agent != MAIN and MAIN not in self.created:
            # a sub-agent's line before any of the main agent's (a 2.0.x warmup agent file is written before the
            # session's first prompt): the main agent is made first, so the sub-agent is listed under it
            return self._create(MAIN, record, member) + self._create(agent, record, member)
        self.created.add(agent)
        event: Event = agent_created(agent, timestamp=record.get("timestamp"))
        if agent == MAIN:
            event["name"] = "main agent"
            return [event]
        meta, problem = read_meta(member.get("meta_path"), member.get("inside"))
        if problem is not None:
            self.problems.append(problem)
        elif not meta and member.get("meta_path"):  # not written yet (or not JSON yet): looked for again at flush
            self.unmet[agent] = (member["meta_path"], member.get("inside"))
        toolu, how = meta.get("toolUseId"), None
        if not (isinstance(toolu, str) and toolu in self.tool_uses) and agent in self.answered:
            toolu, how = self.answered.pop(agent), "the result of a spawning call names its agentId"
        elif not (isinstance(toolu, str) and toolu in self.tool_uses):
            toolu = None
            prompt = self._first_text(record)
            candidates = self.prompts.get(prompt) if prompt else None
            if candidates:
                toolu, how = candidates[0], "a Task call whose prompt is its first message"
        if toolu is not None:
            for waiting in self.prompts.values():
                if toolu in waiting:
                    waiting.remove(toolu)
            message_id, parent, _, arguments = self.tool_uses[toolu]
            early = self._flush(parent)  # the spawning response goes in before the sub-agent naming it
            event["cause"] = message_id
            event["spawn_call_id"] = toolu
            self.links.spawned(agent, toolu, message_id, str(arguments.get("prompt", "")))
            if how:
                event["inferred"] = {"cause": how, "tool_call_id": toolu}
            name = arguments.get("description") or arguments.get("subagent_type")
        else:  # no call names it (yet): shown under the main agent, not as a root above it
            name, early = None, []
            event["listed_under"] = MAIN
        event["name"] = str(meta.get("description") or name or meta.get("agentType") or agent)
        if event["name"] == agent:
            self.id_named.add(agent)  # a call joining it later names it
        if meta.get("agentType"):
            event["agent_type"] = meta["agentType"]
        return early + [event]

    @staticmethod
    def _first_text(record: dict) -> str | None:
        message = as_dict(record.get("message"))
        if record.get("type") != "user":
            return None
        text, _ = content_text(message.get("content"))
        return text or None

    # --- messages --------------------------------------------------------------------------------

    def _message_id(self, record: dict, at: dict, suffix: str = "") -> str:
        """A record's uuid; a record without one is named by its place (its file's agent and line), which is the
        same however the file was read (whole, or as it was written)."""
        base = record.get("uuid") if isinstance(record.get("uuid"), str) else None
        if base is None:
            place = at["line"] if at["agent_id"] == MAIN else f"{at['agent_id']}:{at['line']}"
            base = f"{record.get('type')}:{record.get('leafUuid') or record.get('messageId') or place}"
        message_id = base + suffix
        while message_id in self.seen_ids:
            message_id += "'"
        self.seen_ids.add(message_id)
        return message_id

    def _entry(self, record: dict, base: dict, role: str, content: str, suffix: str = "", how=None, **extra) -> Event:
        """An entry of one record; `how` its content is made from the record (None: an assistant message,
        made of several records, whose lines are noted as they come)."""
        message_id = self._message_id(record, base, suffix)
        if how is not None:
            self._sources[message_id] = (how, [self._at])
        return {"message_id": message_id, "event_type": model.TRANSCRIPT_ENTRY,
                **base, "role": role, "content": content, "raw": record, **extra}

    def _assistant(self, record: dict, message: dict, base: dict) -> list[Event]:
        agent = base["agent_id"]
        key = (message.get("id"), record.get("requestId"))
        current = self.pending.get(agent)
        out: list[Event] = []
        if current is None or current.key != key or key == (None, None):
            out += self._flush(agent)
            entry = self.emitted.get(agent) if key != (None, None) else None
            shown = entry[1] if entry is not None and entry[0] == key else None
            shown_id = None if shown is None else shown.message_id if isinstance(shown, StoredEntry) else shown["message_id"]
            if shown is not None and self.last_entry.get(agent) == shown_id and not out:
                # A later line of a response already in the log, nothing of this agent in between: it grows
                # in place, and a part event tells the index (new tool calls) and open pages (redraw it).
                self._grow(agent, key, shown, record, message)
                part = {"message_id": self._message_id(record, base, "+part"), "event_type": RESPONSE_PART,
                        "agent_id": agent, "grows": shown_id, "timestamp": record.get("timestamp"),
                        "raw": None}
                return [part]
            continued = self.responses.get(key) if key != (None, None) else None
            event = self._entry(record, base, "assistant", "", model=message.get("model"), thinking=[],
                                request_id=record.get("requestId"), api_message_id=message.get("id"))
            if record.get("isApiErrorMessage") is True:  # the error Claude Code shows in place of a response
                event["failure"] = failures.API_ERROR
            if continued:  # a later part of a response already shown: usage was counted there
                event["continues"] = continued
            else:
                self.responses[key] = event["message_id"]
            event["raw"] = []
            current = self.pending[agent] = _Response(key, event)
        current.spans.append(self._at)
        self._apply(current.event, record, message, agent)
        return out

    def _grow(self, agent: str, key: tuple, shown: Event | StoredEntry, record: dict, message: dict) -> None:
        """One more line of a response already in the log: the message takes it in."""
        event = shown.load() if isinstance(shown, StoredEntry) else shown
        if not isinstance(event.get("raw"), list):  # its file changed under it: what is left of it grows
            event["raw"] = []
        self._apply(event, record, message, agent)
        if not event["thinking"]:
            del event["thinking"]
        self.links.said(event)
        if isinstance(shown, StoredEntry):
            if self._at is not None and self._at[0] == shown.path:
                shown.grow(event, self._at[1])
            else:  # a line that cannot be read again: the message is kept whole from now on
                self.emitted[agent] = (key, event)

    def _apply(self, event: Event, record: dict, message: dict, agent: str) -> None:
        """Add one line's content blocks to the message of its response."""
        event.setdefault("thinking", [])
        if isinstance(message.get("usage"), dict) and "continues" not in event:
            event["usage"] = message["usage"]  # the same usage is repeated on every line: keep one
        if message.get("stop_reason"):
            event["stop_reason"] = message["stop_reason"]
        for call_id, name, arguments in add_blocks(event, record, message):
            if call_id:
                # only what a spawned sub-agent reads of its call is kept (not a file written, say)
                kept = {k: arguments[k] for k in SPAWN_ARGUMENTS if k in arguments}
                self.tool_uses[call_id] = (event["message_id"], agent, str(name), kept)
                prompt = arguments.get("prompt")
                if name in SPAWNING_TOOLS and isinstance(prompt, str):
                    self.prompts.setdefault(prompt, []).append(call_id)

    def _flush(self, agent: str) -> list[Event]:
        current = self.pending.pop(agent, None)
        if current is None:
            return []
        event = current.event
        if not event["thinking"]:
            del event["thinking"]
        if "continues" not in event and current.key != (None, None):
            self.emitted[agent] = (current.key, event)
        self._sources[event["message_id"]] = (ASSISTANT, current.spans)
        self.links.said(event)
        return [event]

    def _user(self, record: dict, message: dict, base: dict) -> list[Event]:
        agent = base["agent_id"]
        texts, results = user_blocks(message)
        text_images, result_images = user_images(message)
        out: list[Event] = []
        read = []  # (block, call id, text, images, the sub-agent whose answer it carries) of each result
        for block in results:  # a sub-agent's answer goes in before the result that carries it
            call_id = block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else None
            text, _ = content_text(block.get("content"))
            sub = self._subagent_for(record, call_id, text)
            read.append((block, call_id, text, result_images[len(read)], sub))
            if sub and sub != agent:
                out += self._flush(sub)
                out += self._late_parent(sub, call_id)
                if sub not in self.created and call_id in self.tool_uses:  # its lines come later: joined then
                    self.answered[sub] = call_id
        if texts:
            text, _ = content_text(texts)
            text, markers = user_text(text)
            role = "user"
            if record.get("isCompactSummary"):
                role, markers = "system", ["compact summary"]
            elif record.get("isMeta"):
                markers = ["meta", *markers]
            extra = {"rewinds_to": self._forked} if self._forked else {}  # went back to that message, on from here
            if self._forked:
                markers = [*markers, "rewind"]
            if role == "user" and text.lstrip().startswith(INTERRUPTED_PREFIX):  # the user stopped the turn
                extra["failure"] = failures.INTERRUPTED
            event = self._entry(record, base, role, text, "" if not results else "#text", TEXT, markers=markers,
                                **extra)
            if text_images:
                event["images"] = text_images  # where each lies in the record: its bytes stay in the file
            if role == "user":
                self.links.prompt(event)
            out.append(event)
        for i, (block, call_id, text, images, sub) in enumerate(read):
            event = self._entry(record, base, "tool", text, "" if len(results) == 1 and not texts else f"#{i}", i,
                                tool_call_id=call_id)
            if block.get("is_error"):
                event["is_error"], event["failure"] = True, result_failure(text)
            if images:
                event["images"] = images
            self.links.answer(event, sub)
            out.append(event)
        return out

    def _late_parent(self, sub: str, call_id: str | None) -> list[Event]:
        """A sub-agent no call was found for at its start, named by the result of a spawning call: link it now."""
        if sub not in self.created or sub in self.links.spawn or call_id not in self.tool_uses:
            return []
        message_id, parent, _, arguments = self.tool_uses[call_id]
        if parent == sub:
            return []
        self.links.spawned(sub, call_id, message_id, str(arguments.get("prompt", "")))
        self.links.heard.add(sub)  # its first prompt went by unlinked
        name = arguments.get("description") or arguments.get("subagent_type")
        named = {"name": str(name)} if name and sub in self.id_named else {}
        return [{"message_id": f"{sub}:linked", "event_type": SPAWN_LINK, "agent_id": parent, "links": sub,
                 "cause": message_id, "spawn_call_id": call_id, "raw": None, **named,
                 "inferred": {"cause": "the result of a spawning call names its agentId", "tool_call_id": call_id}}]

    def _subagent_for(self, record: dict, call_id: str | None, text: str) -> str | None:
        """The sub-agent whose final answer a tool result carries, first way that works."""
        if call_id and call_id in self.links.by_call:
            return self.links.by_call[call_id]
        result = record.get("toolUseResult")
        if isinstance(result, dict) and isinstance(result.get("agentId"), str):
            return self._agent_named(result["agentId"])
        if call_id and self.tool_uses.get(call_id, ("", "", ""))[2] in SPAWNING_TOOLS:
            named = record.get("agentId")
            if record.get("isSidechain") is False and isinstance(named, str) and named:
                return self._agent_named(named)  # a main line's own agentId names the inline sidechain that answered
            match = _AGENT_TAIL.search(text)
            if match:
                return self._agent_named(match.group(1))
        return None

    def _agent_named(self, agent_id: str) -> str:
        """The agent an `agentId` names: its file's, or the inline sidechain that took it."""
        return self.named.get(agent_id, "agent-" + agent_id)
