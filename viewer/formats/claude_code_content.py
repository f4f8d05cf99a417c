"""Claude Code records made into entries' content, and that content kept in its file (StoredEntry): an event
keeps its small fields in memory and its text, thinking, tool calls and raw records are read again from the
lines they came from, by the same rules as when they were first read."""

from __future__ import annotations

import os
import re
import struct

import orjson

from viewer.core import failures, images, jsonio
from viewer.core.model import Event
from viewer.core.packed import Shapes
from viewer.files.safe_open import open_regular_file

from .base import as_dict, content_text, line_crc, tool_call

ENVELOPE = {"type", "uuid", "parentUuid", "logicalParentUuid", "isSidechain", "sessionId", "timestamp", "cwd",
            "version", "gitBranch", "agentId", "userType", "slug"}


def record_summary(record: dict, limit: int = 300) -> str:
    """`[type] field=value ...` for a record the viewer has no view of (its whole text is in the raw view)."""
    parts = []
    for key, value in record.items():
        if key in ENVELOPE:
            continue
        text = value if isinstance(value, str) else jsonio.text(value)
        text = _ESCAPED_ANSI.sub("", strip_ansi(text))  # a hook's output, coloured for a terminal (in JSON: \\u001b)
        parts.append(f"{key}={' '.join(text.split())}")
    summary = f"[{record.get('type')}] " + " ".join(parts)
    return summary if len(summary) <= limit else summary[: limit - 1] + "…"


_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_COMMAND_TAG = re.compile(r"<(command-name|command-args)>(.*?)</\1>", re.S)
_OUTPUT_TAG = re.compile(r"</?(?:local-command-stdout|local-command-stderr|bash-stdout|bash-stderr)>")
_ESCAPED_ANSI = re.compile(r"\\u001[bB]\[[0-?]*[ -/]*[@-~]")
_CAVEAT_TAG = re.compile(r"</?local-command-caveat>")
_OUTPUTS = ("<local-command-stdout>", "<local-command-stderr>", "<bash-stdout>", "<bash-stderr>")


def strip_ansi(text: str) -> str:
    """Text without the terminal's escape sequences (colours, cursor moves) hooks and commands print."""
    return _ANSI.sub("", text) if "\x1b" in text else text


def command_of(text: str) -> str | None:
    """A slash command's line as the user typed it, `/name args` (its `<command-message>` left out); None for
    any other text."""
    if "<command-name>" not in text:
        return None
    parts = dict(_COMMAND_TAG.findall(text))
    name = parts.get("command-name", "").strip()
    if not name:
        return None
    name = name if name.startswith("/") else "/" + name
    return f"{name} {parts.get('command-args', '').strip()}".strip()


def user_text(text: str) -> tuple[str, list[str]]:
    """A user line's text as shown, and its markers: a slash command as `/name args` ("command"), the output of
    a local command or of `!` shell mode without its tags ("command output"); terminal escapes stripped."""
    command = command_of(text)
    if command is not None:
        return command, ["command"]
    if text.lstrip().startswith("<bash-input>") and text.rstrip().endswith("</bash-input>"):
        return "! " + text.strip()[len("<bash-input>"):-len("</bash-input>")], ["command"]
    if text.lstrip().startswith(_OUTPUTS):
        return strip_ansi(_OUTPUT_TAG.sub("", text)).strip(), ["command output"]
    if text.lstrip().startswith("<local-command-caveat>"):  # what Claude Code tells the model before a command's lines
        return strip_ansi(_CAVEAT_TAG.sub("", text)).strip(), ["caveat"]
    return strip_ansi(text), []


# What Claude Code writes in an error result whose call never ran: declined by the user, denied by a permission
# rule, blocked by a hook (PreToolUse); and the result of a call the user interrupted.
_REFUSALS = ("the user doesn't want to proceed", "the user doesn't want to take this action", "permission to use",
             "permission denied", "hook error", "blocked by hook", "denied this tool", "was blocked")
INTERRUPTED_PREFIX = "[Request interrupted by user"


def result_failure(text: str) -> str:
    """The kind of failure (core/failures.py) of a tool result Claude Code marked `is_error`."""
    if text.lstrip().startswith(INTERRUPTED_PREFIX):
        return failures.INTERRUPTED
    head = text[:300].lower()
    return failures.REFUSED if any(words in head for words in _REFUSALS) else failures.TOOL_ERROR


