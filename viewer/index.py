"""The in-memory store: sessions indexed incrementally as their lines arrive.

One writer (the watcher thread) appends while request threads read; each session
has a lock that both take, so a reader never sees half of an event's effects.
"""

from __future__ import annotations

import errno
import heapq
import itertools
import logging
import os
import stat
import threading
import zlib
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator

from pathlib import Path

from . import facets, formats, gcpause, jsonio, model, redact, search
from .cursor import Cursor
from .problems import Problem
from .agent_tree import AgentTree
from .eventlist import EventList
from .formats import ai_agent
from .formats.base import Normalizer
from .formats.native import LineParser, intern_values
from .model import TRANSCRIPT_ENTRY, AgentNode, Event
from .shared_lists import SharedLists
from .safe_open import open_regular
from .tailer import BATCH_BYTES, FileSource, FileTailer, GzipReader, Line

log = logging.getLogger(__name__)
SESSION_SUFFIX = ".jsonl"
GZIP_SUFFIX = ".jsonl.gz"  # read whole, not tailed


# Session files not named *.jsonl keep their suffix in their id (it ends ".gz" or ".json"), so the id of a
# *.jsonl file whose stem ends so has that stem's last dot escaped: `x.json.jsonl` is `x~2Ejson`, `x.json` is `x.json`.
_KEPT_SUFFIXES = (GZIP_SUFFIX, *ai_agent.SUFFIXES)


def _escaped(name: str) -> str:
    """A name in id characters: [A-Za-z0-9._-] as they are, any other byte of the name on disk as ~XX.

    A name that is not UTF-8 (os.fsdecode gave surrogates) is escaped byte for byte, as it is on disk,
    so distinct names stay distinct."""
    out = []
    for ch in name:
        if ch.isascii() and (ch.isalnum() or ch in "._-"):
            out.append(ch)
        else:
            out.extend(f"~{b:02X}" for b in ch.encode("utf-8", "surrogateescape"))
    return "".join(out)


def _file_id(filename: str) -> str:
    """A session file's name in an id: without its `.jsonl` (which the other session suffixes keep)."""
    if not filename.endswith(SESSION_SUFFIX):
        return _escaped(filename)
    stem = filename[: -len(SESSION_SUFFIX)]
    if not stem.endswith(_KEPT_SUFFIXES):
        return _escaped(stem)
    head, _, suffix = stem.rpartition(".")
    return f"{_escaped(head)}~2E{_escaped(suffix)}"


def _joined_id(folders: list[str], filename: str) -> str:
    sid = ":".join([*map(_escaped, folders), _file_id(filename)])
    if sid in ("", ".", ".."):  # browsers rewrite these path segments
        sid = "".join(f"~{ord(c):02X}" for c in sid) or "~"
    return sid


def session_id_for(relpath: str) -> str:
    """A stable id, safe as one URL path segment, made from a path relative to DIR.

    Folders are joined with ':'; any character outside [A-Za-z0-9._-] (':' and '~'
    included) is written as ~XX per byte of its name on disk, so distinct paths get distinct ids
    (see `_file_id` for the one suffix left out). An id of ordinary names is the path without
    `.jsonl`: `team/a.jsonl` is `team:a`.
    """
    *folders, filename = relpath.split("/")
    return _joined_id(folders, filename)


def group_id_for(folder_relpath: str, session: str) -> str:
    """The id of a multi-file session (Claude Code: a folder and a sessionId): its main file's id,
    `session` escaped whole (a sessionId is text from the file: a '/' in it is not a folder)."""
    folders = [] if folder_relpath == "." else folder_relpath.split("/")
    return _joined_id(folders, session + SESSION_SUFFIX)


GROUP_MARK = "~group"  # ends the id of a group whose main file's path holds another session (no id has "~g")


