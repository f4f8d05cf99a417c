"""The in-memory store: sessions indexed incrementally as their lines arrive.

One writer (the watcher thread) appends while request threads read; each session
has a lock that both take, so a reader never sees half of an event's effects.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_left
from collections.abc import Iterable

from viewer import formats
from viewer.core import lockorder, model
from viewer.core.gcpause import FREEZE_AFTER
from viewer.core.host import Host
from viewer.core.cursor import Cursor
from viewer.core.kept import array_from, array_state
from viewer.core.model import TRANSCRIPT_ENTRY, Event
from viewer.core.problems import Problem
from viewer.files.eventlist import EventList
from viewer.files.file_source import FileSource
from viewer.files.tailer import Line
from viewer.formats.base import Normalizer
from viewer.formats.native import LineParser
from viewer.search import index as search_index

from . import facets, failed, records, sleeping
from .agent_tree import AgentTree
from .session_ids import session_name, shown
from .shared_lists import SharedLists
from .tool_calls import ToolCalls

LOCK_SLICE = 256  # lines indexed per hold of the session's lock (a couple of milliseconds): also how often ingest gives way to requests


class SessionIndex:
    """Everything known about one session file, updated event by event.

    Built in one step: `fmt` is the format of its files (its normalizer, when it has one, makes the events of
    their records), `format_reason` why a file is unrecognized ("empty": too empty to tell yet). It holds its agent
    tree (`tree`: AgentTree), its search index (`search`) and its facets (`facets`). `host` is what it shares with
    the app it is part of (tuning, the requests it gives way to, the collector's pauses); alone, one of its own.
    """

    # What it keeps between runs (`state`): the rest of what it holds is who it is, what is made per process, what
    # its parts keep (tree, search, facets, events, normalizer), or their containers bound here (see `_bind`).
    KEPT = ("epoch", "updated_at", "project", "format_reason", "internal", "title", "format_summary", "by_id",
            "references", "caused", "problems", "first_time", "last_time")
    ARRAYS = ("line_numbers", "usage_positions", "growth_positions", "grown_positions")
    MADE = frozenset({"id", "path", "relpath", "name", "host", "lock", "serial", "seen_at", "changed_at", "format",
                      "_adds_keys", "parser", "usage_totals", "dialog_orders", "timeline_drawn", "normalizer", "search",
                      "facets", "events", "members", "creations", "answers", "unanswered", "tree", "agents", "spawned",
                      "tree_changes", "_dangling", "_awaiting_cause", "_links", "_agent", "_agent_created", "_linked",
                      "calls", "call_positions", "result_positions", "tool_names", "_file_calls", "_file_result",
                      "_later"})

    def __init__(self, session_id: str, path: str, relpath: str, fmt: formats.Format = formats.NATIVE,
                 format_reason: str = "", name: str | None = None, host: Host | None = None, unread: bool = False):
        self.host = host if host is not None else Host()
        self.id = session_id
        self.path = path
        self.relpath = shown(relpath)  # printed: a name that is not UTF-8 escaped
        self.name = session_name(relpath) if name is None else name
        self.lock = lockorder.ordered(threading.RLock(), lockorder.SESSION, "session")
        self.epoch = 0
        self.updated_at: float | None = None  # the file's mtime when we last read something new
        self.project: str | None = None  # the folder a grouped session belongs to (Claude Code projects)
        self.members: dict[str, dict] = {}  # path -> member, for a session made of several files
        # caches key on it: equal to nothing else, and alive as long as a key holds it (an id() could be reused)
        self.serial = object()
        self.changed_at = 0  # the library's version when a change to its row was last told (Library.bump)
        self.seen_at = float("-inf")  # when a page last asked for it (Library.get): one left alone may sleep (sleeping)
        self._set_format(fmt, format_reason)
        # `unread`: a group listed before it is read holds no index until something reads one (sleeping.unread)
        sleeping.unread(self) if unread else self.empty()

    def _set_format(self, fmt: formats.Format, reason: str) -> None:
        self.format = fmt
        self.format_reason = reason  # why a file is unrecognized
        self._adds_keys = fmt.adds_keys  # read by `add` on every event

    @property
    def format_settled(self) -> bool:
        """False while a file is too empty to tell its format."""
        return self.format_reason != "empty"

    @property
    def reads_records(self) -> bool:
        """Whether its events are made by a format's normalizer from records (not native lines as written)."""
        return self.format.reads_records

    def empty(self) -> None:
        self.__dict__.pop("_asleep", None)  # emptied: nothing to wake
        self.__dict__.pop("_later", None)  # ... nor anything to make from a cache entry (sleeping.later)
        self.__dict__.pop("_spoiled", None)  # ... nor a part of one that could not be read (sleeping.spoiled)
        self.events = EventList(self.host.tuning)  # native lines as where they are in the file, read when asked for (see eventlist)
        self.line_numbers = array("q")  # per position: its line in the file (compact: 8 bytes each)
        self.by_id: dict[str, int] = {}
        self.problems: list[Problem] = []
        # substance key -> positions of the entries whose `substance` names it
        self.references: dict[str, list[int]] = {}
        # (agent_id, tool_call_id) -> positions of that agent's entries holding / answering the call (see file_at)
        # message id -> positions of the events whose `cause` names it (pieces of text, agent creations)
        self.caused: dict[str, list[int]] = {}
        self._bind(AgentTree(self, self.events, self.line_numbers, self.problems), ToolCalls(self.problems))
        self.internal = 0  # events no page shows as such (a response's later lines, a parent found late)
        self.usage_positions = array("q")  # events naming a model or token usage (usage sums these)
        # events saying a message grew in place (Claude Code), and the message each grew: live pages redraw it
        self.growth_positions, self.grown_positions = array("q"), array("q")
        self.usage_totals: dict = {}  # agent id (None: the session) -> usage.Totals, extended per request
        self.dialog_orders: dict = {}  # chosen agents -> the dialog's order, extended as events arrive (dialogs.dialog)
        self.timeline_drawn = None  # the timeline's bars at one cursor, built on its first request (reads/timeline.py)
        for part in ("search", "facets"):  # a catch-up under way (a count read before this) takes nothing in
            dropped = self.__dict__.get(part)
            if dropped is not None:
                dropped.drop()
        self.search = search_index.SearchIndex(self)  # full-text postings: caught up after ingest and before each query
        self.facets = facets.Facets(self)  # per-agent tool, delivery and event lists: caught up like the search
        self.format_summary: dict | None = None  # what a format says about the whole session (snapshot totals)
        self.title: str | None = None  # a format's own name for the session (Claude Code titles, snapshot titles)
        # the earliest and latest `timestamp` of its events (ISO strings as logged): when it ran, not the file's mtime
        self.first_time: str | None = None
        self.last_time: str | None = None
        self.normalizer: Normalizer | None = self.format.normalizer() if self.format.reads_records else None
        if self.normalizer is not None:
            self.normalizer.shapes = self.host.shapes  # what it keeps packed, packed with its app's shapes
        self.new_parser()

    def _bind(self, tree: AgentTree, calls: ToolCalls) -> None:
        """Hold its parts; their containers and the methods `add` calls are bound here once (no hop per event)."""
        self.tree = tree
        self.__dict__.update(calls.bound())
        self.agents, self.spawned, self.tree_changes = tree.agents, tree.spawned, tree.changes
        self._dangling, self._awaiting_cause = tree.dangling, tree.awaiting_cause
        self._links, self._agent, self._agent_created, self._linked = (tree.links, tree.agent, tree.agent_created,
                                                                      tree.linked)

    @property
    def roots(self) -> list[str]:
        """Agents with no parent (yet), in order of first appearance."""
        return self.tree.roots

    def new_parser(self) -> None:
        self.parser = LineParser(self.format, self._line_problem, self._became_legacy)

    def _became_legacy(self) -> None:
        """The parser read the first legacy message line: the file is legacy (its lines made native as read)."""
        self._set_format(formats.LEGACY, "")

    # Containers a copy shares with its original: set once, never changed in place.
    _SHARED_IN_COPIES = ("members", "format_summary")

    def copy(self) -> SessionIndex:
        """An independent index equal to this one, to be extended by `add` (an as-of snapshot further on).

        Its containers are copied (C-speed copies: far cheaper than replaying the events), the events'
        storage is shared, and the caches and lazily built indexes start empty.
        """
        with self.lock:
            self.wake()  # a copy of the index, not of a sleeping session
            other = type(self).__new__(type(self))
            other.__dict__.update(self.__dict__)
            other.__dict__.pop("_later", None)  # its search index and facets are made anew below
            other.lock = lockorder.ordered(threading.RLock(), lockorder.SESSION, "session")
            other.events = self.events.prefix(len(self.events))
            other.line_numbers = array("q", self.line_numbers)
            other.usage_positions = array("q", self.usage_positions)
            other.growth_positions = array("q", self.growth_positions)
            other.grown_positions = array("q", self.grown_positions)
            other.by_id = dict(self.by_id)
            for name in ("references", "caused"):
                setattr(other, name, SharedLists(getattr(self, name)))
            other.problems = list(self.problems)
            other._bind(self.tree.copy(other, other.events, other.line_numbers, other.problems, SharedLists),
                        self.calls.copy(other.problems, SharedLists))
            other.usage_totals, other.dialog_orders, other.timeline_drawn = {}, {}, None
            other.search, other.facets = search_index.SearchIndex(other), facets.Facets(other)
            other.parser = LineParser(other.format, other._line_problem, other._became_legacy)
        return other

    def state(self):
        """(name, plain value) of what it keeps between runs (store.index_state): its parts say what they keep."""
        for name in self.KEPT:
            value = getattr(self, name)
            yield name, [p.state() for p in value] if name == "problems" else value
        yield "arrays", {name: array_state(getattr(self, name)) for name in self.ARRAYS}

    def restore(self, name: str, value) -> None:
        """Take back one part `state` gave, into this index made empty (a big map may come in several parts: each
        adds to it). Its containers are filled in place: its tree holds them too."""
        if name == "problems":
            self.problems.extend(Problem(*p) for p in value)
        elif name == "arrays":
            if set(value) != set(self.ARRAYS):
                raise ValueError(f"arrays {sorted(value)} are not a session's")
            for key, (typecode, data) in value.items():
                getattr(self, key).extend(array_from((typecode, data)))
        elif name not in self.KEPT:
            raise ValueError(f"a session keeps no {name!r}")
        elif isinstance(getattr(self, name), (dict, set)):
            getattr(self, name).update(value)
        else:
            setattr(self, name, value)

    # --- writing -------------------------------------------------------------------------

    def restart(self) -> None:
        """The file was truncated or replaced: forget everything, bump the epoch."""
        with self.lock:
            frozen = self.count >= FREEZE_AFTER
            self.empty()
            self.epoch += 1
        if frozen:
            self.host.gc.forgotten()

    def ingest(self, lines: list[Line], source: FileSource | None = None) -> int:
        """Index complete lines (read from `source` at their offsets, if given); returns how many events were added.

        The session's lock is held for LOCK_SLICE lines at a time, not for a whole batch of a big file (8 MB,
        some 100 ms): a page of this session waits for a few milliseconds at most while the file is read."""
        added = 0
        give_way = self.host.foreground.give_way
        with self.host.gc.batch() as counter:
            for start in range(0, len(lines), LOCK_SLICE):
                if start:
                    give_way()  # a request under way runs first, not beside this
                added += self._ingest(lines[start:start + LOCK_SLICE] if len(lines) > LOCK_SLICE else lines, source)
            counter["added"] = added
        return added

    def _ingest(self, lines: list[Line], source: FileSource | None) -> int:
        with self.lock:
            events = self.events
            parse, add, keep_at, keep_raw, note_line = (self.parser.parse, self.add, events.keep_at,
                                                        events.keep_raw, events.note_line)
            first = position = len(events)  # add appends exactly one event
            for line in lines:
                parsed = parse(line)
                if parsed is None:
                    continue
                event, raw, facts, as_written = parsed
                add(event, line.number, facts)
                if source is not None and line.offset >= 0:
                    data = line.data  # `raw` is it stripped of blanks
                    lead = 0 if len(raw) == len(data) else len(data) - len(data.lstrip())
                    # the event is the line as written: keep where it is, not the dict; else note where its line is
                    (keep_at if as_written else note_line)(position, source, line.offset + lead, len(raw))
                elif as_written:
                    keep_raw(position, raw)
                position += 1
            return position - first

    def _problem(self, kind: str, line: int | None, detail: str, message_id: str | None = None,
                 of_line: bool = False) -> Problem:
        problem = Problem(kind, line, detail, message_id, of_line)
        self.problems.append(problem)
        return problem

    def _line_problem(self, kind: str, line: int, detail: str, message_id: str | None = None) -> None:
        self._problem(kind, line, detail, message_id, of_line=True)

    def reader_problems(self, problems: list[tuple[str, int | None, str]], withdrawn=()) -> None:
        """What a reader found wrong with the file (tailer.TailResult.problems): a line's problem is of that line;
        `withdrawn`: what it found before that no longer holds (an open last line that grew)."""
        if problems or withdrawn:
            with self.lock:
                for kind, line, detail in withdrawn:
                    gone = Problem(kind, line, detail)
                    if gone in self.problems:
                        self.problems.remove(gone)
                for kind, line, detail in problems:
                    self._problem(kind, line, detail, of_line=line is not None)

    def file_problem(self, detail: str, kind: str = "unreadable_file") -> None:
        """A fault of the file as a whole (e.g. a corrupt gzip stream, a FIFO never read), not of one line."""
        with self.lock:
            self._problem(kind, None, detail)

    def ingest_records(self, batches: list[tuple[dict, Iterable[Line]]], in_hand: bool = False) -> int:
        """Index the lines of a record format (several files of one session merged by time; see index/records.py)."""
        return records.ingest(self, batches, in_hand)

    def add(self, event: Event, line_number: int, facts: tuple | None = None) -> None:
        """Index one more event, read on line `line_number` (its facts: model.checked_facts, None: found here).

        Ingest calls it for each event; an as-of snapshot extends a copy with it. Callers hold the lock (or
        own an index nobody else sees yet)."""
        # The hot path of ingest: the event's facts are found once (by the parser, else here) and filed directly.
        position = len(self.events)
        self.events.append(event)
        self.line_numbers.append(line_number)
        causes, substance, calls, perspective, dialog, result = facts or model.facts_of(event)
        names_usage = "usage" in event or "model" in event
        if names_usage:
            self.usage_positions.append(position)
        stamp = event.get("timestamp")
        if stamp.__class__ is str:  # ISO times of one log compare as strings
            if self.first_time is None or stamp < self.first_time:
                self.first_time = stamp
            if self.last_time is None or stamp > self.last_time:
                self.last_time = stamp
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
        format_keys = self._adds_keys  # keys only the viewer's normalizers add are read (Format.adds_keys)
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
                agent.dialog_originals.append(by_id[message_id] if substance is None else by_id.get(substance, -1))
            if names_usage:
                agent.usage_entries.append(position)
            if format_keys and agent.language_model is None and isinstance(event.get("model"), str):
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
                self._agent_created(event, position, line_number, causes, format_keys)
            elif kind == model.PIECE_OF_TEXT:
                if event["agent_id"] not in self.agents:
                    self._agent(event["agent_id"], position)
            elif format_keys:
                if kind == model.RESPONSE_PART:
                    self.internal += 1
                    self._grown(event)
                elif kind == model.SPAWN_LINK:
                    self.internal += 1
                    self._linked(event, position)
        # Agents created before the message their cause names: resolvable now that its agent is known.
        if first and self._awaiting_cause:
            self.tree.message_arrived(message_id, position)

    def _grown(self, event: Event) -> None:
        """A message grew in place (Claude Code: more lines of one response): index its new tool calls."""
        grown = self.by_id.get(event.get("grows"))
        if grown is None:
            return
        position = len(self.events) - 1  # this event's (add appended it)
        if grown < position:
            self.growth_positions.append(position)
            self.grown_positions.append(grown)
        if self.tree.reclassify(grown):
            self.dialog_orders.clear()
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
        self.calls.grew(grown_event["agent_id"], model.tool_calls_of(grown_event), grown)

    # --- asleep: its index dropped while a cache entry holds it (index/sleeping.py operates on it) ---------------

    def __getattr__(self, name: str):
        # Called only for an attribute the instance does not have: a sleeping session's dropped index
        return sleeping.woken(self, name)

    @property
    def asleep(self) -> dict | None:
        """What a sleeping session answers without waking (and how to wake it), else None."""
        return self.__dict__.get("_asleep")  # as sleeping.asleep: read for every row of every poll of the list

    def sleep(self, wake, lost, summary: dict | None = None) -> None:
        """Drop the index, keeping what the list shows (see sleeping.sleep)."""
        sleeping.sleep(self, wake, lost, summary)

    def wake(self, seen: bool = True) -> None:
        """Take the index back (see sleeping.wake); nothing when awake."""
        sleeping.wake(self, seen)

    def sleepy(self, now: float, after: float) -> bool:
        """Whether nothing has looked at it for `after` seconds and it holds more than its summary."""
        return sleeping.sleepy(self, now, after)

    def summary(self) -> dict:
        """What the sessions list reads of it: the same asleep or awake (callers hold the lock)."""
        return sleeping.summary(self)

    @property
    def indexed_whole(self) -> bool:
        """Whether its search index and facets hold every event (asleep: as they did when it slept)."""
        return sleeping.indexed_whole(self)

    # The sessions list reads these often, and without waking a sleeping session.
    @property
    def agent_count(self) -> int:
        asleep = self.__dict__.get("_asleep")
        return len(self.agents) if asleep is None else asleep["agents"]

    @property
    def failure_count(self) -> int:
        """Its failures (index/failed.py), as far as its facets are built."""
        asleep = self.__dict__.get("_asleep")
        return failed.total(self, caught_up=False) if asleep is None else asleep["failures"]

    @property
    def problem_count(self) -> int:
        asleep = self.__dict__.get("_asleep")
        return len(self.problems) if asleep is None else asleep["problems"]

    # --- reading helpers (callers hold the lock) ----------------------------------------

    @property
    def agent_order(self) -> list[str]:
        """Agent ids in order of first appearance (`agents` keeps that order: agents are never removed)."""
        return list(self.agents)

    @property
    def count(self) -> int:
        asleep = self.__dict__.get("_asleep")  # the sessions list reads it without waking a sleeping session
        return len(self.events) if asleep is None else asleep["count"]

    @property
    def shown_count(self) -> int:
        """The events users see: the same whether the file was read whole or as it was written (a response
        read in several reads grows its message by internal events a whole read does not make)."""
        return self.count - self.internal

    @property
    def cursor(self) -> str:
        return self.cursor_at(self.count)  # `count`: a poll of a sleeping session does not wake it

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
        if parsed.epoch != self.epoch or parsed.count > self.count:
            return None
        return max(parsed.count, 0)

    def event(self, message_id: str) -> Event | None:
        position = self.by_id.get(message_id)
        return None if position is None else self.events[position]

    def call_position_for_result(self, position: int) -> int | None:
        """The entry holding the tool call a tool result answers: same agent, same id, latest before it."""
        event = self.events[position]
        return self.call_position_of(event["agent_id"], event.get("tool_call_id"), position)

    def call_position_of(self, agent_id: str, call_id, position: int) -> int | None:
        """The entry holding the agent's latest call of that id before `position`."""
        return self.calls.call_position_of(agent_id, call_id, position)

    def result_positions_for_call(self, position: int, call_id: str, agent_id: str | None = None) -> list[int]:
        """The results answering the call at `position`: those its agent logged after it and before the next call
        with the same id (the positions are filed under agent and id at ingest, so no result is parsed again).
        `agent_id`: the calling message's agent, when the caller knows it (its message is then not read)."""
        agent_id = self.events[position]["agent_id"] if agent_id is None else agent_id
        return self.calls.results_for_call(agent_id, call_id, position)
