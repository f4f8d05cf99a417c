"""The in-memory store: sessions indexed incrementally as their lines arrive.

One writer (the watcher thread) appends while request threads read; each session
has a lock that both take, so a reader never sees half of an event's effects.
"""

from __future__ import annotations

import heapq
import itertools
import sys
import threading
import zlib
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator

import orjson

from . import facets, formats, gcpause, jsonio, model, redact, search_index
from .cursor import Cursor
from .problems import Problem, excerpt
from .eventlist import EventList
from .formats import legacy
from .model import TRANSCRIPT_ENTRY, AgentNode, Event
from .session_ids import session_name, shown
from .tailer import FileSource, Line


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


_INTERNED = ("event_type", "agent_id", "role", "name", "language_model", "model")


def _intern(event: Event) -> None:
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


_serials = itertools.count()


class _SharedLists(dict):
    """A copy of a dict of lists that shares the lists: one is copied when it is first looked up here.

    `SessionIndex.copy` makes these, so an as-of snapshot extended by `_add` never changes the lists
    of the snapshot it was copied from, and copying costs a dict copy, not a list copy per key.
    Whoever changes a list looks it up first (`get`, `[]`, `setdefault`); `items()` and `values()`
    give the shared lists, for reading only.
    """

    __slots__ = ("_own",)

    def __init__(self, other: dict) -> None:
        super().__init__(other)
        self._own: set = set()

    def _mine(self, key, value):
        if key not in self._own:
            value = list(value)
            dict.__setitem__(self, key, value)
            self._own.add(key)
        return value

    def get(self, key, default=None):
        value = dict.get(self, key)
        return default if value is None else self._mine(key, value)

    def __getitem__(self, key):
        return self._mine(key, dict.__getitem__(self, key))

    def setdefault(self, key, default=None):
        if key in self:
            return self[key]
        self[key] = default
        return default

    def __setitem__(self, key, value) -> None:
        dict.__setitem__(self, key, value)
        self._own.add(key)

    def pop(self, key, *default):
        self._own.discard(key)
        return dict.pop(self, key, *default)


