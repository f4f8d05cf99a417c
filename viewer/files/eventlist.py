"""A session's events in file order: a native line is kept as where it is in its file, and read when asked for.

A parsed event costs about twice its line, and the index keeps what it needs of each event at ingest, so a slot
holds the line's offset (read again with os.pread and parsed when asked for), its bytes (when it cannot be read
again), an object that can `load()` it from its file (a format's entry), or the event itself (when it is not a
line as written). A small cache of the events read last serves pages.
"""

from __future__ import annotations

import contextlib
import marshal
from array import array
from collections import OrderedDict
from collections.abc import Iterator

import orjson

from viewer.core.kept import array_from, array_state
from viewer.core.tuning import Tuning

from .file_source import FileSource

_PLAIN_SLOTS = (type(None), bytes, dict)  # slots kept as they are: where a line is, its bytes, or the event

CACHE_SIZE = 4096  # events (and about Tuning.event_cache_bytes of their lines: a few big events do not fill memory)
DEFAULT = Tuning()


def changed_on_disk(position: int, detail: str) -> dict:
    """What is shown for an event whose line is no longer where it was read (the file changed under the index)."""
    return {"message_id": f"changed-on-disk-{position}", "event_type": "changed_on_disk", "agent_id": "?",
            "content": f"this line changed on disk after it was read ({detail}); the session is being read again"}


def parse_lines(read, offsets: array, lengths: array, first_position: int,
                walk_read: int = DEFAULT.walk_read) -> list[dict]:
    """The events of the lines at `offsets` (ascending, `lengths` bytes each), the first at `first_position`.

    Lines that follow one another are read together by `read(offset, length)`, at most `walk_read` bytes at once:
    a walk pays one system call per run of lines, not one per event. A line no longer as it was read is its
    `changed_on_disk` placeholder. The one way a kept line becomes an event again: EventList and the search
    worker (another process, reading the same file) both read through it."""
    events: list[dict] = []
    p, count = 0, len(offsets)
    while p < count:
        first, end, last = offsets[p], offsets[p] + lengths[p], p + 1
        while last < count and offsets[last] >= end and offsets[last] + lengths[last] - first <= walk_read:
            end, last = offsets[last] + lengths[last], last + 1
        try:
            data = memoryview(read(first, end - first))
        except OSError as exc:
            events += [changed_on_disk(first_position + q, str(exc)) for q in range(p, last)]
        else:
            for q in range(p, last):
                at = offsets[q] - first
                events.append(_parsed(data[at:at + lengths[q]], lengths[q], first_position + q))
        p = last
    return events


def _parsed(line, length: int, position: int) -> dict:
    if len(line) != length:
        return changed_on_disk(position, "the file is shorter")
    try:
        event = orjson.loads(line)
    except orjson.JSONDecodeError:
        return changed_on_disk(position, "not the JSON read before")
    return event if type(event) is dict else changed_on_disk(position, "not the object read before")


