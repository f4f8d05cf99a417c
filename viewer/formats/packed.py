"""Plain data (what orjson reads: dicts, lists, strings, numbers) packed small, for values kept by the million.

Each dict becomes a tuple of its shape's id and its values (JSON holds no tuples, so a tuple always means a dict);
a shape's id is a CRC-32 of its keys, the same in every process, so packed bytes kept in the cache read back in the
next run once their shapes are learnt again.
"""

from __future__ import annotations

import marshal
import threading
import zlib

_SHAPES: dict[int, tuple] = {}  # shape id -> its keys
_INDEX: dict[tuple, int] = {}  # keys -> their shape id
_LOCK = threading.Lock()
MAX_SHAPES = 65536  # a dict of a shape past this many is kept as itself (marshal keeps its keys)


def _shape_id(keys: tuple) -> int | None:
    if not all(type(key) is str for key in keys):
        return None
    return zlib.crc32("\0".join(keys).encode("utf-8", "surrogatepass")) & 0x7FFFFFFF  # marshal's 4-byte int


def _shape(keys: tuple) -> int | None:
    found = _INDEX.get(keys)
    if found is None:
        with _LOCK:
            found = _INDEX.get(keys)
            if found is None and len(_SHAPES) < MAX_SHAPES:
                shape = _shape_id(keys)
                if shape is not None and shape not in _SHAPES:  # a CRC two shapes share: the second keeps its keys
                    found = _INDEX[keys] = shape
                    _SHAPES[shape] = keys
    return found


def shapes() -> dict[int, tuple]:
    """The shapes known (shape id -> keys), to keep beside packed bytes kept between runs."""
    with _LOCK:
        return dict(_SHAPES)


def learn(kept: dict[int, tuple]) -> bool:
    """Know these shapes (from `shapes` in an earlier run) before unpacking what was packed with them; False when
    one of them is not what its id is here (bytes packed with it cannot be read: they must be made again)."""
    with _LOCK:
        new = {shape: tuple(keys) for shape, keys in kept.items() if _SHAPES.get(shape) != keys}  # mostly none
        for shape, keys in new.items():
            if _shape_id(keys) != shape or shape in _SHAPES:
                return False
        for shape, keys in new.items():
            if len(_SHAPES) >= MAX_SHAPES:
                return False
            _SHAPES[shape] = keys
            _INDEX.setdefault(keys, shape)
        return True


def _flat(value):
    kind = type(value)
    if kind is dict:
        shape = _shape(tuple(value))
        if shape is None:
            return {key: _flat(item) for key, item in value.items()}
        return (shape, *map(_flat, value.values()))
    if kind is list or kind is tuple:  # a tuple is kept as the list JSON would make of it
        return [_flat(item) for item in value]
    return value


def _whole(value):
    kind = type(value)
    if kind is tuple:
        return dict(zip(_SHAPES[value[0]], map(_whole, value[1:])))
    if kind is list:
        return [_whole(item) for item in value]
    if kind is dict:
        return {key: _whole(item) for key, item in value.items()}
    return value


def pack(value) -> bytes:
    """`value` as bytes that `unpack` turns back into an equal value (in this process, or in one that `learn`t
    the shapes known here)."""
    return marshal.dumps(_flat(value))


def unpack(data: bytes):
    return _whole(marshal.loads(data))