class SessionIndex:
    """Everything known about one session file, updated event by event."""

    def __init__(self, session_id: str, path: str, relpath: str):
        self.id = session_id
        self.path = path
        self.relpath = shown(relpath)  # printed: a name that is not UTF-8 escaped
        self.name = session_name(relpath)
        self.lock = threading.RLock()
        self.epoch = 0
        self.updated_at: float | None = None  # the file's mtime when we last read something new
        self.format: formats.Format = formats.NATIVE
        self.format_reason = ""  # why a file is unrecognized
        self.format_settled = True  # False while a file is too empty to tell its format
        self.project: str | None = None  # the folder a grouped session belongs to (Claude Code projects)
        self.members: dict[str, dict] = {}  # path -> member, for a session made of several files
        self.make_normalizer = None  # formats whose records are normalized: a fresh normalizer per read
        self.serial = next(_serials)  # unique for the life of the process (unlike id()): caches key on it
        self._clear()

    def _clear(self) -> None:
        self.events = EventList()  # native lines as where they are in the file, read when asked for (see eventlist)
        self.line_numbers = array("q")  # per position: its line in the file (compact: 8 bytes each)
        self.by_id: dict[str, int] = {}
        self.agents: dict[str, AgentNode] = {}
        self.roots: list[str] = []
        # substance key -> positions of the entries whose `substance` names it
        self.references: dict[str, list[int]] = {}
        # (agent_id, tool_call_id) -> positions of that agent's entries holding / answering the call
        self.call_positions: dict[tuple[str, str], list[int]] = {}
        self.result_positions: dict[tuple[str, str], list[int]] = {}
        # message id -> positions of the events whose `cause` names it (pieces of text, agent creations)
        self.caused: dict[str, list[int]] = {}
        # message id -> agents whose agent_created names it as cause
        self.spawned: dict[str, list[str]] = {}
        self._awaiting_cause: dict[str, list[str]] = {}
        # message id not seen yet -> the dangling_* problems naming it (dropped if it shows up)
        self._dangling: dict[str, list[Problem]] = {}
        # (position, agent_id) whenever an agent appears or moves in the tree; read by live polls
        self.tree_changes: list[tuple[int, str]] = []
        self.problems: list[Problem] = []
        self.tool_names: set[str] = set()  # every tool called or answered, lowercased (the agent page's tool filter)
        self.usage_positions = array("q")  # events naming a model or token usage (formats.usage sums these)
        self.usage_totals: dict = {}  # agent id (None: the session) -> formats.usage.Totals, extended per request
        self.dialog_orders: dict = {}  # chosen agents -> the dialog's order, extended as events arrive (queries.dialog)
        self.search = search_index.SearchIndex(self)  # full-text postings: caught up after ingest and before each query
        self.facets = facets.Facets(self)  # per-agent tool, delivery and event lists: caught up like the search
        self._native_fixed = False  # a native-only event was seen: no longer a legacy candidate
        self.format_summary: dict | None = None  # what a format says about the whole session (snapshot totals)
        self.title: str | None = None  # a format's own name for the session (Claude Code titles, snapshot titles)
        self.normalizer = None
        if getattr(self, "make_normalizer", None) is not None:
            self.normalizer = self.make_normalizer()
        elif getattr(self, "format", None) is formats.LEGACY:
            self.normalizer = legacy.LegacyNormalizer()

    # Containers a copy shares with its original: set once, never changed in place.
    _SHARED_IN_COPIES = ("members", "format_summary")

    def copy(self) -> SessionIndex:
        """An independent index equal to this one, to be extended by `_add` (an as-of snapshot further on).

        Its containers are copied (C-speed copies: far cheaper than replaying the events), the events'
        storage is shared, and the caches and lazily built indexes start empty.
        """
        with self.lock:
            other = SessionIndex.__new__(SessionIndex)
            other.__dict__.update(self.__dict__)
            other.lock = threading.RLock()
            other.events = self.events.prefix(len(self.events))
            other.line_numbers = array("q", self.line_numbers)
            other.usage_positions = array("q", self.usage_positions)
            other.by_id = dict(self.by_id)
            other.agents = {agent_id: agent.copy() for agent_id, agent in self.agents.items()}
            for name in ("references", "call_positions", "result_positions", "caused", "spawned",
                         "_awaiting_cause", "_dangling"):
                setattr(other, name, _SharedLists(getattr(self, name)))
            other.roots, other.tree_changes, other.problems = list(self.roots), list(self.tree_changes), list(self.problems)
            other.tool_names = set(self.tool_names)
            other.usage_totals, other.dialog_orders = {}, {}
            other.search, other.facets = search_index.SearchIndex(other), facets.Facets(other)
        return other

    # --- writing -------------------------------------------------------------------------

    def restart(self) -> None:
        """The file was truncated or replaced: forget everything, bump the epoch."""
        with self.lock:
            frozen = self.count >= gcpause.FREEZE_AFTER
            self._clear()
            self.epoch += 1
        if frozen:
            gcpause.forgotten()

    def ingest(self, lines: list[Line], source: FileSource | None = None) -> int:
        """Index complete lines (read from `source` at their offsets, if given); returns how many events were added."""
        with self.lock, gcpause.batch() as counter:
            events = self.events
            parse, add, keep_at, keep_raw, note_line = (self._parse, self._add, events.keep_at, events.keep_raw,
                                                        events.note_line)
            first = position = len(events)  # _add appends exactly one event
            for line in lines:
                parsed = parse(line)
                if parsed is None:
                    continue
                event, raw, facts, as_written = parsed
                if not as_written:  # kept as a dict: share its repeated values
                    _intern(event)
                add(event, line.number, facts)
                if source is not None and line.offset >= 0:
                    data = line.data  # `raw` is it stripped of blanks
                    lead = 0 if len(raw) == len(data) else len(data) - len(data.lstrip())
                    # the event is the line as written: keep where it is, not the dict; else note where its line is
                    (keep_at if as_written else note_line)(position, source, line.offset + lead, len(raw))
                elif as_written:
                    keep_raw(position, raw)
                position += 1
            counter["added"] = added = position - first
        return added

    def _problem(self, kind: str, line: int | None, detail: str, message_id: str | None = None,
                 of_line: bool = False) -> Problem:
        problem = Problem(kind, line, detail, message_id, of_line)
        self.problems.append(problem)
        return problem

    def _line_problem(self, kind: str, line: int, detail: str, message_id: str | None = None) -> None:
        self._problem(kind, line, detail, message_id, of_line=True)

    def reader_problems(self, problems: list[tuple[str, int | None, str]]) -> None:
        """What a reader found wrong with the file (tailer.TailResult.problems): a line's problem is of that line."""
        if problems:
            with self.lock:
                for kind, line, detail in problems:
                    self._problem(kind, line, detail, of_line=line is not None)

    def file_problem(self, detail: str, kind: str = "unreadable_file") -> None:
        """A fault of the file as a whole (e.g. a corrupt gzip stream, a FIFO never read), not of one line."""
        with self.lock:
            self._problem(kind, None, detail)

    def _parse(self, line: Line) -> tuple[Event, bytes, tuple | None, bool] | None:
        """The event on a line, the line's bytes (stripped), its facts (model.checked_facts; None: _add finds
        them), and whether the event is exactly those bytes parsed by orjson (else it is kept as a dict);
        None (with exactly one problem recorded) when the line is skipped."""
        data = line.data.strip()
        if not data:  # blank lines separate nothing in JSONL; writers often leave one
            return None
        not_utf8 = False
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            if _is_utf8(data):
                self._line_problem("invalid_json", line.number, f"{exc.msg}: {excerpt(data)}")
                return None
            try:  # keep what can be kept: the bad bytes become U+FFFD
                event = orjson.loads(data.decode("utf-8", errors="replace"))
            except orjson.JSONDecodeError:
                self._line_problem("invalid_utf8", line.number, f"not UTF-8 (and not JSON), skipped: {excerpt(data)}")
                return None
            not_utf8 = True
        if not isinstance(event, dict):
            self._line_problem("not_an_object", line.number, f"a JSON {type(event).__name__}: {excerpt(data)}")
            return None
        parsed = event
        text_only = model.only_text(event)
        too_deep = False
        if not text_only:  # a number or a container: maybe an integer orjson cannot keep, or too deep to show
            event, too_deep = jsonio.settle(data.decode("utf-8", errors="replace") if not_utf8 else data, event)
            if too_deep:  # kept as a dict (the line is never read again): cut at jsonio.MAX_DEPTH
                event = jsonio.cut(event)
        if not self._native_fixed or self.format is formats.LEGACY:  # else _legacy returns the event as is
            event = self._legacy(event)
        # the common event, read in one pass; None: the rules one by one
        facts = model.checked_facts(event, text_only if event is parsed else None)
        if facts is None:
            for key in ("message_id", "event_type", "agent_id"):
                if not isinstance(event.get(key), str) or not event[key]:
                    self._line_problem(f"missing_{key}", line.number, f"no string {key}: {excerpt(data)}")
                    return None
            message_id = event["message_id"]
            if not_utf8:
                self._line_problem("invalid_utf8", line.number, "bytes that are not UTF-8 are shown as U+FFFD",
                                   message_id)
            if event["event_type"] not in model.KNOWN_EVENT_TYPES:
                self._line_problem("unknown_event_type", line.number,
                                   f"event_type {event['event_type']!r} kept as is", message_id)
            else:
                for kind, detail in model.shape_problems(event):
                    self._line_problem(kind, line.number, detail, message_id)
        elif not_utf8:
            self._line_problem("invalid_utf8", line.number, "bytes that are not UTF-8 are shown as U+FFFD",
                               event["message_id"])
        if too_deep:
            self._too_deep(line.number, event.get("message_id"))
        return event, data, facts, event is parsed and not not_utf8

    def _too_deep(self, line: int, message_id) -> None:
        self._line_problem("too_deep", line, f"a value nested deeper than {jsonio.MAX_DEPTH} levels: shown cut "
                           "there", message_id if isinstance(message_id, str) else None)

    def _legacy(self, event: Event) -> Event:
        """A legacy line made native; the first legacy message line of an undecided file switches it."""
        if self.format is formats.LEGACY:
            return self.normalizer.feed(event)
        if self._native_fixed or self.format not in (formats.NATIVE, formats.UNRECOGNIZED):
            return event
        if legacy.looks_like(event):
            # agent_created lines before the first message name no task call: nothing to infer for them
            self.format, self.format_reason = formats.LEGACY, ""
            self.normalizer = legacy.LegacyNormalizer()
            return self.normalizer.feed(event)
        if event.get("event_type") in (model.TRANSCRIPT_ENTRY, model.PIECE_OF_TEXT):
            self._native_fixed = True
        return event

    def ingest_records(self, batches: list[tuple[dict, Iterable[Line]]]) -> int:
        """Index the lines of a record format (several files of one session merged by time).

        The lines of a member may be an iterator read as it goes: records are parsed one at a time, so a
        big group is never in memory whole (unless the format must reorder a member's records first).
        """
        added = 0
        with self.lock, gcpause.batch() as counter:
            streams = []
            for member, lines in batches:
                stream = self._records(member, lines)
                if hasattr(self.normalizer, "order"):
                    stream = self.normalizer.order(list(stream))
                streams.append(stream)
            merged = heapq.merge(*streams, key=lambda item: item[0]) if len(streams) > 1 else (streams or [[]])[0]
            addressed = hasattr(self.normalizer, "keep")  # it can leave content in the file and read it again
            # after a record too deep, each event is checked: a normalizer may make its events later (a response
            # is emitted when the next record or the flush shows it complete)
            deep_line = None
            for _, number, member, record, source, too_deep in merged:
                deep_line = number if too_deep else deep_line
                events = (self.normalizer.feed(record, number, member, source) if addressed
                          else self.normalizer.feed(record, number, member))
                for event in events:
                    added += self._add_normalized(event, number, deep_line)
            for event in self.normalizer.flush():
                added += self._add_normalized(event, event.get("line") or 0, deep_line)
            self.format_summary = getattr(self.normalizer, "summary", None)
            self.title = getattr(self.normalizer, "title", None)
            unread = getattr(self.normalizer, "problems", None)  # files of the session it did not read (sidecars)
            while unread:
                kind, detail = unread.pop(0)
                self._problem(kind, None, detail)
            counter["added"] = added
        return added

    def _records(self, member: dict, lines: Iterable[Line]) -> Iterator[tuple]:
        """(time, line number, member, record, source, too deep) for each record of a member's lines, in file
        order; source = (path, offset, length, CRC-32) of the line when it can be read again, else None (also
        when the record was read with care: orjson would read it differently); too deep: it nests deeper
        than jsonio.MAX_DEPTH (the events made of it are cut there)."""
        time_of = getattr(self.normalizer, "time_of", None)
        path = member.get("path")
        last = ""
        for line in lines:
            parsed = self._parse_record(line)
            if parsed is None:
                continue
            record, read_with_care, too_deep = parsed
            stamp = time_of(record) if time_of else record.get("timestamp")
            last = (stamp if isinstance(stamp, str) else None) or last
            addressable = path and line.offset >= 0 and not read_with_care
            source = (path, line.offset, len(line.data), zlib.crc32(line.data)) if addressable else None
            yield last, line.number, member, record, source, too_deep

    def _parse_record(self, line: Line) -> tuple[dict, bool, bool] | None:
        """The record on a line, whether orjson alone would read it differently (jsonio.settle: exact
        integers, or too deep), and whether it nests deeper than jsonio.MAX_DEPTH."""
        data = line.data.strip()
        if not data:
            return None
        text: bytes | str = data  # what orjson read
        try:
            record = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            try:
                text = data.decode("utf-8", errors="replace")
                record = orjson.loads(text)
            except orjson.JSONDecodeError:
                self._line_problem("invalid_json", line.number, f"{exc.msg}: {excerpt(data)}")
                return None
        if not isinstance(record, dict):
            self._line_problem("not_an_object", line.number, f"a JSON {type(record).__name__}: {excerpt(data)}")
            return None
        read, too_deep = jsonio.settle(text, record)
        return read, too_deep or read is not record, too_deep

    def _cut_normalized(self, event: Event, line_number: int) -> None:
        """An event made of a record that nests too deep, cut where it is (its normalizer may still change it);
        a message that grew by such a record (response_part) is cut instead."""
        grown = getattr(self.normalizer, "item_of", None) if event["event_type"] == model.RESPONSE_PART else None
        shown = grown(event) if grown is not None else event
        if type(shown) is dict and jsonio.deeper_than(shown):
            jsonio.cut(shown, in_place=True)
            self._too_deep(line_number, shown.get("message_id"))

    def _add_normalized(self, event: Event, line_number: int, deep_line: int | None = None) -> int:
        """Index a normalized event; `deep_line`: the line of a record too deep read before it (it is checked)."""
        _intern(event)
        keep = getattr(self.normalizer, "keep", None)
        stored = keep(event) if keep is not None else None  # the event without its content, read again when read
        if event["message_id"] in self.by_id:  # a record seen twice (e.g. a resumed session copies lines)
            return 0
        if deep_line is not None:
            self._cut_normalized(event, deep_line)
        if event["event_type"] == model.RESPONSE_PART and keep is not None:
            grown, item = self.by_id.get(event.get("grows")), self.normalizer.item_of(event)
            if grown is not None and item is not None:
                self.events.keep_raw(grown, item)  # it grew: what is stored for it now, its cached copy dropped
        self._add(event, line_number)
        if stored is not None:
            self.events.keep_raw(len(self.events) - 1, stored)
        return 1

    def _add(self, event: Event, line_number: int, facts: tuple | None = None) -> None:
        # The hot path of ingest: the event's facts are found once (by _parse, else here) and filed directly.
        position = len(self.events)
        self.events.append(event)
        self.line_numbers.append(line_number)
        causes, substance, calls, perspective, dialog, result = facts or model.facts_of(event)
        names_usage = "usage" in event or "model" in event
        if names_usage:
            self.usage_positions.append(position)
        message_id = event["message_id"]
        by_id = self.by_id
        first = message_id not in by_id
        if first:
            by_id[message_id] = position
            if (causes or (substance is not None and (substance not in by_id or substance == message_id))
                    or (self._dangling and message_id in self._dangling)):  # else no link to flag
                self._links(event, position, line_number, causes, substance)
        else:
            self._problem("duplicate_message_id", line_number,
                          f"{message_id} first seen on line {self.line_numbers[by_id[message_id]]}", message_id)
        if causes:
            caused = self.caused
            for cause in causes:
                positions = caused.get(cause)
                if positions is None:
                    caused[cause] = [position]
                else:
                    positions.append(position)
        kind = event["event_type"]
        if kind == TRANSCRIPT_ENTRY:
            agent = self.agents.get(event["agent_id"])
            if agent is None:
                agent = self._agent(event["agent_id"], position)
            agent.entries.append(position)
            # Filed under its perspective kind and, if it is one, the dialog: pages read a window of these.
            positions = agent.by_kind.get(perspective)
            if positions is None:
                positions = agent.by_kind[perspective] = array("q")
            positions.append(position)
            if dialog:
                agent.dialog_entries.append(position)
            if names_usage:
                agent.usage_entries.append(position)
            if agent.language_model is None and self.format is not formats.NATIVE and isinstance(event.get("model"), str):
                agent.language_model = event["model"]
            if substance is not None:
                positions = self.references.get(substance)
                if positions is None:
                    self.references[substance] = [position]
                else:
                    positions.append(position)
            if calls:
                self._file_calls(agent.agent_id, calls, position)
            if result:  # tool_call_id is in the event (or its role is "tool")
                self._file_result(agent.agent_id, event, position, line_number)
        else:
            if calls:  # an event of another type may name tools too
                self.tool_names.update(model.call_tool_key(c) for c in calls)
            if kind == model.AGENT_CREATED:
                self._agent_created(event, position, line_number, causes)
            elif kind == model.PIECE_OF_TEXT:
                if event["agent_id"] not in self.agents:
                    self._agent(event["agent_id"], position)
            elif kind == model.RESPONSE_PART and self.format is not formats.NATIVE:
                self._grown(event)
            elif kind == model.SPAWN_LINK and self.format is not formats.NATIVE:
                self._linked(event, position)
        # Agents created before the message their cause names: resolvable now that its agent is known.
        if first and self._awaiting_cause:
            for agent_id in self._awaiting_cause.pop(message_id, ()):
                self._resolve_parent(self.agents[agent_id], position)

    def _file_calls(self, agent_id: str, calls, position: int) -> None:
        """An entry's tool calls: their names, and the entry under (agent, call id) for the results to find.

        The agent's own copy of its id is passed: the keys share it, not one string per event.
        """
        tool_names, call_positions = self.tool_names, self.call_positions
        for call in calls:
            tool_names.add(model.call_tool_key(call))
            call_id = call.get("id")
            if isinstance(call_id, str):
                positions = call_positions.get((agent_id, call_id))
                if positions is None:
                    call_positions[(agent_id, call_id)] = [position]
                else:
                    positions.append(position)

    def _file_result(self, agent_id: str, event: Event, position: int, line_number: int) -> None:
        """A tool result: its tool's name, and the entry under (agent, call id) next to the call it answers."""
        name = event.get("name")
        if isinstance(name, str):
            self.tool_names.add(model.tool_key(name))
        call_id = event.get("tool_call_id")
        if isinstance(call_id, str):
            key = (agent_id, call_id)
            positions = self.result_positions.get(key)
            if positions is None:
                self.result_positions[key] = [position]
            else:
                positions.append(position)
            if key not in self.call_positions:
                self._problem("dangling_tool_call_id", line_number,
                              f"no earlier tool call {call_id!r} in {agent_id}'s transcript", event["message_id"])

    def _reclassify_entry(self, position: int) -> None:
        """An entry that grew in place may have changed kind (said -> did): file it again."""
        event = self.events[position]
        agent = self.agents.get(event["agent_id"])
        if agent is None or event.get("event_type") != model.TRANSCRIPT_ENTRY:
            return
        kind = model.perspective_kind(event)
        for name, positions in agent.by_kind.items():
            i = bisect_left(positions, position)
            if i < len(positions) and positions[i] == position and name != kind:
                positions.pop(i)
                target = agent.by_kind.setdefault(kind, array("q"))
                target.insert(bisect_left(target, position), position)
                break
        i = bisect_left(agent.dialog_entries, position)
        listed = i < len(agent.dialog_entries) and agent.dialog_entries[i] == position
        if listed != model.is_dialog_entry(event):
            if listed:
                agent.dialog_entries.pop(i)
            else:
                agent.dialog_entries.insert(i, position)
            self.dialog_orders.clear()

    def _grown(self, event: Event) -> None:
        """A message grew in place (Claude Code: more lines of one response): index its new tool calls."""
        grown = self.by_id.get(event.get("grows"))
        if grown is None:
            return
        self._reclassify_entry(grown)
        grown_event = self.events[grown]
        if "usage" in grown_event or "model" in grown_event:  # it may name them only now
            lists = [self.usage_positions]
            if grown_event.get("agent_id") in self.agents:
                lists.append(self.agents[grown_event["agent_id"]].usage_entries)
            for positions in lists:
                i = bisect_left(positions, grown)
                if i == len(positions) or positions[i] != grown:
                    positions.insert(i, grown)
        self.usage_totals.clear()  # its usage may have changed: summed again on the next request
        agent_id, calls = grown_event["agent_id"], model.tool_calls_of(grown_event)
        self.tool_names.update(model.call_tool_key(c) for c in calls)
        for call in calls:
            if isinstance(call.get("id"), str) and (agent_id, call["id"]) not in self.call_positions:
                self.call_positions[(agent_id, call["id"])] = [grown]

    def _linked(self, event: Event, position: int) -> None:
        """A root agent whose parent a format found later: it moves under the agent holding `cause`."""
        agent = self.agents.get(event.get("links"))
        cause = event.get("cause")
        if agent is None or agent.cause is not None or agent.parent_id is not None or cause not in self.by_id:
            return
        agent.cause = cause
        if agent.created_position is not None:
            self.events.materialize(agent.created_position)["spawn_call_id"] = event.get("spawn_call_id")
        self.spawned.setdefault(cause, []).append(agent.agent_id)
        agent.flags.append("parent_inferred")
        self._resolve_parent(agent, position)

    def _links(self, event: Event, position: int, line_number: int, causes, substance: str | None) -> None:
        """Flag substance and cause links that name no message (yet), and the cycles they close."""
        message_id = event["message_id"]
        awaited = self._dangling.pop(message_id, ()) if self._dangling else ()
        for problem in awaited:  # rare: a link named this message before it was written
            self.problems.remove(problem)
        # an agent's cause is checked with the tree
        named_causes = causes if causes and event["event_type"] != model.AGENT_CREATED else ()
        # Links only point back in an append-only file; a cycle needs a link that was dangling,
        # so it can only close here when this message was awaited (or names itself).
        if (awaited and self._closes_cycle(message_id)) or substance == message_id or message_id in named_causes:
            kind = "substance_cycle" if substance is not None else "cause_cycle"
            self._problem(kind, line_number, f"following {message_id}'s links leads back to it", message_id)
        by_id = self.by_id
        if substance is not None and substance not in by_id:
            self._dangling_link("substance", substance, line_number, message_id)
        for cause in named_causes:
            if cause not in by_id:
                self._dangling_link("cause", cause, line_number, message_id)

    def _dangling_link(self, link: str, target: str, line_number: int, message_id: str) -> None:
        problem = self._problem(f"dangling_{link}", line_number, f"{link} {target!r} names no message", message_id)
        self._dangling.setdefault(target, []).append(problem)

    def _closes_cycle(self, message_id: str, limit: int = 10_000) -> bool:
        """Whether following first links (substance, else first cause) from a message comes back to it."""
        current, seen = message_id, set()
        while len(seen) < limit:
            event = self.events[self.by_id[current]]
            links = [event["substance"]] if model.is_delivery(event) else model.causes_of(event)
            if not links or links[0] not in self.by_id or links[0] in seen:
                return False
            current = links[0]
            if current == message_id:
                return True
            seen.add(current)
        return False

    def _agent(self, agent_id: str, position: int) -> AgentNode:
        agent = self.agents.get(agent_id)
        if agent is None:
            agent = AgentNode(agent_id=agent_id, ordinal=len(self.agents), first_position=position)
            self.agents[agent_id] = agent
            self.roots.append(agent_id)
            self.tree_changes.append((position, agent_id))
        return agent

    def _agent_created(self, event: Event, position: int, line_number: int, causes) -> None:
        agent_id = event["agent_id"]
        existing = self.agents.get(agent_id)
        if existing is not None and existing.created_position is not None:
            self._problem("duplicate_agent_created", line_number,
                          f"{agent_id} was already created by {self.events[existing.created_position]['message_id']}",
                          event["message_id"])
            return
        agent = self._agent(agent_id, position)
        agent.created_position = position
        if isinstance(event.get("name"), str) and event["name"]:
            agent.name = event["name"]
        if isinstance(event.get("language_model"), str):
            agent.language_model = event["language_model"]
        if self.format is not formats.NATIVE and event.get("inferred"):
            agent.flags.append("parent_inferred")
        if self.format is not formats.NATIVE and "in progress" in (event.get("markers") or ()):
            agent.flags.append("in_progress")
        if causes:
            agent.cause = causes[0]
            self.spawned.setdefault(agent.cause, []).append(agent_id)
            if agent.cause in self.by_id:
                self._resolve_parent(agent, position)
            else:
                self._awaiting_cause.setdefault(agent.cause, []).append(agent_id)
                agent.flags.append("cause_missing")

    def _resolve_parent(self, agent: AgentNode, position: int) -> None:
        """Parent = the agent whose transcript holds the message the creation names."""
        if "cause_missing" in agent.flags:
            agent.flags.remove("cause_missing")
        holder = self.events[self.by_id[agent.cause]]["agent_id"]
        if holder not in self.agents:  # the cause is an event of an unknown type
            agent.flags.append("cause_not_an_agent_message")
            return
        ancestor: str | None = holder
        while ancestor is not None:
            if ancestor == agent.agent_id:
                agent.flags.append("cause_cycle")
                self._problem("cause_cycle", self.line_numbers[agent.created_position],
                              f"{agent.agent_id}'s creation names a message of its own subtree", agent.cause)
                return
            ancestor = self.agents[ancestor].parent_id
        self.roots.remove(agent.agent_id)
        agent.parent_id = holder
        self.agents[holder].children.append(agent.agent_id)
        self.tree_changes.append((position, agent.agent_id))

    # --- reading helpers (callers hold the lock) ----------------------------------------

    @property
    def agent_order(self) -> list[str]:
        """Agent ids in order of first appearance (`agents` keeps that order: agents are never removed)."""
        return list(self.agents)

    @property
    def count(self) -> int:
        return len(self.events)

    @property
    def cursor(self) -> str:
        return self.cursor_at(len(self.events))

    def cursor_at(self, position: int) -> str:
        """The cursor of a reader that has seen the events before `position` (see position_after)."""
        return str(Cursor(self.epoch, position))

    def position_after(self, cursor: str | None) -> int | None:
        """The position a cursor points after, or None when it belongs to an older epoch."""
        if not cursor:
            return 0
        parsed = Cursor.parse(cursor)
        if parsed is None:
            return 0
        if parsed.epoch != self.epoch or parsed.count > len(self.events):
            return None
        return max(parsed.count, 0)

    def event(self, message_id: str) -> Event | None:
        position = self.by_id.get(message_id)
        return None if position is None else self.events[position]

    def call_position_for_result(self, position: int) -> int | None:
        """The entry holding the tool call a tool result answers: same agent, same id, latest before it."""
        event = self.events[position]
        calls = self.call_positions.get((event["agent_id"], event.get("tool_call_id")))
        if not calls:
            return None
        i = bisect_right(calls, position)
        return calls[i - 1] if i else None

    def result_positions_for_call(self, position: int, call_id: str) -> list[int]:
        """The results answering the call at `position`: those its agent logged after it and before the next call
        with the same id (the positions are filed under agent and id at ingest, so no result is parsed again)."""
        key = (self.events[position]["agent_id"], call_id)
        calls = self.call_positions.get(key, ())
        i = bisect_right(calls, position)
        if not i or calls[i - 1] != position:
            return []
        results = self.result_positions.get(key, [])
        stop = bisect_left(results, calls[i]) if i < len(calls) else len(results)
        return results[bisect_left(results, position):stop]  # an entry may answer one call and make another
