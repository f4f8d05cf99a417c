"""A SessionIndex as plain data and back: what the persistent cache keeps of a session (see session_cache).

Everything the index derived from its file becomes sections of plain data, each small enough to encode without
holding up the server. A session with an attribute this module does not know is not kept (`cacheable`), rather
than losing that attribute silently.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator

from viewer import formats
from viewer.core.host import Host
from viewer.core.model import AgentNode
from viewer.core.tuning import Tuning
from viewer.core.problems import Problem
from viewer.formats import packed
from viewer.index import sleeping
from viewer.index.session_index import SessionIndex
from viewer.search.index import SearchIndex
from viewer.search.packed import PackedPostings

LAYOUT = 6  # bump when the sections change: older entries then read as foreign (cache_store's version)
# A section is encoded by one marshal.dumps, which holds the GIL throughout: every request waits for it (a 1M-event
# session's postings in one section held the server for 57-170 ms). So none is big: at most Tuning.section_items
# items of a map, section_bytes of arrays, section_events events' slots; a few milliseconds each.

# The session's identity and its per-process objects: made anew, never kept.
_MADE_ANEW = {"id", "path", "relpath", "name", "host", "lock", "serial", "seen_at", "format", "_adds_keys", "_parser",
              "usage_totals", "dialog_orders", "normalizer", "search", "facets", "events"}
_PLAIN = ("epoch", "updated_at", "project", "format_reason", "internal", "title", "format_summary", "by_id",
          "references", "call_positions", "result_positions", "caused", "spawned", "_awaiting_cause", "tool_names")
_ARRAYS = ("line_numbers", "usage_positions", "growth_positions", "grown_positions")
_KNOWN = _MADE_ANEW | set(_PLAIN) | set(_ARRAYS) | {"agents", "members", "tree_changes", "problems", "_dangling"}
_KEPT_ITEMS = {type(None), bytes, dict}  # event list slots kept: where a line is, its bytes, or the event
_SEARCH = {"vocabulary", "_postings", "indexed", "_session", "_class_of", "_classes_with", "_merged"}
_FACETS = {"indexed", "_session", "tools", "modified", "received", "deliveries", "others", "pieces", "originals",
           "_awaited"}


def cacheable(s: SessionIndex) -> bool:
    """Whether every part of this session can be kept: a native file read whole into its index (no normalizer,
    no several files) with its search index and facets complete, or a session of several files whose normalizer
    settled (its search index and facets as far as they are built: it is kept as soon as it is read, to sleep, and
    again once they are complete; see sleeping), and no attribute this module does not know."""
    if s.members:
        stored = s.format.normalizer.stored_type if s.format.reads_records else None
        kept_items = {dict, stored}
        if stored is None or s.normalizer is None or not s.normalizer.settled:
            return False
    else:
        kept_items = _KEPT_ITEMS
        if s.format is not formats.NATIVE or s.normalizer is not None or not s.indexed_whole:
            return False
    return (set(s.__dict__) <= _KNOWN and set(s.search.__dict__) <= _SEARCH
            and set(s.facets.__dict__) <= _FACETS
            and set(map(type, s.events._items)) <= kept_items)


def _arr(a: array) -> tuple[str, bytes]:
    return a.typecode, a.tobytes()


def _unarr(kept: tuple[str, bytes]) -> array:
    a = array(kept[0])
    a.frombytes(kept[1])
    return a


def _problem(p: Problem) -> tuple:
    return p.kind, p.line, p.detail, p.message_id, p.of_line, p.path


def _agent(a: AgentNode) -> tuple:
    return (a.agent_id, a.ordinal, a.first_position, a.name, a.language_model, a.created_position, a.cause,
            a.parent_id, _arr(a.entries), {k: _arr(v) for k, v in a.by_kind.items()}, _arr(a.dialog_entries),
            _arr(a.usage_entries), a.children, a.flags, _arr(a.dialog_originals))


def _unagent(t: tuple) -> AgentNode:
    (agent_id, ordinal, first, name, model, created, cause, parent, entries, by_kind, dialog, usage, children,
     flags, originals) = t
    return AgentNode(agent_id, ordinal, first, name, model, created, cause, parent, _unarr(entries),
                     {k: _unarr(v) for k, v in by_kind.items()}, _unarr(dialog), _unarr(usage), list(children),
                     list(flags), dialog_originals=_unarr(originals))


def _chunks(tuning: Tuning, name: str, mapping: dict, encode=None, weigh=None) -> Iterator[tuple]:
    """(name, part of `mapping`) sections: section_items items at most, and values weighing section_bytes at most
    together (`weigh(value)`: its bytes) unless one weighs more alone."""
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


def _posting_chunks(tuning: Tuning, postings: dict[str, array]) -> Iterator[tuple]:
    """("postings", token -> positions) sections of section_bytes of positions at most: a token's positions beyond
    that are cut across sections, in order, a full section each (restoring appends them: _restore_postings)."""
    most, most_bytes = tuning.section_items, tuning.section_bytes
    part, weight = {}, 0
    for token in list(postings):  # see _chunks
        positions = postings[token]
        step = most_bytes // positions.itemsize
        pieces = [positions] if len(positions) <= step else [positions[at:at + step]
                                                             for at in range(0, len(positions), step)]
        for piece in pieces:
            size = piece.itemsize * len(piece)
            if part and (len(part) >= most or weight + size > most_bytes):
                yield "postings", part
                part, weight = {}, 0
            part[token] = _arr(piece)
            weight += size
    if part:
        yield "postings", part


def _agent_bytes(a: AgentNode) -> int:
    return (len(a.entries) + len(a.dialog_entries)) * 16 + len(a.usage_entries) * 8  # its arrays, about


def sections(s: SessionIndex, tuning: Tuning | None = None) -> Iterator[tuple]:
    """The session's state as (name, plain value) sections, as small as `tuning` (else its host's) says. Callers
    hold the session's lock throughout."""
    tuning = tuning or s.host.tuning
    # What the sessions list shows, and then the normalizer: all a session restored asleep reads (see `asleep`)
    yield "head", {"layout": LAYOUT, "count": s.count, "format": s.format.name, "summary": s.summary()}
    if s.normalizer is not None:  # settled (see cacheable): what it holds
        yield "normalizer", s.normalizer.state()
    # Next the search index: a sleeping session reads it alone when it is searched (see `search_of`)
    search = s.search
    yield "search", {"indexed": search.indexed, "classes": {k: _arr(v) for k, v in search._class_of.items()}}
    if search.packed:
        yield "packed_postings", search._postings.state()
    else:
        yield from _posting_chunks(tuning, search._postings)
    if s.normalizer is not None:  # the shapes its entries are packed in
        yield "shapes", packed.shapes()
    # Few sections for a small session (each costs a MAC and a decode: a folder of thousands restores in one go)
    plain = {}
    for name in _PLAIN:
        value = getattr(s, name)
        if isinstance(value, dict) and len(value) > tuning.section_items:
            yield from _chunks(tuning, name, value)
        else:
            plain[name] = value
    yield "plain", plain
    yield "arrays", {name: _arr(getattr(s, name)) for name in _ARRAYS}
    yield "tree", (s.tree_changes, [_problem(p) for p in s.problems],
                   {k: [_problem(p) for p in v] for k, v in s._dangling.items()})
    yield from _chunks(tuning, "agents", s.agents, _agent, _agent_bytes)
    events = s.events
    for start in range(0, len(events), tuning.section_events):  # in order: each part extends the list (restore)
        stop = start + tuning.section_events
        items = events._items[start:stop]
        if s.normalizer is not None:  # a stored entry as its plain tuple (a dict stays)
            items = [item if type(item) is dict else item.state() for item in items]
        yield "events", (items, _arr(events._offsets[start:stop]), _arr(events._lengths[start:stop]))
    facets = s.facets
    yield "facets", {"indexed": facets.indexed, "received": facets.received, "deliveries": facets.deliveries,
                     "awaited": facets._awaited,
                     "tools": {agent: {k: _arr(v) for k, v in tools.items()} for agent, tools in facets.tools.items()},
                     **{name: {k: _arr(v) for k, v in getattr(facets, name).items()}
                        for name in ("modified", "others", "pieces", "originals")}}
    yield "end", s.count


