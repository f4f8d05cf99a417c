"""A copy of a dict of lists that shares the lists until one is changed (SessionIndex.copy)."""

from __future__ import annotations


class SharedLists(dict):
    """A copy of a dict of lists that shares the lists: one is copied when it is first looked up here.

    `SessionIndex.copy` makes these, so an as-of snapshot extended by `add` never changes the lists
    of the snapshot it was copied from, and copying costs a dict copy, not a list copy per key.
    Whoever changes a list looks it up first (`get`, `[]`, `setdefault`); `items()` and `values()`
    give the shared lists, for reading only.
    """

    __slots__ = ("_own",)

    def __init__(self, other: dict) -> None:
        super().__init__(other)
        self._own: set = set()

    def _mine(self, key, value):
        if key not in self._own and type(value) is list:  # an int (positions.file_at) is never changed in place
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
