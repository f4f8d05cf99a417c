"""One seam for input formats: each module recognizes its files by content and normalizes them.

A normalizer turns the records of a file into native seed-000 events (dicts with message_id,
event_type, agent_id, role, content, tool_calls, tool_call_id, substance, cause, name,
language_model), plus optional keys the pages show: `timestamp`, `usage`, `model`, `source`,
`inferred` (which links were inferred, and how), `markers`, `thinking`, `images` and `raw`
(the original record). The index, queries, search and pages then work unchanged on every format.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import orjson

from .. import jsonio, model
from ..safe_open import RefusedFile, open_regular_file


@dataclass(frozen=True)
class Format:
    name: str
    label: str
    hides: frozenset = field(default_factory=frozenset)  # controls that do not apply
    # Whether a file's first record is of this format.
    looks_like: Callable[[dict], bool] | None = field(default=None, compare=False, repr=False)
    # A fresh normalizer for a session's records (feed(record, line, member) -> events, flush() -> events).
    normalizer: Callable | None = field(default=None, compare=False, repr=False)
    # For formats whose sessions span several files: which session (and which part of it) a file is.
    member_of: Callable[[str, dict], dict] | None = field(default=None, compare=False, repr=False)


# --- files the viewer may not or cannot read: listed with a problem, never read ---

NOT_READABLE = (RefusedFile, PermissionError)  # what safe_open and the readers raise for such a file


def refusal(error: OSError) -> tuple[str, str]:
    """The problem kind and detail of a file that may not (RefusedFile) or cannot (PermissionError) be read."""
    if isinstance(error, RefusedFile):
        return error.kind, error.detail
    return "permission_denied", "permission denied: this user may not read it (never read)"


# --- helpers the normalizers share (defined before the format modules are imported: they use them) ---

def as_dict(value) -> dict:
    """The value if it is a JSON object, else an empty one (records are untrusted)."""
    return value if isinstance(value, dict) else {}


def tool_call(call_id: str | None, name: str, arguments) -> dict:
    """A native tool call, its arguments as the JSON string seed 000 carries."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": jsonio.text(arguments)}}


def agent_created(agent: str, **extra) -> dict:
    """The native creation event of an agent a format names (no line of its own: `raw` is None unless given)."""
    return {"message_id": f"{agent}:created", "event_type": model.AGENT_CREATED, "agent_id": agent, "raw": None, **extra}


class SpawnLinks:
    """The substance links of spawned sub-agents: the first prompt a sub-agent hears stands for the parent's
    spawning call, and the result of that call for the sub-agent's latest utterance (its final answer)."""

    def __init__(self) -> None:
        self.spawn: dict[str, tuple[str, str]] = {}  # sub-agent -> (message id of the spawning call, its prompt)
        self.by_call: dict[str, str] = {}  # spawning call id -> the sub-agent it started
        self.last_said: dict[str, str] = {}  # agent -> message id of its latest utterance
        self.heard: set[str] = set()  # agents past their first prompt

    def spawned(self, agent: str, call_id: str, message_id: str, prompt: str) -> None:
        self.spawn[agent], self.by_call[call_id] = (message_id, prompt), agent

    def said(self, event: dict) -> None:
        if model.is_utterance(event):
            self.last_said[event["agent_id"]] = event["message_id"]

    def prompt(self, event: dict) -> None:
        """A user entry: the first one a spawned agent hears represents its spawning call."""
        agent = event["agent_id"]
        if agent not in self.heard and agent in self.spawn:
            event["substance"], event["original_text"] = self.spawn[agent]
        self.heard.add(agent)

    def answer(self, event: dict, sub: str | None) -> None:
        """A tool result that carries the answer of sub-agent `sub` represents its latest utterance."""
        if sub in self.last_said:
            event["substance"] = self.last_said[sub]


