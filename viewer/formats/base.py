"""What every format shares: the Normalizer base class (its hooks, with their defaults) and the helpers the
normalizers use to build seed-000 events; and how a file the viewer may not or cannot read is told."""

from __future__ import annotations

import os
from collections.abc import Iterable

import orjson
from isal import isal_zlib

from viewer.core import jsonio, model
from viewer.core.model import Event
from viewer.core.packed import Shapes
from viewer.files.safe_open import RefusedFile, open_regular

# The CRC-32 of a record's line, kept where it lies (its `source`) and checked when the line is read again: zlib's
# CRC-32 by ISA-L, which is a quarter of zlib's time (every line of a folder's cold read is summed).
line_crc = isal_zlib.crc32

# --- files the viewer may not or cannot read: listed with a problem, never read ---

NOT_READABLE = (RefusedFile, PermissionError)  # what safe_open and the readers raise for such a file


def refusal(error: OSError) -> tuple[str, str]:
    """The problem kind and detail of a file that may not (RefusedFile) or cannot (PermissionError) be read."""
    if isinstance(error, RefusedFile):
        return error.kind, error.detail
    return "permission_denied", "permission denied: this user may not read it (never read)"


# --- a file's first record: what its format is told by ---

FIRST_LINE_LIMIT = 4 * 1024 * 1024  # enough for a first line that carries an image


FIRST_READ = 4 * 1024  # most first lines are far shorter: a folder of thousands of files is told apart quickly


def first_record(path: str, inside: str | None = None, found: os.stat_result | None = None
                 ) -> tuple[object | None, str]:
    """The first of a file's first lines that parses as JSON, or (None, why there is none).

    Opened through safe_open (`inside`: the folder it must lie in; `found`: the caller's stat of it): a file that
    may not or cannot be read raises (RefusedFile, PermissionError) for the caller to list it as such. Read
    FIRST_READ bytes at a time, doubling, until a line parses, 20 do not, or FIRST_LINE_LIMIT bytes are read.
    """
    try:
        fd = open_regular(path, inside, found)  # read on the descriptor itself: no file object, no buffer of its own
        try:
            data, size, ended = b"", FIRST_READ, False
            while True:
                more = os.read(fd, min(size, FIRST_LINE_LIMIT - len(data)))
                data, ended = data + more, not more
                if data.startswith(b"\x1f\x8b"):
                    return None, "compressed"
                found, tried = _first_json(data)
                if found is not None or tried >= 20 or ended or len(data) >= FIRST_LINE_LIMIT:
                    break
                size *= 2
        finally:
            os.close(fd)
    except NOT_READABLE:
        raise
    except OSError as exc:
        return None, f"unreadable: {exc.strerror}"
    if found is not None:
        return found[0], ""
    if tried:
        return None, "none of the first lines is JSON"
    return None, "empty"


def _first_json(data: bytes) -> tuple[tuple[object] | None, int]:
    """((the first complete line of `data` that parses as JSON,) or None, how many non-blank lines were tried: at
    most 20). Lines are taken one by one: the first usually parses, and the rest of the read is not split."""
    tried, start = 0, 0
    while (end := data.find(b"\n", start)) >= 0:
        raw, start = data[start:end], end + 1
        if not raw.strip():
            continue
        tried += 1
        try:
            return (orjson.loads(raw),), tried
        except orjson.JSONDecodeError:
            if tried >= 20:
                break
    return None, tried


# --- the normalizer of a record format ---

class Normalizer:
    """Turns the records of one session (all its files, merged by time) into native seed-000 events.

    The index calls every hook below on every normalizer; a format overrides the ones it needs. One
    normalizer reads one session from its start (a session read again gets a fresh one).
    """

    summary: dict | None = None  # what the format says about the whole session (snapshot totals)
    title: str | None = None  # the format's own name for the session
    project: str | None = None  # the folder it worked in, where its file does not tell (a database of many)
    # What it keeps packed (core/packed.py) is packed with these: its session's app's (Host.shapes), handed over by the
    # session; a format that packs makes a table of its own meanwhile (a normalizer used alone).
    shapes: Shapes | None = None

    def __init__(self) -> None:
        # (kind, detail) of files of the session it did not read (sidecars): the index takes them as problems
        self.problems: list[tuple[str, str]] = []

    def order(self, stream: Iterable[tuple]) -> Iterable[tuple]:
        """A member's items (time, line, member, record, source, too deep) in the order to feed them (default:
        file order, read as they come: a big file is never in memory whole)."""
        return stream

    def time_of(self, record: dict) -> object:
        """A record's time, by which the members of a session are merged."""
        return record.get("timestamp")

    def feed(self, record: dict, line: int, member: dict, source: tuple | None = None) -> list[Event]:
        """The events a record makes (maybe later: see `flush`); `source` = (path, byte offset, length, CRC-32)
        of its line when the line can be read again."""
        raise NotImplementedError

    def flush(self) -> list[Event]:
        """The events still held back once every record was fed."""
        return []

    def keep(self, event: Event) -> object | None:
        """What the index stores for an event it adds instead of the event (its content left in the file), or
        None: the event itself."""
        return None

    def orphans(self) -> dict:
        """What its records, read since the last call, say about other sessions of its project (Claude Code:
        summaries of the conversation a line ends, by that line's uuid); the Library passes them on (`take`)."""
        return {}

    def take(self, notes: dict) -> bool:
        """What other sessions of its project said (their `orphans`, all so far); whether the session changed."""
        return False

    def item_of(self, part: Event) -> object | None:
        """What the index stores, now, for the message a RESPONSE_PART event grew (None: nothing to store)."""
        return None

    def rewound(self, event: Event) -> str | None:
        """For an entry on a branch the conversation was rewound from (a person went back to an earlier message
        and went on from there): the id of the line it forked at; else None. Pages show such entries collapsed."""
        return None

    # message ids of the entries that began a new branch (a rewind), in the order they were read
    rewinds: list[str] = []

    settled = False  # see `settle`: a settled normalizer reads no more records
    # The class of what `keep` stores, when the persistent cache may keep it: it has `state()` (plain data) and
    # `from_state(state, shapes)` (the shapes it was packed with, learnt from the entry); None: sessions of this
    # format are not kept
    stored_type: type | None = None

    def settle(self) -> Normalizer | None:
        """A smaller normalizer for a session whose files are no longer written: it answers what pages and the
        project's notes ask (title, rewinds, `take`) and reads no more records (the session is read again from its
        start if more come). None: this one keeps what it has."""
        return None

    @classmethod
    def settled_from(cls, state: dict) -> Normalizer | None:
        """A settled normalizer from the plain data its `state()` gave (kept by the persistent cache); None when
        the format keeps none."""
        return None


# --- helpers the normalizers share ---

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
