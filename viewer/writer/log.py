"""The event stream of seed 000: LoggedString and SessionLog, the file a session is written to.

A SessionLog appends events to one JSONL file, allocates every agent_NNN and msg_NNN id and keeps the registry of
every agent; `SessionLog.load` restores them, so a resumed session never reuses an id.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

MESSAGE_ID = re.compile(r"msg_(\d+)\Z")
AGENT_ID = re.compile(r"agent_(\d+)\Z")
# Keys a Session writes itself: a message dict must not smuggle them in (an event never
# carries both substance and cause, and ids are the Session's alone).
RESERVED = frozenset({"message_id", "event_type", "agent_id", "substance", "cause"})


class LoggedString(str):
    """A str that carries the message_id of its substance (its own id, or its original's)."""

    message_id: str | None

    def __new__(cls, content: str, message_id: str | None = None) -> "LoggedString":
        self = super().__new__(cls, content)
        self.message_id = message_id
        return self

    def __repr__(self) -> str:
        return f"LoggedString({str.__repr__(self)}, message_id={self.message_id!r})"


@dataclass
class AgentRecord:
    """What the registry knows of an agent without loading its transcript."""

    agent_id: str
    name: str | None = None
    cause: str | list[str] | None = None
    language_model: str | None = None
    parent_id: str | None = None
    created: bool = False  # an agent_created event was logged for it


def _number(pattern: re.Pattern, value: Any) -> int:
    match = pattern.match(value) if isinstance(value, str) else None
    return int(match.group(1)) if match else 0


def read_events(session_file: str | os.PathLike) -> Iterator[dict]:
    """The events of a session file in order; blank, broken or non-object lines are skipped."""
    with open(session_file, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                yield event


def transcripts_of(events: Iterable[dict]) -> dict[str, list[dict]]:
    """Every agent's transcript in these events, as the messages it was given."""
    out: dict[str, list[dict]] = {}
    for event in events:
        if event.get("event_type") == "transcript_entry" and isinstance(event.get("agent_id"), str):
            message = {k: v for k, v in event.items() if k not in RESERVED}
            out.setdefault(event["agent_id"], []).append(message)
    return out


class SessionLog:
    """Event-stream backed state of a multi-agent system: ids, registry, logging."""

    def __init__(self, session_file: str | os.PathLike):
        """A new session. An existing log must be resumed with `Session.load`, which restores the counters."""
        path = os.fspath(session_file)
        if os.path.exists(path) and os.path.getsize(path) > 0:
            raise FileExistsError(f"{path} already holds a session: resume it with Session.load")
        self._reset(path)

    def _reset(self, path: str) -> None:
        self.path = path
        self.message_counter = 0
        self.agent_counter = 0
        self.registry: dict[str, AgentRecord] = {}  # every agent that ever existed
        self.live: dict[str, Any] = {}  # the Agents in memory now (agent.py builds on this module)
        self._owner: dict[str, str] = {}  # tool-call message id -> agent id (resolves parents)
        self._file = None

    # --- restoring ---------------------------------------------------------------------------

    @classmethod
    def load(cls, session_file: str | os.PathLike) -> "SessionLog":
        """A session over an existing file: both counters and the registry restored in one pass."""
        return cls._restore(os.fspath(session_file), read_events(session_file))

    @classmethod
    def _restore(cls, path: str, events: Iterable[dict]) -> "SessionLog":
        session = cls.__new__(cls)
        session._reset(path)
        for event in events:
            session._note(event)
        for record in session.registry.values():
            session._resolve_parent(record)
        return session

    def _note(self, event: dict) -> None:
        """Account for one event, read back or just written."""
        self.message_counter = max(self.message_counter, _number(MESSAGE_ID, event.get("message_id")))
        agent_id = event.get("agent_id")
        if not isinstance(agent_id, str):
            return
        self.agent_counter = max(self.agent_counter, _number(AGENT_ID, agent_id))
        record = self.registry.get(agent_id)
        if record is None:
            record = self.registry[agent_id] = AgentRecord(agent_id)
        if event.get("event_type") == "agent_created":
            record.created = True
            record.name = event.get("name", record.name)
            record.cause = event.get("cause", record.cause)
            record.language_model = event.get("language_model", record.language_model)
        elif event.get("tool_calls") and isinstance(event.get("message_id"), str):
            self._owner[event["message_id"]] = agent_id

    def _resolve_parent(self, record: AgentRecord) -> None:
        cause = record.cause[0] if isinstance(record.cause, list) and record.cause else record.cause
        record.parent_id = self._owner.get(cause) if isinstance(cause, str) else None

    # --- ids ---------------------------------------------------------------------------------

    def allocate_agent_id(self) -> str:
        """A new agent id no agent in the log or in memory has ever had."""
        self.agent_counter += 1
        agent_id = f"agent_{self.agent_counter:03d}"
        self.registry[agent_id] = AgentRecord(agent_id)
        return agent_id

    def _allocate_message_id(self) -> str:
        self.message_counter += 1
        return f"msg_{self.message_counter:03d}"

    # --- logging -------------------------------------------------------------------------------

    def _append(self, event_type: str, agent_id: str, fields: dict) -> str:
        message_id = self._allocate_message_id()
        event = {"message_id": message_id, "event_type": event_type, "agent_id": agent_id}
        event.update((k, v) for k, v in fields.items() if v is not None)
        assert not ("substance" in event and "cause" in event), event
        if self._file is None:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            self._file = open(self.path, "a", encoding="utf-8", newline="\n")
        # One write per complete line, flushed: a reader tailing the file never waits on a buffer.
        self._file.write(json.dumps(event, ensure_ascii=False) + "\n")
        self._file.flush()
        self._note(event)
        return message_id

    def log_agent_created(self, agent_id: str, cause: str | list[str] | None = None, name: str | None = None,
                          language_model: str | None = None) -> str:
        """Log that an agent was created (cause: the tool call that created it; None for a root)."""
        message_id = self._append("agent_created", agent_id,
                                  {"cause": cause, "name": name, "language_model": language_model})
        self._resolve_parent(self.registry[agent_id])
        return message_id

    def log_transcript_entry(self, agent_id: str, message: dict, substance: str | None = None) -> str:
        """Log a message added to an agent's transcript (substance: the content it represents)."""
        clash = RESERVED & message.keys()
        if clash:
            raise ValueError(f"a transcript message may not carry {sorted(clash)}")
        return self._append("transcript_entry", agent_id, {**message, "substance": substance})

    def log_piece_of_text(self, agent_id: str, content: str, cause: str | list[str]) -> str:
        """Log text a tool made for delivery to other agents (cause: the tool call, or a list)."""
        if not cause:
            raise ValueError("a piece of text needs a cause")
        return self._append("piece_of_text", agent_id, {"content": str(content), "cause": cause})

    # --- the registry ----------------------------------------------------------------------------

    def list_agents(self) -> dict[str, str | None]:
        """{agent_id: name} for every agent that exists or ever existed."""
        return {a: r.name for a, r in self.registry.items()}

    def register(self, agent) -> None:
        """Hold an agent in memory (every Agent registers itself when it is made)."""
        self.live[agent.agent_id] = agent

    def evict(self, agent_id: str) -> None:
        """Drop an agent from memory; the log (and the registry) still hold it."""
        self.live.pop(agent_id, None)

    def transcripts(self) -> dict[str, list[dict]]:
        """Every agent's transcript as the messages it was given, read from the log."""
        return transcripts_of(read_events(self.path))

    # --- the file ----------------------------------------------------------------------------------

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> "SessionLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