def content_text(content) -> tuple[str, int]:
    """The text of a Claude-style content value, images as placeholders; and how many images it held."""
    if isinstance(content, str):
        return content, 0
    if not isinstance(content, list):
        return ("" if content is None else jsonio.text(content)), 0
    parts, images = [], 0
    for block in content:
        if not isinstance(block, dict):
            parts.append(str(block))
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "image":
            images += 1
            parts.append(f"[image: {as_dict(block.get('source')).get('media_type', 'image')}]")
        elif block.get("type") == "tool_result":
            text, more = content_text(block.get("content"))
            parts.append(text)
            images += more
        else:
            parts.append(jsonio.text(block))
    return "\n".join(parts), images


from . import ai_agent, claude_code, legacy, weakincentives  # noqa: E402  (they use the helpers above)

NATIVE = Format("native", "agentview events")
# Legacy lines are made native one by one as they are parsed (SessionIndex._legacy): no record normalizer.
LEGACY = Format("legacy", "legacy event stream", looks_like=legacy.looks_like)
# The hook audit reads seed-000 hook interventions (deliveries changed on their way): these logs record none.
NO_HOOKS = frozenset({"hooks"})
CLAUDE_CODE = Format("claude-code", "Claude Code", hides=NO_HOOKS, looks_like=claude_code.looks_like,
                     normalizer=claude_code.ClaudeNormalizer, member_of=claude_code.member_of)
WEAKINCENTIVES = Format("weakincentives", "weakincentives", hides=NO_HOOKS, looks_like=weakincentives.looks_like,
                        normalizer=weakincentives.WeakIncentivesNormalizer)
# Snapshots are re-read whole when replaced (ai_agent.SnapshotReader, chosen by the file name), not tailed.
AI_AGENT = Format("ai-agent", "ai-agent snapshot", hides=NO_HOOKS, looks_like=ai_agent.looks_like,
                  normalizer=ai_agent.AiAgentNormalizer)
UNRECOGNIZED = Format("unrecognized", "unrecognized")
# A file the viewer will not or cannot read (a FIFO, a symlink out of the folder, permission denied): listed, never read.
NOT_READ = Format("not-read", "not read")
# Tried in this order on a JSONL file's first record; native is what remains.
LINE_FORMATS = (CLAUDE_CODE, WEAKINCENTIVES, LEGACY)

FIRST_LINE_LIMIT = 4 * 1024 * 1024  # enough for a first line that carries an image


def first_record(path: str, inside: str | None = None) -> tuple[object | None, str]:
    """The first of a file's first lines that parses as JSON, or (None, why there is none).

    Opened through safe_open (`inside`: the folder it must lie in): a file that may not or cannot be
    read raises (RefusedFile, PermissionError) for the caller to list it as such.
    """
    try:
        with open_regular_file(path, inside) as f:
            data = f.read(FIRST_LINE_LIMIT)
    except NOT_READABLE:
        raise
    except OSError as exc:
        return None, f"unreadable: {exc.strerror}"
    if data.startswith(b"\x1f\x8b"):
        return None, "compressed"
    *complete, _partial = data.split(b"\n")
    tried = 0
    for raw in complete:
        if not raw.strip():
            continue
        tried += 1
        try:
            return orjson.loads(raw), ""
        except orjson.JSONDecodeError:
            if tried >= 20:
                break
    if tried:
        return None, "none of the first lines is JSON"
    return None, "empty"


def detect_record(record: object) -> tuple[Format | None, str]:
    """The format a file's first record belongs to, or (None, the reason none fits)."""
    if not isinstance(record, dict):
        return None, f"the first line is a JSON {type(record).__name__}, not an object"
    for fmt in LINE_FORMATS:
        if fmt.looks_like(record):
            return fmt, ""
    if any(k in record for k in ("message_id", "event_type", "agent_id")):
        return NATIVE, ""
    keys = ", ".join(sorted(map(str, record))[:8]) or "none"
    return None, f"the first line has none of the fields a known format starts with (keys: {keys})"