def asleep(kept: Iterator[tuple], fmt: formats.Format) -> tuple[dict, object] | None:
    """(summary, settled normalizer) from an entry's first sections, for a session of several files restored asleep
    (see sleeping): the rest of the entry is read when it wakes (`restore`). None when they are not of this layout
    and format."""
    name, head = next(kept)
    if name != "head" or head.get("layout") != LAYOUT or head.get("format") != fmt.name:
        return None
    name, state = next(kept)
    return asleep_from(fmt, head.get("summary"), state if name == "normalizer" else None, head["count"])


def asleep_from(fmt: formats.Format, summary, state, count: int | None = None) -> tuple[dict, object] | None:
    """(summary, settled normalizer) from what was kept of a session asleep (an entry's head, or the folder's entry:
    folder_cache); None unless the summary holds all the list reads (for `count` events, when the entry says how
    many apart from it) and the normalizer is one."""
    normalizer = fmt.normalizer.settled_from(state) if fmt.reads_records and state is not None else None
    if (normalizer is None or not isinstance(summary, dict)
            or not set(sleeping.LISTED + sleeping.SUMMARY) <= set(summary)
            or (count is not None and summary["count"] != count)):
        return None
    return summary, normalizer


def search_of(kept: Iterator[tuple], session: SessionIndex) -> SearchIndex | None:
    """The search index of a sleeping session alone, from its entry (read up to it; sleeping): a search of
    thousands of sessions reads their postings, not their events. None when the entry is not of this layout."""
    search = SearchIndex(session)
    name, head = next(kept)
    if name != "head" or head.get("layout") != LAYOUT or head.get("count") != session.count:
        return None
    for name, value in kept:
        if name == "normalizer":
            continue
        elif name == "search":
            _restore_classes(search, value)
        elif name == "packed_postings":
            search._postings = PackedPostings.from_state(value)
        elif name == "postings":
            _restore_postings(search, value)
        else:  # past the search index
            return search if search.indexed == session.count else None
    return None


