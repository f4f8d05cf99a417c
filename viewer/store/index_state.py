"""A SessionIndex as plain data and back: what the persistent cache keeps of a session (see session_cache).

Each part of a session says what it keeps (`state()`, given back to `restore()`); this module only assembles the
parts into sections of plain data, each small enough to encode without holding up the server. A session with an
attribute its part does not declare is not kept (`cacheable`) rather than losing that attribute silently.
"""

from __future__ import annotations

import functools
import logging
import marshal
from collections.abc import Iterator

from viewer import formats
from viewer.core.host import Host
from viewer.core.kept import Items
from viewer.core.tuning import Tuning
from viewer.index import failed, sleeping, usage
from viewer.index.agent_tree import AgentTree, answers, creations, take_back_creations
from viewer.index.session_index import SessionIndex
from viewer.index.tool_calls import ToolCalls
from viewer.search.index import SearchIndex

from .cache_store import CorruptEntry, Later, Raw

log = logging.getLogger(__name__)

# A section is encoded by one marshal.dumps, which holds the GIL throughout: every request waits for it (a 1M-event
# session's postings in one section held the server for 57-170 ms). So none is big: at most Tuning.section_items
# items of a map, section_bytes of arrays, section_events events' slots; a few milliseconds each.

_KEPT_ITEMS = {type(None), bytes, dict}  # event list slots kept: where a line is, its bytes, or the event
# The parts of a session, each kept in a section of its own name (and its big maps in sections of theirs)
_PARTS = ("session", "calls", "tree", "facets")
# Sections kept encoded (their name, then marshal's bytes of their value in a Raw section), taken back when the woken
# session is first searched (sleeping.later): its page and JSON do not read its search index, a sixth of its entry.
# "search indexed" says how far it is built without it.
_LATER = frozenset({"search", "postings"})
# ... and the session's message ids, always in sections of their own, taken back when first read: its page and JSON
# read none (what created each agent is kept: "creations"), and they were a third of what a wake decodes.
_READ_LATER = frozenset({"by_id"})
# ... and its tool calls, taken back when first read (its page and JSON read none: where each sub-agent's creating
# call was answered and which calls none answered are kept, "answers" and "unanswered"), a fifth of what it decoded
_CALLS_LATER = frozenset({"calls", *ToolCalls.KEPT})


def _part_of(s: SessionIndex, part: str):
    return s if part == "session" else getattr(s, part)


@functools.cache
def _owners() -> dict[str, str]:
    """Which part keeps a map that may come in sections of its own (by its name): the session's, its tool calls'
    and its tree's (their `restore` adds each section to the map). Made once (read, never changed): every wake
    reads it."""
    return {**{name: "session" for name in SessionIndex.KEPT}, **{name: "calls" for name in ToolCalls.KEPT},
            **{name: "tree" for name in AgentTree.KEPT}, "postings": "search"}


def cacheable(s: SessionIndex) -> bool:
    """Whether every part of this session can be kept: a native file read whole into its index (no normalizer,
    no several files) with its search index and facets complete, or a session of several files whose normalizer
    settled (its search index and facets as far as they are built: it is kept as soon as it is read, to sleep, and
    again once they are complete; see sleeping), and no attribute its class does not declare."""
    if s.members:
        stored = s.format.normalizer.stored_type if s.format.reads_records else None
        kept_items = {dict, stored}
        if stored is None or s.normalizer is None or not s.normalizer.settled:
            return False
    else:
        kept_items = _KEPT_ITEMS
        if s.format is not formats.NATIVE or s.normalizer is not None or not s.indexed_whole:
            return False
    return ("_spoiled" not in s.__dict__  # and no part of its entry that could not be read (sleeping.spoiled)
            and set(s.__dict__) <= SessionIndex.MADE | set(SessionIndex.KEPT) | set(SessionIndex.ARRAYS)
            and all(set(part.__dict__) <= set(part.KEPT) | set(part.MADE) for part in (s.tree, s.calls))
            and set(s.search.__dict__) <= SearchIndex.HOLDS and set(s.facets.__dict__) <= type(s.facets).HOLDS
            and s.events.slot_types() <= kept_items)


