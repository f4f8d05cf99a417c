"""A session's events in file order, each native line kept as its raw bytes and parsed when read.

A parsed event is a dict of several string objects: about 650 bytes for a 326-byte line. The
index keeps what it needs of each event at ingest (positions, ids, links), so the dict itself is
only needed when something reads the event: a page, a query, the search index catching up.
Reading parses the line again (orjson, about 2.5 µs); a small cache spares a page that reads the
same few hundred events several times. Events that are not a line as written (normalized formats,
legacy lines, lines with bytes that are not UTF-8) are kept as dicts.
"""

from __future__ import annotations

from typing import Iterator

import orjson

CACHE_SIZE = 4096


class EventList:
    __slots__ = ("_items", "_cache")

    def __init__(self, items=None) -> None:
        self._items: list = list(items) if items is not None else []  # dict, or bytes parsed on access
        self._cache: dict[int, dict] = {}

    def append(self, event: dict) -> None:
        self._items.append(event)

    def keep_raw(self, position: int, data: bytes) -> None:
        """The event at `position` is exactly `data` parsed: keep the bytes, drop the dict."""
        self._items[position] = data
        self._cache.pop(position, None)

    def materialize(self, position: int) -> dict:
        """The event at `position` as a dict kept in place: for the rare change made to a logged event."""
        event = self._get(position)
        self._items[position] = event
        self._cache.pop(position, None)
        return event

    def raw(self, stop: int) -> list:
        """The stored items of the first `stop` events (bytes or dicts), for a copy that shares them."""
        return self._items[:stop]

    def _get(self, position: int) -> dict:
        item = self._items[position]
        if type(item) is dict:
            return item
        event = self._cache.get(position)
        if event is None:
            if len(self._cache) >= CACHE_SIZE:
                self._cache.clear()
            event = self._cache[position] = orjson.loads(item) if type(item) is bytes else item.load()
        return event

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._get(p) for p in range(*index.indices(len(self._items)))]
        if index < 0:
            index += len(self._items)
        return self._get(index)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __iter__(self) -> Iterator[dict]:
        for item in self._items:  # a walk over all: parsed without filling the cache
            yield item if type(item) is dict else orjson.loads(item) if type(item) is bytes else item.load()
