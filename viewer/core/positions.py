"""Sorted position lists: the one algebra the search, the facets and the queries combine them by.

A position list is ascending event positions, each once (an agent's entries, a token's postings, a facet). Lists
are combined without reading what a result does not need: merges and unions sort in C, an intersection lets the
shortest list drive, a window reads at most `limit` + 1 of each. Results may be one of the lists given: read only.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from itertools import chain
from typing import Iterable, Iterator, Sequence

Positions = Sequence[int]

# The typecode of the arrays the search keeps positions (and the folder's words session numbers) in: unsigned, as
# none is negative. An array of an unsigned type takes an int as it is; a signed one parses each as a function's
# argument (PyArg_Parse), twice the instructions an append, and a cold read appends millions.
POSITIONS_TYPE = "I"

CHUNK = 2048  # driving positions intersected at a time: a page of hits costs a chunk or two
_DENSE = 16  # a list with this many times more positions than the chunk in its range is looked up, not read


def merge(lists: Sequence[Positions]) -> Positions:
    """The positions of disjoint lists (each position in one of them, as agents' entries are), ascending."""
    if len(lists) == 1:
        return lists[0]
    return sorted(chain.from_iterable(lists))  # ascending runs: the sort merges them


def union(lists: Iterable[Positions]) -> Positions:
    """The positions of lists that may share some, ascending and each once."""
    lists = [positions for positions in lists if len(positions)]
    if len(lists) <= 1:
        return lists[0] if lists else ()
    return sorted(set().union(*lists))


def contains(positions: Positions, p: int, lo: int = 0, hi: int | None = None) -> bool:
    """Whether `p` is among positions[lo:hi], by binary search."""
    hi = len(positions) if hi is None else hi
    i = bisect_left(positions, p, lo, hi)
    return i < hi and positions[i] == p


def intersection_chunks(lists: Sequence[Positions], start: int = 0, chunk: int = CHUNK) -> Iterator[list[int]]:
    """The positions >= start in every list, ascending, a chunk of the shortest list's at a time.

    The shortest list drives; within a chunk each other list is checked by binary search when it is
    much longer than the chunk in the chunk's range, else by a set of its positions in that range.
    Lazy: a caller that stops after a page reads a chunk or two, not the lists.
    """
    if not lists or any(not len(positions) for positions in lists):
        return
    lists = sorted(lists, key=len)
    driver, others = lists[0], lists[1:]
    i = bisect_left(driver, start)
    while i < len(driver):
        found = list(driver[i:i + chunk])
        i += chunk
        lo, hi = found[0], found[-1]
        for other in others:
            a = bisect_left(other, lo)
            b = bisect_right(other, hi, a)
            if b - a > _DENSE * len(found):
                found = [p for p in found if contains(other, p, a, b)]
            else:
                inside = set(other[a:b])
                found = [p for p in found if p in inside]
            if not found:
                break
        if found:
            yield found


def intersection(lists: Sequence[Positions], start: int = 0) -> Iterator[int]:
    """The positions >= start in every list, ascending (lazy: see intersection_chunks)."""
    return chain.from_iterable(intersection_chunks(lists, start))


def window(lists: Sequence[Positions], after: int, limit: int, end: int) -> tuple[list[int], int]:
    """The first `limit` positions from `after` on of disjoint lists, merged, and where the window stops:
    the next position (left for the next poll), or `end` when none is left. Reads at most `limit` + 1 of
    each list, however long the backlog: a poll far behind costs what it renders."""
    heads = []
    for positions in lists:
        first = bisect_left(positions, after)
        heads.append(positions[first:first + limit + 1])  # the merged first limit + 1 are among these
    taken: list[int] = []
    for p in (heads[0] if len(heads) == 1 else heapq.merge(*heads)):
        if len(taken) == limit:
            return taken, p
        taken.append(p)
    return taken, end


def file_at(mapping: dict, key, position: int) -> None:
    """File `position` (the latest yet) under `key` in a map of keys to positions. A key's only position is kept as
    the int itself: most keys (a tool call's id) have one, and a list of one costs 64 bytes more, a million times
    in a big folder. Read them with `filed_at`."""
    found = mapping.get(key)
    if found is None:
        mapping[key] = position
    elif type(found) is int:
        mapping[key] = [found, position]
    else:
        found.append(position)


def filed_at(mapping: dict, key) -> Positions:
    """The positions `file_at` filed under `key`, ascending (empty when none)."""
    found = mapping.get(key)
    return () if found is None else (found,) if type(found) is int else found