def _chunks(tuning: Tuning, name: str, items: Items) -> Iterator[tuple]:
    """(name, part of the map) sections: section_items items at most, and values weighing section_bytes at most
    together unless one weighs more alone."""
    mapping, encode, weigh = items.mapping, items.encode, items.weigh
    most, most_bytes = tuning.section_items, tuning.section_bytes
    part, weight = {}, 0
    for key in list(mapping):  # its keys, not its items: a million new pairs made in one call held the GIL 100 ms
        value = mapping[key]
        part[key] = value if encode is None else encode(value)
        weight += 0 if weigh is None else weigh(value)
        if len(part) >= most or weight >= most_bytes:
            yield name, part
            part, weight = {}, 0
    if part:
        yield name, part


def _pieces(tuning: Tuning, name: str, items: Items) -> Iterator[tuple]:
    """(name, key -> array) sections of section_bytes of arrays at most: a key's array beyond that is cut across
    sections, in order, a full section each (its part's `restore` appends them)."""
    mapping, encode = items.mapping, items.encode
    most, most_bytes = tuning.section_items, tuning.section_bytes
    part, weight = {}, 0
    for key in list(mapping):  # see _chunks
        positions = mapping[key]
        step = most_bytes // positions.itemsize
        pieces = [positions] if len(positions) <= step else [positions[at:at + step]
                                                             for at in range(0, len(positions), step)]
        for piece in pieces:
            size = piece.itemsize * len(piece)
            if part and (len(part) >= most or weight + size > most_bytes):
                yield name, part
                part, weight = {}, 0
            part[key] = encode(piece)
            weight += size
    if part:
        yield name, part


def _sections_of(tuning: Tuning, part: str, state: Iterator[tuple]) -> Iterator[tuple]:
    """One part's state as sections: its small values together in one named for the part (few sections for a small
    session: each costs a MAC and a decode), its big maps (and those read later, _READ_LATER) cut in sections of
    their own, after it."""
    small, big = {}, []
    owners = _owners()
    for name, value in state:
        if isinstance(value, Items):
            big.append((name, value))
        elif name in _READ_LATER and value:
            big.append((name, Items(value)))
        elif isinstance(value, dict) and len(value) > tuning.section_items and name in owners:
            big.append((name, Items(value)))
        else:
            small[name] = value
    yield part, small
    for name, items in big:
        yield from (_pieces if items.pieces else _chunks)(tuning, name, items)


def sections(s: SessionIndex, tuning: Tuning | None = None, summary: dict | None = None) -> Iterator[tuple]:
    """The session's state as (name, plain value) sections, as small as `tuning` (else its host's) says; `summary`:
    its summary() when the caller took it already. Callers hold the session's lock throughout."""
    tuning = tuning or s.host.tuning
    # What the sessions list shows, and then the normalizer: all a session restored asleep reads (see `asleep`)
    yield "head", {"count": s.count, "format": s.format.name, "summary": s.summary() if summary is None else summary}
    if s.normalizer is not None:  # settled (see cacheable): what it holds
        yield "normalizer", s.normalizer.state()
    # Next the search index: a sleeping session reads it alone when it is searched (see `search_of`)
    yield "search indexed", s.search.indexed
    yield from _encoded(_sections_of(tuning, "search", s.search.state()))
    if s.normalizer is not None:  # the shapes its entries are packed in
        yield "shapes", s.host.shapes.known()
    for part in _PARTS:
        yield from _encoded(_sections_of(tuning, part, _part_of(s, part).state()), _READ_LATER | _CALLS_LATER)
    # Each agent's usage totals, priced: a woken session's tree shows their costs without pricing a response
    yield from _chunks(tuning, "usage", Items(usage.agents_state(s)))
    # ... and the call that created each, where that call was answered, and the calls none answered: it reads no
    # creating message and none of its tool calls either (those stay encoded, _CALLS_LATER)
    yield from _chunks(tuning, "creations", Items(creations(s)))
    yield from _chunks(tuning, "answers", Items(answers(s)))
    if failed.finished(s):  # (as its page would: those of one still running are found when it has ended)
        found = failed.kept_unanswered(s)
        for start in range(0, max(len(found), 1), tuning.section_items):  # one at least: none is an answer
            yield "unanswered", found[start:start + tuning.section_items]
    events = s.events
    for start in range(0, len(events), tuning.section_events):  # in order: each part extends the list (restore)
        part = events.part(start, start + tuning.section_events)
        yield "events", len(part[0])  # then its slots, decoded when first read (EventList.extend_later)
        yield Raw(marshal.dumps(part))
    yield "end", s.count