class EventList:
    __slots__ = ("_cache", "_cached_bytes", "_items", "_later", "_lengths", "_offsets", "_source", "_tuning")

    def __init__(self, tuning: Tuning = DEFAULT) -> None:
        self._tuning = tuning  # event_cache_bytes, walk_read
        self._items: list = []
        self._offsets = array("q")  # per position: where its line starts in `_source` (slots that are None)
        self._lengths = array("I")
        self._source: FileSource | None = None
        self._cache: OrderedDict[int, dict] = OrderedDict()  # parsed events, least recently read first
        self._cached_bytes = 0
        self._later: tuple | None = None  # (parts to decode when first read, the count, a pause): extend_later

    def append(self, event: dict) -> None:
        self._items.append(event)
        self._offsets.append(0)
        self._lengths.append(0)

    def keep_at(self, position: int, source: FileSource, offset: int, length: int) -> None:
        """The event at `position` is exactly the `length` bytes at `offset` of `source`, parsed: keep only where.

        It was appended as a dict (ingest keeps where each line is as it goes), and a dict is never cached: there
        is no cached copy to drop. In a one-off read (Tuning.one_off) the dict stays, and where its line is is noted."""
        if self._tuning.one_off:
            self.note_line(position, source, offset, length)
            return
        if source is not self._source:
            if self._source is not None:  # one file per list; a second one (never expected) keeps its bytes
                self.keep_raw(position, source.read(offset, length))
                return
            self._source = source
        self._items[position] = None
        self._offsets[position] = offset
        self._lengths[position] = length

    def note_line(self, position: int, source: FileSource, offset: int, length: int) -> None:
        """The event at `position`, kept as a dict, was read from the `length` bytes at `offset` of `source`:
        noted so its line can be shown as written (`line`)."""
        if self._source is None:
            self._source = source
        if source is self._source:
            self._offsets[position] = offset
            self._lengths[position] = length

    def line(self, position: int) -> bytes | None:
        """The bytes of the line the event at `position` was read from, when known and still there."""
        item = self._items[position]
        if type(item) is bytes:
            return item
        length = self._lengths[position]
        if not (item is None or type(item) is dict) or not length:
            return None
        try:
            data = self._source.read(self._offsets[position], length)
        except (OSError, AttributeError):
            return None
        return data if len(data) == length else None

    def keep_raw(self, position: int, item, loaded: dict | None = None) -> None:
        """The event at `position` is `item` parsed (bytes) or loaded (an object with `load()`): keep that, not the dict.
        `loaded`: what `item` loads, in hand (the dict it was made of): cached as if read, so that a walk right after
        the read (a new session's search index, usage and facets) reads no line again."""
        self._uncache(position)
        self._items[position] = item
        if loaded is not None:
            self._cache_read(position, item, loaded)

    def materialize(self, position: int) -> dict:
        """The event at `position` as a dict kept in place: for the rare change made to a logged event."""
        event = self._get(position)
        self._uncache(position)
        self._items[position] = event
        return event

    def part(self, start: int, stop: int) -> tuple[list, tuple[str, bytes], tuple[str, bytes]]:
        """What the persistent cache keeps of the events from `start` to `stop`, as plain data: each slot (a stored
        entry as its `state()`) and where its line is. `extend` takes it back."""
        items = [item if type(item) in _PLAIN_SLOTS else item.state() for item in self._items[start:stop]]
        return items, array_state(self._offsets[start:stop]), array_state(self._lengths[start:stop])

    def extend(self, part: tuple, stored=None) -> None:
        """Append a `part` (`stored`: what makes again the stored entries it holds from their state)."""
        items, offsets, lengths = part
        if stored is not None:
            items = [item if type(item) in _PLAIN_SLOTS else stored(item) for item in items]
        self._items += items
        self._offsets += array_from(offsets)
        self._lengths += array_from(lengths)

    def extend_later(self, encoded, count: int, stored=None, paused=None) -> None:
        """`extend` with the part marshal encoded in `encoded` (of `count` slots), decoded only when a slot is first
        read: a woken session's first page reads none (its length aside), and its events are half of its entry.
        `encoded`: bytes, or what reads them then (None when they cannot be read: its slots are `changed_on_disk`).
        `paused`: a context that pauses the cyclic collector while they are decoded (GcPause.batch)."""
        if self._later is None and self._items:  # only a list made empty is filled later
            self._extend_encoded(encoded, count, stored)
            return
        if self._later is None:
            self._later = ([], 0, paused)
            del self._items, self._offsets, self._lengths  # read again through __getattr__, which decodes them
        parts, known, _ = self._later
        parts.append((encoded, count, stored))
        self._later = (parts, known + count, paused)

    def _extend_encoded(self, encoded, count: int, stored) -> None:
        """`extend` with a part given to `extend_later`."""
        encoded = encoded if isinstance(encoded, bytes) else encoded()
        if encoded is None:  # its bytes are gone: what stands for lines no longer as they were read
            start = len(self._items)
            self._items += [changed_on_disk(start + p, "its kept copy could not be read") for p in range(count)]
            self._offsets += array("q", bytes(8 * count))
            self._lengths += array("I", bytes(4 * count))
            return
        self.extend(marshal.loads(encoded), stored)

    def __getattr__(self, name: str):
        # Called only for a slot not set: the parts extend_later left encoded, decoded now (once: the slots are set
        # together at the end, so a reader never sees a part of them)
        later = object.__getattribute__(self, "_later") if name in ("_items", "_offsets", "_lengths") else None
        if later is None:
            raise AttributeError(name)
        parts, count, paused = later
        decoded = EventList(self._tuning)
        with paused() if paused is not None else contextlib.nullcontext({}) as made:
            for encoded, count_of, stored in parts:
                decoded._extend_encoded(encoded, count_of, stored)
            made["added"] = count
        self._offsets, self._lengths, self._items = decoded._offsets, decoded._lengths, decoded._items
        self._later = None
        return object.__getattribute__(self, name)

    def read_from(self, source: FileSource) -> None:
        """The file the slots that are None are read from (a list restored from the cache)."""
        self._source = source

    def slot_types(self) -> set[type]:
        """The kinds of slot it holds (what the cache may keep of it)."""
        return set(map(type, self._items))

    def prefix(self, stop: int) -> EventList:
        """A list of the first `stop` events sharing their storage (not copies of their bytes or dicts)."""
        shared = EventList(self._tuning)
        shared._items = self._items[:stop]
        shared._offsets = self._offsets[:stop]
        shared._lengths = self._lengths[:stop]
        shared._source = self._source
        return shared

    def share(self, other: EventList, start: int = 0) -> None:
        """Store this list's events from `start` on as `other` stores them, except the dicts: an as-of replay
        keeps its own."""
        for position in range(start, min(len(self._items), len(other._items))):
            item = other._items[position]
            if type(item) is not dict:
                self._items[position] = item
        self._offsets[: len(other._offsets)] = other._offsets[: len(self._offsets)]
        self._lengths[: len(other._lengths)] = other._lengths[: len(self._lengths)]
        self._source = other._source
        self.forget_cached()

    def stored(self, stop: int) -> list:
        """What the first `stop` slots hold (None for a line read from the file): for tests and memory profiles."""
        return self._items[:stop]

    def small(self, position: int) -> dict:
        """The event without reading its big fields when its loader keeps the small ones (`skeleton`: its
        content, thinking, tool calls and raw records left out); else the event. For sums over many events."""
        cached = self._cache.get(position)
        if cached is not None:
            return cached
        skeleton = getattr(self._items[position], "skeleton", None)
        return skeleton if skeleton is not None else self._get(position)

    def kept_as(self, position: int) -> str:
        """How the event at `position` is stored: "file", "bytes", "dict" or "loader"."""
        item = self._items[position]
        if item is None:
            return "file"
        return {bytes: "bytes", dict: "dict"}.get(type(item), "loader")

    def load(self, position: int) -> dict:
        """The event at `position`, read and parsed again if it is not a dict (not cached: for walks over all)."""
        item = self._items[position]
        if type(item) is dict:
            return item
        if item is None:
            return parse_lines(self._source.read, self._offsets[position:position + 1],
                               self._lengths[position:position + 1], position)[0]
        if type(item) is bytes:
            return _parsed(item, len(item), position)
        return item.load()

    def walk(self, start: int, stop: int) -> list[dict]:
        """The events start .. stop-1, as `load` reads them (without caching them): for walks over many (the search
        index, the facets), reading runs of lines together (parse_lines); those cached are not read again."""
        items, cache = self._items, self._cache
        if set(map(type, items[start:stop])) == {dict}:  # all kept parsed (Tuning.one_off): nothing to read
            return items[start:stop]
        events: list[dict] = []
        position = start
        while position < stop:
            item = items[position]
            cached = cache.get(position) if cache else None
            if cached is not None:  # an event just read, still in hand (keep_raw), or read by a page
                events.append(cached)
                position += 1
                continue
            load_many = getattr(type(item), "load_many", None)
            if load_many is not None:  # a run of a format's loaders: each file opened once for the run
                last = position + 1
                while last < stop and type(items[last]) is type(item) and last not in cache:
                    last += 1
                events += load_many(items[position:last])
                position = last
                continue
            if item is not None:
                events.append(self.load(position))
                position += 1
                continue
            last = position + 1
            while last < stop and items[last] is None:
                last += 1
            events += parse_lines(self._source.read, self._offsets[position:last], self._lengths[position:last], position,
                                  self._tuning.walk_read)
            position = last
        return events

    def read_ahead(self, positions) -> None:
        """Read the events at `positions` into the cache together (a format's loaders opening each file once for
        the events of it, not once each): a page about to read many scattered ones (every sub-agent's creating
        call) reads them in one pass. As many as half the cache holds: none is dropped before it is read."""
        items, cache = self._items, self._cache
        wanted, weight, budget = [], 0, self._tuning.event_cache_bytes // 2
        for p in positions:
            if p not in cache and getattr(type(items[p]), "load_many", None):
                weight += self._size(p, items[p])
                if weight > budget or len(wanted) >= CACHE_SIZE // 2:
                    break
                wanted.append(p)
        wanted.sort(key=lambda p: (type(items[p]).__name__, getattr(items[p], "path", ""), p))
        at = 0
        while at < len(wanted):  # a run of one loader type
            kind, end = type(items[wanted[at]]), at + 1
            while end < len(wanted) and type(items[wanted[end]]) is kind:
                end += 1
            run = wanted[at:end]
            for position, event in zip(run, kind.load_many([items[p] for p in run])):
                self._cache_read(position, items[position], event)
            at = end

    def file_spans(self, start: int, stop: int) -> tuple[FileSource, array, array] | None:
        """(source, offsets, lengths) of the events start .. stop-1 when each is exactly its line in the one file
        (what another process may read and parse for itself); else None."""
        if self._source is None or self._items[start:stop].count(None) != stop - start:
            return None
        return self._source, self._offsets[start:stop], self._lengths[start:stop]

    def _get(self, position: int) -> dict:
        item = self._items[position]
        if type(item) is dict:
            return item
        cache = self._cache
        event = cache.get(position)
        if event is not None:
            cache.move_to_end(position)
            return event
        return self._cache_read(position, item, self.load(position))

    def _cache_read(self, position: int, item, event: dict) -> dict:
        cache = self._cache
        cache[position] = event
        self._cached_bytes += self._size(position, item)
        while len(cache) > CACHE_SIZE or (self._cached_bytes > self._tuning.event_cache_bytes and len(cache) > 1):
            self._uncache(next(iter(cache)))  # the least recently read
        return event

    def _uncache(self, position: int) -> None:
        if self._cache.pop(position, None) is not None:
            self._cached_bytes -= self._size(position, self._items[position])

    def _size(self, position: int, item) -> int:
        if item is None:
            return self._lengths[position]
        return len(item) if type(item) is bytes else getattr(item, "size", 0)

    def forget_cached(self) -> None:
        """Drop the parsed events kept for pages (a walk over every event should not leave them all here)."""
        self._cache.clear()
        self._cached_bytes = 0

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._get(p) for p in range(*index.indices(len(self._items)))]
        if index < 0:
            index += len(self._items)
        return self._get(index)

    def __len__(self) -> int:
        later = self._later  # its length is known without decoding its parts
        return len(self._items) if later is None else later[1]

    def __bool__(self) -> bool:
        return len(self) > 0

    def __iter__(self) -> Iterator[dict]:
        for position in range(len(self._items)):  # a walk over all: read without filling the cache
            yield self.load(position)
