"""A finished session's search postings packed into three flat arrays, for a folder of thousands of sessions.

A growing session's postings are a dict of arrays, costly per token. Once its files are left alone and its index
is complete, they become sorted interned tokens, where each token's positions start, and all positions; a lookup
is a bisection. A session read again starts with a dict again.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left
from itertools import accumulate

from viewer.core.positions import POSITIONS_TYPE

_EMPTY = array(POSITIONS_TYPE)
_LOW = 0 if sys.byteorder == "little" else 1  # which 2-byte half of a 4-byte position is its low one


class PackedPostings:
    """token -> positions, read only, as `dict.get` and `items` read a dict of arrays."""

    __slots__ = ("tokens", "starts", "positions")

    def __init__(self, tokens: list[str], starts: array, positions: array) -> None:
        self.tokens, self.starts, self.positions = tokens, starts, positions

    @classmethod
    def packed(cls, postings: dict[str, array], count: int | None = None, interned: bool = True) -> PackedPostings:
        """`postings`: arrays of POSITIONS_TYPE; `count`: how many events the session has; under 65,536 (most
        sessions) a position takes 2 bytes; `interned`: its tokens shared with other sessions' (not for postings only
        saved and dropped). Made by C calls only: no Python step per token (a session has thousands)."""
        tokens = sorted(map(sys.intern, postings) if interned else postings)
        lists = list(map(postings.__getitem__, tokens))
        starts = array("I", [0])
        starts.extend(accumulate(map(len, lists)))
        joined = b"".join(lists)
        if count is not None and count < 65536:  # each 4-byte position's low half (all it holds), not an int each
            return cls(tokens, starts, array("H", memoryview(joined).cast("H")[_LOW::2].tobytes()))
        return cls(tokens, starts, array(POSITIONS_TYPE, joined))

    def get(self, token: str, default=_EMPTY) -> array:
        at = bisect_left(self.tokens, token)
        if at == len(self.tokens) or self.tokens[at] != token:
            return default
        return self.positions[self.starts[at]:self.starts[at + 1]]

    def __contains__(self, token: object) -> bool:
        at = bisect_left(self.tokens, token)
        return at < len(self.tokens) and self.tokens[at] == token

    def __len__(self) -> int:
        return len(self.tokens)

    def prefixed(self, prefix: str) -> list[str]:
        """The word tokens starting with `prefix` (field tokens start with \\x01: no word prefix reaches them)."""
        at = bisect_left(self.tokens, prefix)
        found = []
        while at < len(self.tokens) and self.tokens[at].startswith(prefix):
            found.append(self.tokens[at])
            at += 1
        return [token for token in found if token[0] != "\x01"]

    def items(self):
        for at, token in enumerate(self.tokens):
            yield token, self.positions[self.starts[at]:self.starts[at + 1]]

    def state(self) -> tuple:
        """As plain data (kept by the persistent cache)."""
        return self.tokens, self.starts.tobytes(), self.positions.typecode, self.positions.tobytes()

    @classmethod
    def from_state(cls, state) -> PackedPostings:
        tokens, starts, typecode, positions = state
        if typecode not in ("H", POSITIONS_TYPE):
            raise ValueError(f"packed postings of type {typecode!r}")
        packed = cls(list(map(sys.intern, tokens)), array("I"), array(typecode))
        packed.starts.frombytes(starts)
        packed.positions.frombytes(positions)
        if len(packed.starts) != len(packed.tokens) + 1 or packed.starts[-1] != len(packed.positions):
            raise ValueError("packed postings that do not add up")
        return packed