def _encoded(sections: Iterator[tuple], later: frozenset = _LATER) -> Iterator[tuple | Raw]:
    """The sections, those taken back later (`later`) as their name, then marshal's bytes of their value (Raw)."""
    for name, value in sections:
        if name in later:
            yield name, None
            yield Raw(marshal.dumps(value))
        else:
            yield name, value


def _raw(kept: Iterator) -> bytes | Later:
    """The Raw section that comes next (its bytes, or a Later that reads them); a ValueError when the entry holds
    none there."""
    value = next(kept)
    if type(value) is not bytes and type(value) is not Later:
        raise ValueError("not a raw section")
    return value


def _read(encoded: bytes | Later, spoiled) -> bytes | None:
    """A Raw section's bytes, read now if they were left in the entry (a Later); None when they cannot be, and then
    `spoiled()` is told: its session is read again from its files, as when its entry is gone at its wake."""
    if type(encoded) is not Later:
        return encoded
    try:
        return encoded.read()
    except CorruptEntry as error:
        log.info("cache entry section not read: %s", error)
        if spoiled is not None:
            spoiled()
        return None


def _decoded(kept: list[tuple], spoiled) -> list[tuple]:
    """(name, value) of each Raw section kept encoded (`_read`), decoded; none when one of them cannot be read (its
    session is read again: `spoiled`), so a part is taken back whole or made empty."""
    found = [(name, _read(encoded, spoiled)) for name, encoded in kept]
    if any(encoded is None for _, encoded in found):
        return []
    return [(name, marshal.loads(encoded)) for name, encoded in found]


def _calls_later(kept: list[tuple], s: SessionIndex, spoiled=None) -> dict:
    """A woken session's tool calls from their sections kept encoded, as the session's attributes bound to them
    (ToolCalls.bound)."""
    calls = ToolCalls(s.problems)
    for name, value in _decoded(kept, spoiled):
        _restore_section(s, _owners(), name, value, calls)
    return calls.bound()


def _search_later(kept: list[tuple], s: SessionIndex, spoiled=None) -> SearchIndex:
    """A session's search index from its sections kept encoded; an empty one (built again) when one of them cannot
    be read."""
    made = SearchIndex(s)
    for name, value in _decoded(kept, spoiled):
        if name == "search":
            for key, item in value.items():
                made.restore(key, item)
        else:  # the postings, in sections of their own
            made.restore(name, value)
    return made


def _filled(kept: list[tuple], into: dict, s: SessionIndex, spoiled=None) -> dict:
    """A map read later (_READ_LATER) from its sections kept encoded, filled in place: `into`, the session's own
    (its tree reads it through the session: AgentTree.belong_to)."""
    for _, value in _decoded(kept, spoiled):
        into.update(value)
    return into


def _restore_section(s: SessionIndex, owners: dict, name: str, value, calls: ToolCalls | None = None) -> None:
    """Take one section back into `s` (its tool calls' into `calls`, when given); a ValueError for a section no part
    keeps."""
    owner = name if name in _PARTS else owners.get(name)
    if owner is None:
        raise ValueError(f"no part of a session keeps {name!r}")
    part = calls if owner == "calls" and calls is not None else _part_of(s, owner)
    if name in _PARTS:
        for key, kept in value.items():
            part.restore(key, kept)
    else:  # a big map of a part, in sections
        part.restore(name, value)


def asleep(kept: Iterator[tuple], fmt: formats.Format) -> tuple[dict, object] | None:
    """(summary, settled normalizer) from an entry's first sections, for a session of several files restored asleep
    (see sleeping): the rest of the entry is read when it wakes (`restore`). None when they are not of this layout
    and format."""
    name, head = next(kept)
    if name != "head" or head.get("format") != fmt.name:
        return None
    name, state = next(kept)
    return asleep_from(fmt, head.get("summary"), state if name == "normalizer" else None, head["count"])


_SUMMARY_KEYS = frozenset(sleeping.LISTED + sleeping.SUMMARY)  # what a kept summary holds at least