def system_text(record: dict) -> str:
    subtype = record.get("subtype") or "system"
    text = record.get("content") if isinstance(record.get("content"), str) else ""
    if subtype == "compact_boundary":
        meta = as_dict(record.get("compactMetadata"))
        text = "Conversation compacted" + (f" ({meta.get('trigger')}, {meta.get('preTokens')} tokens before)"
                                            if meta else "")
    return strip_ansi(text) or subtype


def user_blocks(message: dict) -> tuple[list, list]:
    """A user message's blocks: (text and image blocks, tool_result blocks)."""
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content if isinstance(content, str) else ""}]
    texts, results = [], []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            results.append(block)
        else:
            texts.append(block)
    return texts, results


def user_images(message: dict) -> tuple[list[dict], list[list[dict]]]:
    """The images of a user message (images.described, each named by where it lies in the record): those among
    its text blocks, and those of each tool_result block, in the order user_blocks gives them."""
    content = message.get("content")
    texts, results = [], []
    for i, block in enumerate(content if isinstance(content, list) else []):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            inner = block.get("content")
            results.append([images.described(b.get("source"), ["message", "content", i, "content", k, "source"])
                            for k, b in enumerate(inner if isinstance(inner, list) else [])
                            if isinstance(b, dict) and b.get("type") == "image"])
        elif block.get("type") == "image":
            texts.append(images.described(block.get("source"), ["message", "content", i, "source"]))
    return texts, results


def add_blocks(event: Event, record: dict, message: dict) -> list[tuple[str | None, str, dict]]:
    """Add one line's content blocks to the message of its response; returns its tool calls (id, name, input)."""
    event["raw"].append(record)
    blocks = message.get("content")
    if isinstance(blocks, str):
        blocks = [{"type": "text", "text": blocks}]
    calls = []
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            event["content"] = (event["content"] + "\n\n" if event["content"] else "") + block["text"]
        elif kind in ("thinking", "redacted_thinking"):
            event["thinking"].append(block.get("thinking") or "[redacted thinking]")
        elif kind == "tool_use":
            arguments = as_dict(block.get("input"))
            call_id = block.get("id") if isinstance(block.get("id"), str) else None
            event.setdefault("tool_calls", []).append(tool_call(call_id, str(block.get("name", "?")), arguments))
            calls.append((call_id, block.get("name"), arguments))
        else:
            event.setdefault("markers", []).append(str(kind))
    return calls


# --- content kept in its file --------------------------------------------------------------------
# A normalized event keeps its small fields (ids, links, usage) in memory; its text, thinking, tool
# calls and raw records are read again from the lines they came from when the event is read, so
# memory grows with the number of events, not with their size.

ASSISTANT, TEXT, SYSTEM, SUMMARY, RECORD = "assistant", "text", "system", "summary", "record"  # how a text is made
STORED_KEYS = ("content", "thinking", "tool_calls", "raw")  # what is read again from the file
_OUT = None  # the value a stored key has while the event is not read (Shapes.pack_blanked's)
_STORED = frozenset(STORED_KEYS)
SPAN = struct.Struct("<QII")  # a line: byte offset, length, CRC-32 of its bytes
CHANGED = "[not shown: {file} changed since it was read, and this entry's line is no longer where it was]"


def _contents(how, records: list[dict]) -> dict:
    """The stored keys of an event made of `records` (the same rules as when it was first read)."""
    if how == ASSISTANT:
        event = {"content": "", "thinking": [], "raw": []}
        for record in records:
            add_blocks(event, record, as_dict(record.get("message")))
        return event
    record = records[0]
    if how == TEXT:
        text, _ = user_text(content_text(user_blocks(as_dict(record.get("message")))[0])[0])
    elif isinstance(how, int):  # the how-th tool result of a user line
        text, _ = content_text(user_blocks(as_dict(record.get("message")))[1][how].get("content"))
    elif how == SYSTEM:
        text = system_text(record)
    elif how == SUMMARY:
        text = str(record.get("summary", ""))
    else:
        text = record_summary(record)
    return {"content": text, "raw": record}


def _read_line(f, offset: int, length: int, crc: int):
    """The record on a line read again; None when the bytes there are no longer the line that was read."""
    f.seek(offset)
    data = f.read(length)
    if len(data) != length or line_crc(data) != crc:
        return None
    data = data.strip()
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:  # read once already: only bytes that are not UTF-8 can get here
        return orjson.loads(data.decode("utf-8", errors="replace"))