def shown(name: str) -> str:
    """A name as it may be printed: a byte of it that is not UTF-8 becomes `\\xNN` (a str with surrogates
    cannot be encoded: not in a page, not in JSON)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")



def reader_for(path: str, limit: int | None = None, inside: str | None = None) -> FileTailer | GzipReader:
    """The reader of a session file; a plain file is tailed `limit` bytes at a time at most.

    `inside`: the real path of the folder the file opened must lie in (None: anywhere); the reader
    raises RefusedFile or PermissionError for a file that may not or cannot be read."""
    if ai_agent.is_snapshot_name(path):
        return ai_agent.SnapshotReader(path, inside=inside)
    if path.endswith(GZIP_SUFFIX):
        return GzipReader(path, inside=inside)
    return FileTailer(path, limit, inside=inside)


GROUP_BATCH_BYTES = 256 * 1024  # each file of a multi-file session is read this much at a time as they are merged


def _read_some(reader):
    return reader.read(GROUP_BATCH_BYTES) if isinstance(reader, FileTailer) else reader.read()


def _lines_from(reader, first, replaced: list, problems: list | None = None) -> Iterator[Line]:
    """The lines of a first read, then the rest of the file read as they are used; a file replaced
    meanwhile stops here and is noted in `replaced`; the problems of the later reads go to `problems`."""
    result = first
    while True:
        yield from result.lines
        if not result.more:
            return
        result = _read_some(reader)
        if problems is not None:
            problems.extend(result.problems)
        if result.restarted:
            replaced.append(reader.path)
            return


def _something_at(path: str) -> bool:
    """Whether anything but a folder is at `path` (a symlink leading nowhere is nothing)."""
    try:
        return not stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _refused_path(error: OSError, default: str | None) -> str | None:
    """The path of the file a refusal (RefusedFile, PermissionError) is about."""
    path = getattr(error, "path", None) or error.filename
    return os.path.abspath(os.fsdecode(path)) if isinstance(path, (str, bytes)) else default


def session_name(relpath: str) -> str:
    """The name a session is shown under: its file's name without the session suffix, printable."""
    return shown(Path(relpath).name.removesuffix(GZIP_SUFFIX).removesuffix(SESSION_SUFFIX))


_serials = itertools.count()