def asleep_from(fmt: formats.Format, summary, state, count: int | None = None) -> tuple[dict, object] | None:
    """(summary, settled normalizer) from what was kept of a session asleep (an entry's head, or the folder's entry:
    folder_cache); None unless the summary holds all the list reads (for `count` events, when the entry says how
    many apart from it) and the normalizer is one."""
    normalizer = fmt.normalizer.settled_from(state) if fmt.reads_records and state is not None else None
    if (normalizer is None or not isinstance(summary, dict)
            or not summary.keys() >= _SUMMARY_KEYS
            or (count is not None and summary["count"] != count)):
        return None
    return summary, normalizer


def search_of(kept: Iterator[tuple], session: SessionIndex) -> SearchIndex | None:
    """The search index of a sleeping session alone, from its entry (read up to it; sleeping): a search of
    thousands of sessions reads their postings, not their events. None when the entry is not of this layout."""
    name, head = next(kept)
    if name != "head" or head.get("count") != session.count:
        return None
    sections = []
    for name, value in kept:
        if name in ("normalizer", "search indexed"):
            continue
        elif name in _LATER:
            sections.append((name, _raw(kept)))
        else:  # past the search index
            search = _search_later(sections, session)
            return search if search.indexed == session.count else None
    return None


def restore(kept: Iterator[tuple], session_id: str, path: str, relpath: str,
            fmt: formats.Format = formats.NATIVE, host: Host | None = None, spoiled=None) -> SessionIndex | None:
    """The session the sections describe, under its identity now, of format `fmt`; None when they are not a whole
    session of this layout and format. A cache_store.CorruptEntry from `kept` propagates: the caller reads the
    file instead. `spoiled()`: told when a section left in the entry (a Later) cannot be read when first needed."""
    s = SessionIndex(session_id, path, relpath, fmt, "", host=host)
    owners, later, indexed = _owners(), [], None
    stored = fmt.normalizer.stored_type if fmt.reads_records else None
    made = None if stored is None else functools.partial(stored.from_state, shapes=s.host.shapes)
    head, agents_usage, created, read_later, calls, answered, unanswered = None, {}, {}, {}, [], {}, None
    for name, value in kept:
        if name == "head":
            head = value
            if value.get("format") != fmt.name:
                return None
        elif head is None:
            return None
        elif name == "normalizer":
            s.normalizer = fmt.normalizer.settled_from(value) if fmt.reads_records else None
            if s.normalizer is None:
                return None
        elif name == "shapes":
            if not s.host.shapes.learn(value):
                return None
        elif name == "events":  # in parts, in order: its count, then its slots' bytes
            count, encoded = value, _raw(kept)
            if type(count) is not int:
                return None
            if s.normalizer is None:  # a native file's slots are where its lines are: cheap to decode now
                encoded = _read(encoded, None)
                if encoded is None:
                    return None
                s.events.extend(marshal.loads(encoded))
            else:  # a format's entries, each made again from its state: when first read (read then: a Later)
                s.events.extend_later(encoded if type(encoded) is not Later else functools.partial(
                    _read, encoded, spoiled), count, made, functools.partial(s.host.gc.batch, kept=True))
        elif name == "usage":  # its agents' totals, taken once their agents are
            agents_usage.update(value)
        elif name == "creations":  # likewise
            created.update(value)
        elif name == "answers":
            answered.update(value)
        elif name == "unanswered":
            unanswered = [*(unanswered or ()), *map(tuple, value)]
        elif name == "search indexed":
            indexed = value
        elif name in _LATER:
            later.append((name, _raw(kept)))
        elif name in _READ_LATER:
            read_later.setdefault(name, []).append((name, _raw(kept)))
        elif name in _CALLS_LATER:
            calls.append((name, _raw(kept)))
        elif name == "end":
            whole = (value == s.count == head["count"] and (s.normalizer is None) == (not fmt.reads_records)
                     and type(indexed) is int)
            if whole:
                usage.take_back_agents(s, agents_usage)
                take_back_creations(s, created, answered)
                if unanswered is not None:
                    failed.take_back_unanswered(s, unanswered)
                sleeping.later_together(s, ToolCalls.BOUND, functools.partial(_calls_later, calls, spoiled=spoiled))
                sleeping.later(s, "search", functools.partial(_search_later, later, spoiled=spoiled), indexed)
                for name, encoded in read_later.items():
                    sleeping.later(s, name, functools.partial(_filled, encoded, getattr(s, name), spoiled=spoiled), 0)
            return s if whole else None
        else:
            try:
                _restore_section(s, owners, name, value)
            except ValueError:
                return None
    return None  # no end: not a whole entry