def restore(kept: Iterator[tuple], session_id: str, path: str, relpath: str,
            fmt: formats.Format = formats.NATIVE, host: Host | None = None) -> SessionIndex | None:
    """The session the sections describe, under its identity now, of format `fmt`; None when they are not a whole
    session of this layout and format. A cache_store.CorruptEntry from `kept` propagates: the caller reads the
    file instead."""
    s = SessionIndex(session_id, path, relpath, fmt, "", host=host)
    head = None
    for name, value in kept:
        if name == "head":
            head = value
            if value.get("layout") != LAYOUT or value.get("format") != fmt.name:
                return None
        elif head is None:
            return None
        elif name == "normalizer":
            s.normalizer = fmt.normalizer.settled_from(value) if fmt.reads_records else None
            if s.normalizer is None:
                return None
        elif name == "shapes":
            if not packed.learn(value):
                return None
        elif name in _PLAIN:  # a big map comes in chunks: each adds to it
            getattr(s, name).update(value)
        elif name == "plain":
            for key, kept_value in value.items():
                if key not in _PLAIN:
                    return None
                if isinstance(getattr(s, key), dict):
                    getattr(s, key).update(kept_value)
                else:
                    setattr(s, key, kept_value)
        elif name == "arrays":
            if set(value) != set(_ARRAYS):
                return None
            for key, kept_value in value.items():
                setattr(s, key, _unarr(kept_value))
        elif name == "tree":
            changes, problems, dangling = value
            s.tree_changes = [tuple(change) for change in changes]
            s.problems = [Problem(*p) for p in problems]
            s._dangling = {k: [Problem(*p) for p in v] for k, v in dangling.items()}
        elif name == "agents":
            s.agents.update((agent_id, _unagent(t)) for agent_id, t in value.items())
        elif name == "events":  # in parts, in order
            items, offsets, lengths = value
            if s.normalizer is not None:
                stored = fmt.normalizer.stored_type
                items = [item if type(item) is dict else stored.from_state(item) for item in items]
            events = s.events  # made empty with the index
            events._items += items
            events._offsets += _unarr(offsets)
            events._lengths += _unarr(lengths)
        elif name == "search":
            _restore_classes(s.search, value)
        elif name == "packed_postings":
            s.search._postings = PackedPostings.from_state(value)
        elif name == "postings":
            _restore_postings(s.search, value)
        elif name == "facets":
            _restore_facets(s.facets, value)
        elif name == "end":
            whole = value == s.count == head["count"] and (s.normalizer is None) == (not fmt.reads_records)
            return s if whole else None
        else:
            return None
    return None  # no end: not a whole entry


def _restore_classes(search, value: dict) -> None:
    search.indexed = value["indexed"]
    for keys, kept in value["classes"].items():
        positions = search._class_of[keys] = _unarr(kept)
        for key in keys:
            search._classes_with.setdefault(key, []).append(positions)


def _restore_postings(search: SearchIndex, value: dict) -> None:
    postings = search._postings
    for token, kept_positions in value.items():
        postings[token].frombytes(kept_positions[1])  # files the word in the vocabulary too


def _restore_facets(facets, value: dict) -> None:
    facets.indexed, facets.received, facets.deliveries = value["indexed"], value["received"], value["deliveries"]
    facets._awaited = value["awaited"]
    facets.tools = {agent: {k: _unarr(v) for k, v in tools.items()} for agent, tools in value["tools"].items()}
    for name in ("modified", "others", "pieces", "originals"):
        setattr(facets, name, {k: _unarr(v) for k, v in value[name].items()})
