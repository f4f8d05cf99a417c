"""Plain data (what orjson reads: dicts, lists, strings, numbers) packed small, for values kept by the million.

`marshal` writes every key of every dict again: for an event's small fields and its token usage, the keys are half
of the bytes. Here each dict becomes a tuple of an index into a table of the key tuples seen (per process, a few
dozen) and its values; JSON data holds no tuples, so a tuple always means a dict. Packing costs about 2 µs and
unpacking as much; the table only grows with the distinct key orders seen.
"""

from __future__ import annotations

import marshal
import threading

_SHAPES: list[tuple] = []  # key tuples, by index
_INDEX: dict[tuple, int] = {}  # key tuple -> its index in _SHAPES
_LOCK = threading.Lock()
MAX_SHAPES = 65536  # a dict of a shape past this many is kept as itself (marshal keeps its keys)


def _shape(keys: tuple) -> int | None:
    found = _INDEX.get(keys)
    if found is None:
        with _LOCK:
            found = _INDEX.get(keys)
            if found is None and len(_SHAPES) < MAX_SHAPES:
                found = _INDEX[keys] = len(_SHAPES)
                _SHAPES.append(keys)
    return found


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
    """`value` as bytes that `unpack` turns back into an equal value (in this process)."""
    return marshal.dumps(_flat(value))


def unpack(data: bytes):
    return _whole(marshal.loads(data))
