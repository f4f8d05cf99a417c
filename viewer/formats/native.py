"""The native line parser: one JSONL line -> one seed-000 event (the hot path of ingest). The records of the
formats a normalizer reads are parsed by the same function, so a line orjson refuses is read the same way in
every format and bytes that are not UTF-8 are reported (`invalid_utf8`) in every format. Legacy lines (seed
001) are made native here as they are read.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import orjson

from viewer.core import jsonio, model
from viewer.core.model import Event
from viewer.core.problems import excerpt
from viewer.files.tailer import Line

from . import LEGACY, NATIVE, UNRECOGNIZED, Format, legacy

_INTERNED = ("event_type", "agent_id", "role", "name", "language_model", "model")


def intern_values(event: Event) -> None:
    """One copy of each repeated value (agent ids, roles, event types, tool names), not one per event.

    Only for events kept as dicts: a native line is kept as its bytes, and the values the index keeps
    of it (agent ids, names) are kept once per agent, not per event.
    """
    for key in _INTERNED:
        value = event.get(key)
        if type(value) is str:
            event[key] = sys.intern(value)
    calls = event.get("tool_calls")
    if type(calls) is list:
        for call in calls:
            if type(call) is dict:
                if type(call.get("type")) is str:
                    call["type"] = sys.intern(call["type"])
                function = call.get("function")
                if type(function) is dict and type(function.get("name")) is str:
                    function["name"] = sys.intern(function["name"])


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# report(kind, line, detail, message_id=None): a problem of one line, recorded by the index
Report = Callable[..., None]


class LineParser:
    """Parses the lines of one session file, reporting each skipped line's problem (exactly one) to `report`.

    `became_legacy()` is called when the first legacy message line of a file not known to be legacy is read:
    its lines are made native from then on (the index's format changes with it).
    """

    __slots__ = ("report", "became_legacy", "legacy", "check_legacy", "records")

    def __init__(self, fmt: Format, report: Report, became_legacy: Callable[[], None]) -> None:
        self.report = report
        self.became_legacy = became_legacy
        self.legacy = legacy.LegacyNormalizer() if fmt is LEGACY else None
        # whether a line may still be legacy: until a native-only event is seen (or always, once legacy)
        self.check_legacy = fmt in (NATIVE, UNRECOGNIZED, LEGACY)
        self.records = fmt.reads_records  # its lines are records its normalizer makes events of

    def parse(self, line: Line) -> tuple[Event, bytes, tuple | None, bool] | tuple[dict, bool, bool] | None:
        """The event on a line, the line's bytes (stripped), its facts (model.checked_facts; None: the index
        finds them), and whether the event is exactly those bytes parsed by orjson (else it is kept as a dict,
        its repeated values interned); None (with exactly one problem reported) when the line is skipped.

        A line of a format a normalizer reads (`records`): the record on it, whether orjson alone would read it
        differently (jsonio.settle: exact integers, or too deep) and whether it nests deeper than
        jsonio.MAX_DEPTH (its events are cut there)."""
        data = line.data.strip()
        if not data:  # blank lines separate nothing in JSONL; writers often leave one
            return None
        not_utf8 = False
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            event = self._recovered(data, line.number, exc)
            if event is None:
                return None
            not_utf8 = True
        if not isinstance(event, dict):
            self.report("not_an_object", line.number, f"a JSON {type(event).__name__}: {excerpt(data)}")
            return None
        if self.records:
            return self._record(event, data, line.number, not_utf8)
        parsed = event
        text_only = model.only_text(event)
        too_deep = False
        if not text_only:  # a number or a container: maybe an integer orjson cannot keep, or too deep to show
            event, too_deep = jsonio.settle(data.decode("utf-8", errors="replace") if not_utf8 else data, event)
            if too_deep:  # kept as a dict (the line is never read again): cut at jsonio.MAX_DEPTH
                event = jsonio.cut(event)
        if self.check_legacy:  # else the line is native as it is
            event = self._legacy(event)
        # the common event, read in one pass; None: the rules one by one
        facts = model.checked_facts(event, text_only if event is parsed else None)
        if facts is None:
            for key in ("message_id", "event_type", "agent_id"):
                if not isinstance(event.get(key), str) or not event[key]:
                    self.report(f"missing_{key}", line.number, f"no string {key}: {excerpt(data)}")
                    return None
            message_id = event["message_id"]
            if not_utf8:
                self.report("invalid_utf8", line.number, "bytes that are not UTF-8 are shown as U+FFFD", message_id)
            if event["event_type"] not in model.KNOWN_EVENT_TYPES:
                self.report("unknown_event_type", line.number, f"event_type {event['event_type']!r} kept as is", message_id)
            else:
                for kind, detail in model.shape_problems(event):
                    self.report(kind, line.number, detail, message_id)
        elif not_utf8:
            self.report("invalid_utf8", line.number, "bytes that are not UTF-8 are shown as U+FFFD", event["message_id"])
        if too_deep:
            self.too_deep(line.number, event.get("message_id"))
        as_written = event is parsed and not not_utf8
        if not as_written:  # kept as a dict: share its repeated values
            intern_values(event)
        return event, data, facts, as_written

    def _record(self, record: dict, data: bytes, number: int, not_utf8: bool) -> tuple[dict, bool, bool]:
        if not_utf8:
            self.report("invalid_utf8", number, "bytes that are not UTF-8 are shown as U+FFFD")
        read, too_deep = jsonio.settle(data.decode("utf-8", errors="replace") if not_utf8 else data, record)
        return read, too_deep or read is not record, too_deep

    def _recovered(self, data: bytes, number: int, error: orjson.JSONDecodeError) -> object | None:
        """A line orjson refused, read again with its bytes that are not UTF-8 as U+FFFD (the caller reports
        `invalid_utf8` once it knows the line is kept); None, with its problem reported, when it is not JSON."""
        if _is_utf8(data):
            self.report("invalid_json", number, f"{error.msg}: {excerpt(data)}")
            return None
        try:  # keep what can be kept: the bad bytes become U+FFFD
            return orjson.loads(data.decode("utf-8", errors="replace"))
        except orjson.JSONDecodeError:
            self.report("invalid_utf8", number, f"not UTF-8 (and not JSON), skipped: {excerpt(data)}")
            return None

    def too_deep(self, line: int, message_id) -> None:
        """A value nested deeper than jsonio.MAX_DEPTH was cut there."""
        self.report("too_deep", line, f"a value nested deeper than {jsonio.MAX_DEPTH} levels: shown cut there",
                    message_id if isinstance(message_id, str) else None)

    def _legacy(self, event: Event) -> Event:
        """A legacy line made native; the first legacy message line of an undecided file switches it."""
        if self.legacy is not None:
            return self.legacy.made_native(event)
        if legacy.looks_like(event):
            # agent_created lines before the first message name no task call: nothing to infer for them
            self.legacy = legacy.LegacyNormalizer()
            self.became_legacy()
            return self.legacy.made_native(event)
        if event.get("event_type") in (model.TRANSCRIPT_ENTRY, model.PIECE_OF_TEXT):
            self.check_legacy = False  # a native-only event: no longer a legacy candidate
        return event
