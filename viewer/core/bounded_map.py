"""Bounded maps for what an app keeps between requests. BoundedMap (counts, snapshots, drawn trees): the least
recently used goes first, past `most` entries or past `most_weight` in all (each entry weighs `weigh(key)`).
ClearedPast (URLs, icons: read many times a page): all dropped at once past `most`. Both safe across threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from . import lockorder


class BoundedMap:
    def __init__(self, name: str, most: int, weigh: Callable[[Hashable], int] | None = None,
                 most_weight: int = 0) -> None:
        self.most, self.weigh, self.most_weight = most, weigh, most_weight
        self._items: OrderedDict = OrderedDict()
        self._weight = 0
        self._lock = lockorder.ordered(threading.Lock(), lockorder.CACHE, name)  # taken last, held briefly

    def get(self, key, default=None):
        """The value kept under `key` (now the most recently used), else `default`."""
        with self._lock:
            value = self._items.get(key, default)
            if key in self._items:
                self._items.move_to_end(key)
            return value

    def put(self, key, value) -> None:
        with self._lock:
            items = self._items
            if key not in items and self.weigh is not None:
                self._weight += self.weigh(key)
            items[key] = value
            items.move_to_end(key)
            while len(items) > self.most or (self.weigh is not None and len(items) > 1
                                              and self._weight > self.most_weight):
                dropped, _ = items.popitem(last=False)
                if self.weigh is not None:
                    self._weight -= self.weigh(dropped)

    def keys(self) -> list:
        with self._lock:
            return list(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._weight = 0

    def __len__(self) -> int:
        return len(self._items)


class ClearedPast(dict):
    """A dict of values cheap to make again, read many times a page: no lock and no order kept (a dict's own
    operations are atomic), where BoundedMap's would cost more than they save; all dropped at once past `most`."""

    def __init__(self, most: int) -> None:
        super().__init__()
        self.most = most

    def put(self, key, value):
        if len(self) >= self.most:
            self.clear()
        self[key] = value
        return value