class StoredEntry:
    """An event whose content stays in its file: its small fields, and where its lines are (EventList loads it).

    The small fields are kept packed (see packed): a dict of a dozen strings and a usage dict is about 840 bytes
    of objects (a folder of 5,000 Claude Code sessions holds a million of them), packed about 200, and reading it
    back costs a few µs, paid only by pages and sums that read it."""

    __slots__ = ("_small", "path", "inside", "spans", "how", "shapes")

    def __init__(self, event: Event, path: str, spans: bytes, how, inside: str | None, shapes: Shapes) -> None:
        self.path, self.spans, self.how = path, spans, how
        self.inside = inside  # the folder its file must still lie in when read again (None: anywhere)
        self.shapes = shapes  # its small fields are packed with these (its app's: Host.shapes)
        self._small = self._strip(event)

    def _strip(self, event: Event) -> bytes:
        return self.shapes.pack_blanked(event, _STORED)  # the stored keys blanked: the keys keep their order

    def state(self) -> tuple:
        """All it holds, as plain data (kept by the persistent cache, beside its shapes; see `from_state`)."""
        return self._small, self.path, self.spans, self.how, self.inside

    @classmethod
    def from_state(cls, state: tuple, shapes: Shapes) -> StoredEntry:
        """The entry `state` gave, its small fields packed with `shapes` (which learnt those kept beside it)."""
        entry = cls.__new__(cls)
        entry._small, entry.path, entry.spans, entry.how, entry.inside = state
        entry.shapes = shapes
        return entry

    @property
    def skeleton(self) -> dict:
        """The event without its stored keys (each None): a new dict on every call."""
        return self.shapes.unpack(self._small)

    @property
    def message_id(self) -> str:
        return self.skeleton["message_id"]

    @property
    def size(self) -> int:
        """Bytes of its lines: about what its loaded event holds (EventList bounds its cache by this)."""
        spans = self.spans
        if len(spans) == SPAN.size:  # one line, as most entries are
            return SPAN.unpack(spans)[1]
        return sum(span[1] for span in SPAN.iter_unpack(spans))

    def grow(self, event: Event, span: bytes) -> None:
        """The message took in one more line (`event` is it whole, grown)."""
        self._small, self.spans = self._strip(event), self.spans + span

    def load(self) -> dict:
        """The event as first normalized, its content read again (a new dict on every call)."""
        return self._loaded(self._records())

    @classmethod
    def load_many(cls, entries: list[StoredEntry]) -> list[dict]:
        """`load()` of each, opening each file once for a run of entries of the same file (a walk over a session:
        one open, not one an entry)."""
        events, at = [], 0
        while at < len(entries):
            first, end = entries[at], at + 1
            while end < len(entries) and (entries[end].path, entries[end].inside) == (first.path, first.inside):
                end += 1
            run = entries[at:end]
            try:
                with open_regular_file(first.path, first.inside) as f:
                    events += [entry._loaded(entry._records(f)) for entry in run]
            except OSError:  # refused or gone: each shown as changed
                events += [entry._loaded(None) for entry in run]
            at = end
        return events

    def _loaded(self, records: list[dict] | None) -> dict:
        event = self.skeleton
        if records is None:  # the file changed under it: what is known of it, and why its text is missing
            event.pop("thinking", None)
            event.pop("tool_calls", None)
            event["content"] = CHANGED.format(file=event.get("file") or os.path.basename(self.path))
            event["raw"] = None
            event["markers"] = [*(event.get("markers") or ()), "file changed"]
            return event
        contents = _contents(self.how, records)
        for key in STORED_KEYS:
            if key in event:
                event[key] = contents.get(key)
        return event

    def _records(self, f=None) -> list[dict] | None:
        """Its records read again from its lines, through `f` (its file, open), else a file object of its own."""
        try:
            if f is None:  # a file object per read: request threads read at once, and the file may have changed
                with open_regular_file(self.path, self.inside) as f:  # refused (a FIFO now, say): shown as changed
                    records = [_read_line(f, *span) for span in SPAN.iter_unpack(self.spans)]
            else:
                records = [_read_line(f, *span) for span in SPAN.iter_unpack(self.spans)]
        except (OSError, ValueError, IndexError, orjson.JSONDecodeError):
            return None
        if any(not isinstance(r, dict) for r in records):
            return None
        return records
