"""Plain data for what an index keeps between runs (the persistent cache keeps nothing else): arrays as
(typecode, bytes), and maps an index gives whole that the store may cut into several sections."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass


def array_state(a: array) -> tuple[str, bytes]:
    return a.typecode, a.tobytes()


def array_from(kept: tuple[str, bytes]) -> array:
    a = array(kept[0])
    a.frombytes(kept[1])
    return a


@dataclass(frozen=True)
class Items:
    """A map kept item by item, `encode(value)` making each value plain (None: it is), `weigh(value)` telling about
    how many bytes it holds: the store cuts a big one into sections, and gives it back section by section.
    `pieces`: its values are arrays the store may cut too, given back in order (to be appended)."""

    mapping: dict
    encode: Callable | None = None
    weigh: Callable | None = None
    pieces: bool = False
