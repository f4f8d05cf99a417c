"""Plain data (what orjson reads: dicts, lists, strings, numbers) packed small, for values kept by the million.

Each dict becomes a tuple of its shape's id and its values (JSON holds no tuples, so a tuple always means a dict);
a shape's id is a CRC-32 of its keys, the same in every process, so packed bytes kept in the cache read back in the
next run once their shapes are learnt again. The shapes known are a `Shapes` table: one per app (on its Host).
"""

from __future__ import annotations

import marshal
import threading
import zlib

MAX_SHAPES = 65536  # a dict of a shape past this many is kept as itself (marshal keeps its keys)
MAX_KEYS = 1_000_000  # nor past this many keys' characters in all: a table is bounded in memory as in count
_CONTAINERS = frozenset((dict, list, tuple))  # what `_flat` flattens


def _shape_id(keys: tuple) -> int | None:
    if not all(type(key) is str for key in keys):
        return None
    return zlib.crc32("\0".join(keys).encode("utf-8", "surrogatepass")) & 0x7FFFFFFF  # marshal's 4-byte int


class Shapes:
    """The shapes one app's values were packed with (shape id -> keys), and the packing itself."""

    def __init__(self) -> None:
        self._shapes: dict[int, tuple] = {}  # shape id -> its keys
        self._index: dict[tuple, int] = {}  # keys -> their shape id
        self._chars = 0  # characters of every shape's keys
        self._lock = threading.Lock()

    def _room(self, keys: tuple) -> bool:
        return len(self._shapes) < MAX_SHAPES and self._chars + sum(map(len, keys)) <= MAX_KEYS

    def _add(self, shape: int, keys: tuple) -> None:
        self._shapes[shape] = keys
        self._index.setdefault(keys, shape)
        self._chars += sum(map(len, keys))

    def _shape(self, keys: tuple) -> int | None:
        found = self._index.get(keys)
        if found is None:
            with self._lock:
                found = self._index.get(keys)
                if found is None and self._room(keys):
                    shape = _shape_id(keys)
                    if shape is not None and shape not in self._shapes:  # a CRC two shapes share: the second keeps its keys
                        self._add(shape, keys)
                        found = shape
        return found

    def known(self) -> dict[int, tuple]:
        """The shapes known (shape id -> keys), to keep beside packed bytes kept between runs."""
        with self._lock:
            return dict(self._shapes)

    def learn(self, kept: dict[int, tuple]) -> bool:
        """Know these shapes (from `known` in an earlier run) before unpacking what was packed with them; False when
        one of them is not what its id is here (bytes packed with it cannot be read: they must be made again)."""
        with self._lock:
            new = {shape: tuple(keys) for shape, keys in kept.items() if self._shapes.get(shape) != keys}  # mostly none
            for shape, keys in new.items():
                if _shape_id(keys) != shape or shape in self._shapes:
                    return False
            for shape, keys in new.items():
                if not self._room(keys):
                    return False
                self._add(shape, keys)
            return True

    def _flat(self, value):
        kind = type(value)
        if kind is dict:
            shape = self._shape(tuple(value))
            if shape is None:
                return {key: self._flat(item) for key, item in value.items()}
            flat = self._flat  # called for containers only: most values are strings and numbers, kept as they are
            return (shape, *[flat(item) if type(item) in _CONTAINERS else item for item in value.values()])
        if kind is list or kind is tuple:  # a tuple is kept as the list JSON would make of it
            return [self._flat(item) if type(item) in _CONTAINERS else item for item in value]
        return value

    def _whole(self, value):
        kind = type(value)
        if kind is tuple:
            return dict(zip(self._shapes[value[0]], map(self._whole, value[1:])))
        if kind is list:
            return [self._whole(item) for item in value]
        if kind is dict:
            return {key: self._whole(item) for key, item in value.items()}
        return value

    def pack(self, value) -> bytes:
        """`value` as bytes that `unpack` turns back into an equal value (with this table, or one that `learn`t the
        shapes known here)."""
        return marshal.dumps(self._flat(value))

    def pack_blanked(self, value: dict, blank: frozenset) -> bytes:
        """`pack` of a copy of dict `value` whose keys in `blank` hold None, without making that copy."""
        shape = self._shape(tuple(value))
        if shape is None:
            return self.pack({key: None if key in blank else item for key, item in value.items()})
        flat = self._flat
        return marshal.dumps((shape, *[None if key in blank else flat(item) if type(item) in _CONTAINERS else item
                                       for key, item in value.items()]))

    def unpack(self, data: bytes):
        return self._whole(marshal.loads(data))