class SessionIndex(AgentTree):
    """Everything known about one session file, updated event by event.

    Built in one step: `fmt` is the format of its files (its normalizer, when it has one, makes the events of
    their records), `format_reason` why a file is unrecognized ("empty": too empty to tell yet).
    """

    def __init__(self, session_id: str, path: str, relpath: str, fmt: formats.Format = formats.NATIVE,
                 format_reason: str = "", name: str | None = None):
        self.id = session_id
        self.path = path
        self.relpath = shown(relpath)  # printed: a name that is not UTF-8 escaped
        self.name = session_name(relpath) if name is None else name
        self.lock = threading.RLock()
        self.epoch = 0
        self.updated_at: float | None = None  # the file's mtime when we last read something new
        self.project: str | None = None  # the folder a grouped session belongs to (Claude Code projects)
        self.members: dict[str, dict] = {}  # path -> member, for a session made of several files
        self.serial = next(_serials)  # unique for the life of the process (unlike id()): caches key on it
        self._set_format(fmt, format_reason)
        self._clear()

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

    def _clear(self) -> None:
        self.events = EventList()  # native lines as where they are in the file, read when asked for (see eventlist)
        self.line_numbers = array("q")  # per position: its line in the file (compact: 8 bytes each)
        self.by_id: dict[str, int] = {}
        self.agents: dict[str, AgentNode] = {}
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
        self.usage_positions = array("q")  # events naming a model or token usage (usage sums these)
        self.usage_totals: dict = {}  # agent id (None: the session) -> usage.Totals, extended per request
        self.dialog_orders: dict = {}  # chosen agents -> the dialog's order, extended as events arrive (queries.dialog)
        self.search = search.SearchIndex(self)  # full-text postings: caught up after ingest and before each query
        self.facets = facets.Facets(self)  # per-agent tool, delivery and event lists: caught up like the search
        self.format_summary: dict | None = None  # what a format says about the whole session (snapshot totals)
        self.title: str | None = None  # a format's own name for the session (Claude Code titles, snapshot titles)
        self.normalizer: Normalizer | None = self.format.normalizer() if self.format.reads_records else None
        self._parser = LineParser(self.format, self._line_problem, self._became_legacy)

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
            other = type(self).__new__(type(self))
            other.__dict__.update(self.__dict__)
            other.lock = threading.RLock()
            other.events = self.events.prefix(len(self.events))
            other.line_numbers = array("q", self.line_numbers)
            other.usage_positions = array("q", self.usage_positions)
            other.by_id = dict(self.by_id)
            other.agents = {agent_id: agent.copy() for agent_id, agent in self.agents.items()}
            for name in ("references", "call_positions", "result_positions", "caused", "spawned",
                         "_awaiting_cause", "_dangling"):
                setattr(other, name, SharedLists(getattr(self, name)))
            other.tree_changes, other.problems = list(self.tree_changes), list(self.problems)
            other.tool_names = set(self.tool_names)
            other.usage_totals, other.dialog_orders = {}, {}
            other.search, other.facets = search.SearchIndex(other), facets.Facets(other)
            other._parser = LineParser(other.format, other._line_problem, other._became_legacy)
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
            parse, add, keep_at, keep_raw, note_line = (self._parser.parse, self.add, events.keep_at,
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

    def ingest_records(self, batches: list[tuple[dict, Iterable[Line]]]) -> int:
        """Index the lines of a record format (several files of one session merged by time).

        The lines of a member may be an iterator read as it goes: records are parsed one at a time, so a
        big group is never in memory whole (unless the format must reorder a member's records first).
        """
        added = 0
        normalizer = self.normalizer
        with self.lock, gcpause.batch() as counter:
            streams = [normalizer.order(self._records(member, lines)) for member, lines in batches]
            merged = heapq.merge(*streams, key=lambda item: item[0]) if len(streams) > 1 else (streams or [[]])[0]
            # after a record too deep, each event is checked: a normalizer may make its events later (a response
            # is emitted when the next record or the flush shows it complete)
            deep_line = None
            for _, number, member, record, source, too_deep in merged:
                deep_line = number if too_deep else deep_line
                for event in normalizer.feed(record, number, member, source):
                    added += self._add_normalized(event, number, deep_line)
            for event in normalizer.flush():
                added += self._add_normalized(event, event.get("line") or 0, deep_line)
            self.format_summary = normalizer.summary
            self.title = normalizer.title
            unread = normalizer.problems  # files of the session it did not read (sidecars)
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
        time_of, parse_record = self.normalizer.time_of, self._parser.parse  # a record parser (its `records`)
        path = member.get("path")
        last = ""
        for line in lines:
            parsed = parse_record(line)
            if parsed is None:
                continue
            record, read_with_care, too_deep = parsed
            stamp = time_of(record)
            last = (stamp if isinstance(stamp, str) else None) or last
            addressable = path and line.offset >= 0 and not read_with_care
            source = (path, line.offset, len(line.data), zlib.crc32(line.data)) if addressable else None
            yield last, line.number, member, record, source, too_deep

    def _cut_normalized(self, event: Event, line_number: int) -> None:
        """An event made of a record that nests too deep, cut where it is (its normalizer may still change it);
        a message that grew by such a record (response_part) is cut instead."""
        shown = self.normalizer.item_of(event) if event["event_type"] == model.RESPONSE_PART else event
        if type(shown) is dict and jsonio.deeper_than(shown):
            jsonio.cut(shown, in_place=True)
            self._parser.too_deep(line_number, shown.get("message_id"))

    def _add_normalized(self, event: Event, line_number: int, deep_line: int | None = None) -> int:
        """Index a normalized event; `deep_line`: the line of a record too deep read before it (it is checked)."""
        intern_values(event)
        normalizer = self.normalizer
        stored = normalizer.keep(event)  # the event without its content, read again when read (None: the event)
        if event["message_id"] in self.by_id:  # a record seen twice (e.g. a resumed session copies lines)
            return 0
        if deep_line is not None:
            self._cut_normalized(event, deep_line)
        if event["event_type"] == model.RESPONSE_PART:
            grown, item = self.by_id.get(event.get("grows")), normalizer.item_of(event)
            if grown is not None and item is not None:
                self.events.keep_raw(grown, item)  # it grew: what is stored for it now, its cached copy dropped
        self.add(event, line_number)
        if stored is not None:
            self.events.keep_raw(len(self.events) - 1, stored)
        return 1

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
                    self._grown(event)
                elif kind == model.SPAWN_LINK:
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


def _is_folder(entry: os.DirEntry) -> bool:
    """A folder, or a symlink to one (as os.walk tells them)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


MAX_FOLDER_DEPTH = 64  # folders further below DIR are not read (a `too_deep_folder` problem names the first)
_FOLDER_READ_KINDS = ("permission_denied", "unreadable_folder", "too_deep_folder")  # cleared once it reads


class Library:
    """Every session below a folder, keyed by its stable id.

    Only regular files inside the folder are read, checked on the descriptor opened (safe_open): a
    FIFO, a device, a file a symlink leads to outside the folder (unless `follow_symlinks` is set)
    or one this user may not read is listed with a problem and 0 events, and never read. What stops
    a folder being read (permission, depth) is listed in `problems`, not silently left out.
    """

    def __init__(self, root: str | os.PathLike, follow_symlinks: bool = False):
        self.root = os.path.abspath(root)
        self.real_root = os.path.realpath(root)
        self.follow_symlinks = follow_symlinks
        self.lock = threading.Lock()
        self.sessions: dict[str, SessionIndex] = {}
        self.aliases: dict[str, str] = {}  # id of a renamed session -> its id now
        self._tailers: dict[str, FileTailer | GzipReader] = {}
        self._by_path: dict[str, SessionIndex] = {}
        self._groups: dict[tuple[str, str], SessionIndex] = {}  # (folder, session id) -> a multi-file session
        self._deferred: set[tuple[str, str]] | None = None  # groups to read once a scan has found all their files
        # id -> epoch of the session just dropped under it (refused, or readable again): its successor's is later
        self._replaced_epochs: dict[str, int] = {}
        self._problems: list[Problem] = []  # of the folder, not of one session (see `problems`)
        self.version = 0  # bumped on every change; the sessions list polls it
        # How many BATCH_BYTES slices one refresh reads of a file (None: to its end). The watcher sets 1 so one big
        # file never holds up the others; the files left unfinished wait in `unfinished` for their next turn.
        self.slices_per_read: int | None = None
        self.unfinished: set[str] = set()

    @property
    def problems(self) -> list[Problem]:
        """Problems of the folder as a whole (folders that cannot be read, watcher failures): a copy."""
        with self.lock:
            return list(self._problems)

    def folder_problem(self, kind: str, relpath: str, detail: str) -> None:
        """Record a problem of the folder, once per kind and path (a later detail replaces the earlier one);
        shown on `/` and in /api/sessions. Call it without holding `self.lock`."""
        problem = Problem(kind, None, detail, path=shown(relpath))
        with self.lock:
            for i, known in enumerate(self._problems):
                if (known.kind, known.path) == (problem.kind, problem.path):
                    if known.detail == detail:
                        return
                    self._problems[i] = problem
                    break
            else:
                self._problems.append(problem)
            self.version += 1

    def _folder_read(self, relpath: str) -> None:
        """A folder was read: what stopped it being read before no longer holds."""
        path = shown(relpath)
        self._drop_folder_problems(lambda p: p.path == path)

    def _folder_gone(self, relpath: str) -> None:
        """A folder went away: so did what stopped it, or a folder in it, being read."""
        path = shown(relpath)
        below = path + "/" if path != "." else ""
        self._drop_folder_problems(lambda p: p.path == path or p.path.startswith(below))

    def forget_gone_folders(self) -> None:
        """Drop the problems of folders whose top folder below DIR is gone (a walk of the folder cannot see what
        is not there; the watcher calls this when it walks DIR without a file event to go by)."""
        with self.lock:
            tops = {p.path.split("/", 1)[0] for p in self._problems if p.kind in _FOLDER_READ_KINDS and p.path}
        for top in tops:
            if top != "." and not os.path.lexists(os.path.join(self.root, top)):
                self._folder_gone(top)

    def _drop_folder_problems(self, concerns) -> None:
        with self.lock:
            kept = [p for p in self._problems if not (p.kind in _FOLDER_READ_KINDS and concerns(p))]
            if len(kept) != len(self._problems):
                self._problems = kept
                self.version += 1

    @staticmethod
    def is_session_file(path: str) -> bool:
        return ((path.endswith((SESSION_SUFFIX, GZIP_SUFFIX)) or ai_agent.is_snapshot_name(path))
                and not os.path.basename(path).startswith("."))

    @property
    def inside(self) -> str | None:
        """The folder every file read must really lie in (what safe_open checks); None: anywhere."""
        return None if self.follow_symlinks else self.real_root

    def relpath(self, path: str) -> str:
        """A path relative to DIR, '/'-separated, as on disk (a name that is not UTF-8 keeps its surrogates:
        ids escape its bytes; `shown` makes it printable)."""
        return Path(os.path.relpath(path, self.root)).as_posix()

    def scan(self, folder: str | None = None) -> None:
        """Read every session file below a folder (idempotent: known files are tailed)."""
        outer = self._deferred is None
        if outer:  # a group's files are read together, merged by time, once all are known
            self._deferred = set()
        try:
            self._walk(folder)
        finally:
            if outer:
                deferred, self._deferred = self._deferred, None
                for key in sorted(deferred):
                    if key in self._groups:
                        self._read_group(self._groups[key])

    def _walk(self, folder: str | None) -> None:
        """Refresh every session file below a folder, folders in name order, each folder's files before its
        subfolders (as os.walk). Iterative: a folder of any depth costs no recursion; folders deeper than
        MAX_FOLDER_DEPTH and folders that cannot be read are listed in `problems` and left out."""
        seen_folders: set[str] = set()  # followed symlinks can loop (unfollowed, no folder is reached twice)
        pending = [os.path.abspath(folder or self.root)]
        while pending:
            dirpath = pending.pop()
            relpath = self.relpath(dirpath)
            if self._too_deep(relpath):
                continue
            if self.follow_symlinks:
                real = os.path.realpath(dirpath)
                if real in seen_folders:
                    continue
                seen_folders.add(real)
            listed = self._list_folder(dirpath, relpath)
            if listed is None:
                continue
            subfolders, filenames = listed
            for filename in filenames:
                path = os.path.join(dirpath, filename)
                if self.is_session_file(path):
                    try:
                        self.refresh(path)
                    except Exception:  # one unreadable file must not hide the others
                        log.exception("could not read %s", path)
            pending.extend(os.path.join(dirpath, name) for name in reversed(subfolders))

    def _too_deep(self, relpath: str) -> bool:
        """Whether a folder lies more than MAX_FOLDER_DEPTH below DIR (then a problem names the first such
        folder of its chain: one problem per deep chain). Told from the path alone, before any system call."""
        folders = [] if relpath == "." else relpath.split("/")
        if len(folders) <= MAX_FOLDER_DEPTH:
            return False
        self.folder_problem("too_deep_folder", "/".join(folders[: MAX_FOLDER_DEPTH + 1]),
                            f"more than {MAX_FOLDER_DEPTH} folders below the watched folder: not read")
        return True

    def _list_folder(self, dirpath: str, relpath: str) -> tuple[list[str], list[str]] | None:
        """A folder's subfolders to walk (not hidden; symlinked ones only when followed) and its other
        entries, each sorted; None, with a problem, when it cannot be read."""
        subfolders, filenames = [], []
        try:
            with os.scandir(dirpath) as entries:
                for entry in entries:
                    if not _is_folder(entry):
                        filenames.append(entry.name)
                    elif (self.follow_symlinks or not entry.is_symlink()) and not entry.name.startswith("."):
                        subfolders.append(entry.name)
        except FileNotFoundError:  # gone meanwhile
            return None
        except PermissionError as exc:
            self.folder_problem("permission_denied", relpath, f"the folder cannot be read: {exc.strerror}")
            return None
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                self.folder_problem("too_deep_folder", relpath, "its path is longer than the system allows: not read")
            elif exc.errno != errno.ENOTDIR:  # a file now: the watcher reads it as one
                self.folder_problem("unreadable_folder", relpath, f"the folder cannot be read: {exc.strerror}")
            return None
        self._folder_read(relpath)
        return sorted(subfolders), sorted(filenames)

    def refresh(self, path: str) -> None:
        """Ingest whatever was appended to one file since the last call.

        A file that may not or cannot be read is listed with a problem instead (see `_refuse`), until it
        goes away or can be read: then it is read like any other.
        """
        path = os.path.abspath(path)
        if not self.is_session_file(path):
            return
        if not _something_at(path):
            self.forget(path)
            return
        try:
            self._refresh(path)
        except formats.NOT_READABLE as error:
            self._refuse(_refused_path(error, path), error)
        except FileNotFoundError:  # gone while it was looked at
            self.forget(path)

    def _refresh(self, path: str) -> None:
        session = self._by_path.get(path)
        if session is not None and session.format is formats.NOT_READ:  # listed unread: readable now?
            os.close(open_regular(path, self.inside))  # raises while it is not
            self._replaced_epochs[session.id] = session.epoch
            self.forget(path)
            session = None
        if session is not None and session.members:
            self._read_group(session)
            return
        if session is not None and session.count == 0 and (
                not session.format_settled or session.format is formats.UNRECOGNIZED):
            fmt, _, group = self._classify(path)
            if fmt is not session.format or group is not None:  # its first line arrived: now we can tell
                self.forget(path)
                session = None
        new = session is None
        if new:
            fmt, reason, group = self._classify(path)
            if group is not None:
                self._join_group(path, fmt, group)
                return
            session = self._session_of(path, fmt, reason)
            self._tailers[path] = reader_for(path, BATCH_BYTES, inside=self.inside)
        tailer = self._tailers[path]
        changed = False
        slices = self.slices_per_read
        while True:  # a big file in batches of BATCH_BYTES: the lines read wait in memory one batch at a time
            result = tailer.read()
            if result.restarted:
                session.restart()
            if result.lines and session.format is formats.UNRECOGNIZED and ai_agent.is_snapshot_name(path):
                pass  # a JSON document of no known shape: listed with the reason, not read as lines
            elif result.lines and session.reads_records:
                session.ingest_records([({"rel": session.relpath}, result.lines)])
            elif result.lines:
                session.ingest(result.lines, result.source)
            if result.error:
                session.file_problem(result.error)
            session.reader_problems(result.problems)
            changed = changed or bool(result.lines or result.restarted or result.error or result.problems)
            if not result.more:
                break
            if slices is not None:
                slices -= 1
                if slices <= 0:  # the rest of a big file waits its turn: other files are read meanwhile
                    with self.lock:
                        self.unfinished.add(path)
                    break
            del result  # its lines are indexed: free them before reading the next batch
        if changed or new:
            session.updated_at = result.modified_at
            if new:  # listed once read: nobody sees it empty while its lines are on their way
                self._list(path, session)
            else:
                with self.lock:
                    self.version += 1

    def _session_of(self, path: str, fmt: formats.Format = formats.NATIVE, reason: str = "") -> SessionIndex:
        """A new, empty index of the session file at `path`."""
        relpath = self.relpath(path)
        name = (shown(os.path.basename(path).removesuffix(".gz").removesuffix(".json"))
                if ai_agent.is_snapshot_name(path) else None)
        return SessionIndex(session_id_for(relpath), path, relpath, fmt, reason, name)

    def _list(self, path: str, session: SessionIndex) -> None:
        self._continue_epoch(session)
        with self.lock:
            self._by_path[path] = session
            self._settle_group_at(path)  # a group named like this file gives way
            self.sessions[session.id] = session
            self.aliases.pop(session.id, None)
            self.version += 1

    def _continue_epoch(self, session: SessionIndex) -> None:
        """A session listed in place of one dropped under its id starts a later epoch: a page polling with
        the dropped one's cursor reloads instead of taking the new events for more of the old ones."""
        dropped = self._replaced_epochs.pop(session.id, None)
        if dropped is not None and session.epoch <= dropped:
            with session.lock:
                session.epoch = dropped + 1

    def _refuse(self, path: str, error: OSError) -> None:
        """List a file that may not or cannot be read (a FIFO, a device, a symlink out of the folder, permission
        denied): 0 events and one problem saying what it is. What was read of it before is no longer shown."""
        kind, detail = formats.refusal(error)
        listed = self._by_path.get(path)
        if (listed is not None and listed.format is formats.NOT_READ
                and listed.problems == [Problem(kind, None, detail)]):
            return  # refused as before: nothing changed
        log.debug("not reading %s: %s", path, detail)  # shown on the sessions list and its problems page
        session = self._session_of(path, formats.NOT_READ, detail)
        if listed is not None and listed.id == session.id:
            self._replaced_epochs[session.id] = listed.epoch
        self.forget(path)
        session.file_problem(detail, kind)
        self._list(path, session)

    def _classify(self, path: str) -> tuple[formats.Format, str, dict | None]:
        """A file's format by its content, the reason when none fits, and its group when it is one file of several."""
        if ai_agent.is_snapshot_name(path):
            record, why = ai_agent.read_record(path, self.inside)
            if isinstance(record, dict) and formats.AI_AGENT.looks_like(record):
                return formats.AI_AGENT, "", None
            return formats.UNRECOGNIZED, why or "a JSON document without an opTree", None
        if path.endswith(GZIP_SUFFIX):
            return formats.NATIVE, "", None
        record, why = formats.first_record(path, self.inside)
        if record is None:
            if why == "empty":
                return formats.NATIVE, "empty", None
            return formats.UNRECOGNIZED, why, None
        fmt, reason = formats.detect_record(record)
        if fmt is None:
            return formats.UNRECOGNIZED, reason, None
        if fmt.member_of is not None:
            return fmt, "", fmt.member_of(path, record)
        return fmt, "", None

    def _join_group(self, path: str, fmt: formats.Format, member: dict) -> None:
        """One file of a multi-file session (Claude Code: main file, sub-agent files)."""
        key = (member["folder"], member["session"])
        session = self._groups.get(key)
        if session is None:
            main = os.path.join(member["folder"], member["session"] + SESSION_SUFFIX)
            with self.lock:
                session_id = self._group_id(key)
            session = SessionIndex(session_id, main, self.relpath(main), fmt, name=shown(member["session"]))
            project = self.relpath(member["folder"])  # `serve` one project folder: name it, not "."
            session.project = shown(os.path.basename(member["folder"]) if project == "." else project)
            self._groups[key] = session
        member = {**member, "rel": shown(self.relpath(path)), "path": path, "inside": self.inside}
        with session.lock:
            session.members[path] = member
        self._by_path[path] = session
        self._tailers[path] = reader_for(path, inside=self.inside)
        if self._deferred is not None:
            self._deferred.add(key)
        else:
            self._read_group(session)

    def _group_id(self, key: tuple[str, str]) -> str:
        """A group's id (caller holds the lock): its main file's, marked when a session of one file that
        is not in the group has that id (a native file named after a Claude Code sessionId)."""
        folder, name = key
        sid = group_id_for(self.relpath(folder), name)
        holder = self._by_path.get(os.path.join(folder, name + SESSION_SUFFIX))
        taken = holder is not None and not holder.members and holder.id == sid
        return sid + GROUP_MARK if taken else sid

    def _settle_group_at(self, path: str) -> None:
        """A session of one file came or went at `path` (caller holds the lock): the group whose main file
        that path names takes the id it has now. Its id depends on what is in the folder, not on the order
        files were found in."""
        if not self._groups or not path.endswith(SESSION_SUFFIX):
            return
        key = (os.path.dirname(path), os.path.basename(path)[: -len(SESSION_SUFFIX)])
        group = self._groups.get(key)
        if group is not None:
            self._rename(group, self._group_id(key))

    def _rename(self, session: SessionIndex, new_id: str) -> None:
        """Give a session a new id (caller holds the lock); links to the old one follow it (see `resolve`)."""
        old_id = session.id
        if old_id == new_id:
            return
        with session.lock:
            session.id = new_id
        if self.sessions.get(old_id) is session:
            del self.sessions[old_id]
            self.sessions[new_id] = session
            self.aliases.pop(new_id, None)
            self.aliases[old_id] = new_id
        self.version += 1

    def _read_group(self, session: SessionIndex) -> None:
        """Read what was appended to any file of a multi-file session; all again when one was replaced.

        A file of it that may not or cannot be read (now) leaves the session, which is read again without
        it, and is listed on its own with the problem."""
        try:
            self._read_group_files(session)
        except formats.NOT_READABLE as error:
            path = _refused_path(error, None)
            if path not in session.members:
                raise
            self._refuse(path, error)

    def _read_group_files(self, session: SessionIndex) -> None:
        """The files are merged as they are read, GROUP_BATCH_BYTES of each at a time: a big group is never
        in memory whole."""
        paths = list(session.members)
        results = [_read_some(self._tailers[p]) for p in paths]
        replaced: list[str] = []  # files replaced before or while they were read: the group is read again
        problems = [problem for r in results for problem in r.problems]
        if not any(r.restarted for r in results):
            batches = [(session.members[p], _lines_from(self._tailers[p], r, replaced, problems))
                       for p, r in zip(paths, results) if r.lines]
            if batches:
                session.ingest_records(batches)
        if replaced or any(r.restarted for r in results):
            session.restart()
            for p in paths:
                self._tailers[p] = reader_for(p, inside=self.inside)
            self._read_group_files(session)  # fresh readers start at 0: they do not report a restart
            return
        for r in results:
            if r.error:
                session.file_problem(r.error)
        session.reader_problems(problems)
        stamps = [r.modified_at for r in results if r.modified_at is not None]
        listed = session.id in self.sessions
        if batches or not listed:
            if stamps:
                session.updated_at = max(stamps)
            if not listed:
                self._continue_epoch(session)
            with self.lock:
                if not listed:
                    self.sessions[session.id] = session
                    self.aliases.pop(session.id, None)
                self.version += 1

    def open_file(self, path: str) -> SessionIndex | None:
        """One session file read whole, with the other files of its session (Claude Code sub-agents)."""
        path = os.path.abspath(path)
        outer = self._deferred is None
        if outer:
            self._deferred = set()
        try:
            self.refresh(path)
            session = self._by_path.get(path)
            if session is not None and session.members and session.path == path:
                folder, stem = os.path.dirname(path), os.path.basename(path).removesuffix(SESSION_SUFFIX)
                subagents = os.path.join(folder, stem, "subagents")
                if os.path.isdir(subagents):
                    self.scan(subagents)
                for name in sorted(os.listdir(folder)):
                    beside = os.path.join(folder, name)
                    if name.startswith("agent-") and name.endswith(SESSION_SUFFIX):
                        try:
                            record, _ = formats.first_record(beside, self.inside)
                        except formats.NOT_READABLE:  # not read: not known to be of this session
                            continue
                        if isinstance(record, dict) and record.get("sessionId") == stem:
                            self.refresh(beside)
        finally:
            if outer:
                deferred, self._deferred = self._deferred, None
                for key in sorted(deferred):
                    if key in self._groups:  # gone if its only file could not be read
                        self._read_group(self._groups[key])
        return self._by_path.get(path)

    def move(self, source: str, destination: str) -> None:
        """A session file was renamed: keep its index and its reading position under the new name.

        Links to the old id keep working (see `resolve`). Renamed to something that is not a
        session file, it is forgotten; a file renamed over a session replaces it.
        """
        source, destination = os.path.abspath(source), os.path.abspath(destination)
        session = self._by_path.get(source)
        if session is not None and session.members:  # one file of several: read the group again
            self.forget(source)
            self.refresh(destination)
            return
        if (session is None or session.format is formats.NOT_READ or not self.is_session_file(destination)
                or source.endswith(GZIP_SUFFIX) != destination.endswith(GZIP_SUFFIX)):  # NOT_READ: nothing to keep
            self.forget(source)
            self.refresh(destination)
            return
        if destination in self._by_path:
            self.forget(destination)
        relpath = self.relpath(destination)
        with self.lock, session.lock:
            old_id = session.id
            del self._by_path[source], self.sessions[old_id]
            tailer = self._tailers.pop(source)
            tailer.path = destination
            session.id, session.path, session.relpath = session_id_for(relpath), destination, shown(relpath)
            session.name = session_name(relpath)
            self._by_path[destination], self._tailers[destination] = session, tailer
            self._settle_group_at(source)
            self._settle_group_at(destination)
            self.sessions[session.id] = session
            self.aliases.pop(session.id, None)
            if old_id != session.id:
                self.aliases[old_id] = session.id
            self.version += 1
        self.refresh(destination)

    def forget(self, path: str) -> None:
        path = os.path.abspath(path)
        with self.lock:
            session = self._by_path.pop(path, None)
            self._tailers.pop(path, None)
            if session is not None and session.members:
                with session.lock:
                    session.members.pop(path, None)
                if session.members:  # the others stay: read them again without it
                    session.restart()
                    for p in session.members:
                        self._tailers[p] = reader_for(p, inside=self.inside)
                    self.version += 1
                    regroup = session
                else:
                    self._groups = {k: v for k, v in self._groups.items() if v is not session}
                    if self.sessions.get(session.id) is session:  # not a main file listed unread under its id
                        del self.sessions[session.id]
                    self.version += 1
                    regroup = None
                session = None
            else:
                regroup = None
            if session is not None:
                self.sessions.pop(session.id, None)
                self._settle_group_at(path)  # a group named like this file may have its id back
                self.version += 1
                if session.count >= gcpause.FREEZE_AFTER:
                    gcpause.forgotten()
        if regroup is not None:
            self._read_group(regroup)

    def take_unfinished(self) -> list[str]:
        """The files a refresh left part-read (see slices_per_read), to be read on; the set is emptied."""
        with self.lock:
            paths, self.unfinished = sorted(self.unfinished), set()
        return paths

    def paths_below(self, folder: str) -> list[str]:
        prefix = os.path.join(os.path.abspath(folder), "")
        with self.lock:
            return [p for p in self._by_path if p.startswith(prefix)]

    def forget_below(self, folder: str) -> None:
        """A folder went away: forget every session that was inside it, and its problems."""
        for path in self.paths_below(folder):
            self.forget(path)
        self._folder_gone(self.relpath(folder))

    def index_step(self, budget: int = 512) -> bool:
        """Extend one session's facets and search index by up to `budget` events (a short hold of its lock: a poll
        waits at most that long); False when all are complete.

        The ingest thread calls it while no file waits, so search indexing never delays an ingest.
        """
        with self.lock:
            sessions = list(self.sessions.values())  # no order needed: every session is caught up in turn
        for session in sessions:
            if session.facets.indexed < session.count or session.search.indexed < session.count:
                session.facets.catch_up(budget)
                session.search.catch_up(budget)  # reads the events the facets just read: from the cache
                with session.lock:
                    session.events.forget_cached()  # kept for pages, not for the whole walk
                return True
        return False

    def get(self, session_id: str) -> SessionIndex | None:
        return self.sessions.get(session_id)

    def resolve(self, session_id: str) -> str | None:
        """The id a session has now, after renames; None when it is gone."""
        with self.lock:
            for _ in range(100):  # renamed again and again: a chain, never a loop, but bounded
                if session_id in self.sessions:
                    return session_id
                session_id = self.aliases.get(session_id)
                if session_id is None:
                    return None
        return None

    def listing(self) -> list[SessionIndex]:
        with self.lock:
            return sorted(self.sessions.values(), key=lambda s: s.relpath)
