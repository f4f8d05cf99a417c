"""The longest common subsequence of two sequences, as runs of equal and changed items (Myers' O(ND) diff).

Two runs of one system mostly agree, so the number of differences D is small and Myers' greedy walk costs
O((N+M)·D). Past `MOST_DIFFERENCES` it would cost seconds in Python: the rest is aligned on the items each side
holds once (patience diff's anchors, in O(N log N)), close to the longest but not always it (the result says so).
"""

from __future__ import annotations

from collections import Counter
from bisect import bisect_left
from typing import Hashable, NamedTuple, Sequence

MOST_DIFFERENCES = 400


class Run(NamedTuple):
    """a[a_start:a_end] and b[b_start:b_end]: equal item by item (`equal`), or a change (either side may be empty)."""

    equal: bool
    a_start: int
    a_end: int
    b_start: int
    b_end: int


class Alignment(NamedTuple):
    runs: list[Run]
    exact: bool  # the common subsequence is a longest one (False: difflib's, past MOST_DIFFERENCES)


def align(a: Sequence[Hashable], b: Sequence[Hashable], most: int = MOST_DIFFERENCES) -> Alignment:
    """`a` and `b` as alternating runs of equal items and changes, covering both sequences in order."""
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a, end_b = end_a - 1, end_b - 1
    middle_a, middle_b = a[start:end_a], b[start:end_b]
    # Each item of one side that the other lacks is a difference: past `most` of them Myers would stop anyway.
    common = sum((Counter(middle_a) & Counter(middle_b)).values())
    too_many = len(middle_a) + len(middle_b) - 2 * common > most
    pairs = None if too_many else _myers(middle_a, middle_b, most)
    exact = pairs is not None
    if pairs is None:
        pairs = _anchored(middle_a, middle_b)
    matched = [(i, i) for i in range(start)] + [(i + start, j + start) for i, j in pairs]
    matched += [(end_a + k, end_b + k) for k in range(len(a) - end_a)]
    return Alignment(_runs(matched, len(a), len(b)), exact)


def _runs(matched: list[tuple[int, int]], n: int, m: int) -> list[Run]:
    runs: list[Run] = []
    i = j = 0
    for x, y in matched + [(n, m)]:
        if x > i or y > j:
            runs.append(Run(False, i, x, j, y))
        if x < n:
            if runs and runs[-1].equal and runs[-1].a_end == x and runs[-1].b_end == y:
                runs[-1] = runs[-1]._replace(a_end=x + 1, b_end=y + 1)
            else:
                runs.append(Run(True, x, x + 1, y, y + 1))
        i, j = x + 1, y + 1
    return runs


def _myers(a: Sequence[Hashable], b: Sequence[Hashable], most: int) -> list[tuple[int, int]] | None:
    """The matched (i, j) pairs of a longest common subsequence, or None past `most` differences."""
    n, m = len(a), len(b)
    if not n or not m:
        return []
    offset = n + m
    v = [0] * (2 * offset + 2)
    trace: list[list[int]] = []
    for d in range(min(offset, most) + 1):
        trace.append(v[offset - d: offset + d + 1])  # the furthest x on each diagonal before step d
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]  # down: an item of b inserted
            else:
                x = v[offset + k - 1] + 1  # right: an item of a deleted
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x, y = x + 1, y + 1
            v[offset + k] = x
            if x >= n and y >= m:
                return _backtrack(trace, a, b, d)
    return None


def _backtrack(trace: list[list[int]], a, b, d: int) -> list[tuple[int, int]]:
    x, y, pairs = len(a), len(b), []
    for step in range(d, 0, -1):
        before = trace[step]  # v as it was before this step: diagonals -step..step
        k = x - y

        def at(diagonal: int) -> int:
            return before[diagonal + step]

        down = k == -step or (k != step and at(k - 1) < at(k + 1))
        previous_k = k + 1 if down else k - 1
        previous_x = at(previous_k)
        previous_y = previous_x - previous_k
        while x > previous_x + (0 if down else 1) and y > previous_y + (1 if down else 0):
            x, y = x - 1, y - 1
            pairs.append((x, y))
        x, y = previous_x, previous_y
    while x > 0 and y > 0:
        x, y = x - 1, y - 1
        pairs.append((x, y))
    return pairs[::-1]


def _anchored(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[tuple[int, int]]:
    """Matched pairs from the items each side holds exactly once (the longest run of them in the same order on
    both sides), each grown to the equal items around it."""
    count_a, count_b = Counter(a), Counter(b)
    in_b = {item: j for j, item in enumerate(b) if count_b[item] == 1}
    unique = [(i, in_b[item]) for i, item in enumerate(a) if count_a[item] == 1 and item in in_b]
    # the longest subsequence of `unique` increasing in j (patience sorting)
    tails: list[int] = []  # the smallest last j of an increasing run of each length
    ends: list[int] = []  # which item of `unique` ends it
    before = [-1] * len(unique)
    for n, (_, j) in enumerate(unique):
        k = bisect_left(tails, j)
        if k == len(tails):
            tails.append(j), ends.append(n)
        else:
            tails[k], ends[k] = j, n
        before[n] = ends[k - 1] if k else -1
    chain, n = [], ends[-1] if ends else -1
    while n >= 0:
        chain.append(unique[n])
        n = before[n]
    pairs: list[tuple[int, int]] = []
    low_a = low_b = 0
    for i, j in reversed(chain):
        back = 0  # equal items just before the anchor, not past the last match
        while i - back - 1 >= low_a and j - back - 1 >= low_b and a[i - back - 1] == b[j - back - 1]:
            back += 1
        pairs += [(i - k, j - k) for k in range(back, 0, -1)]
        pairs.append((i, j))
        i, j = i + 1, j + 1
        while i < len(a) and j < len(b) and a[i] == b[j]:
            if count_a[a[i]] == 1 and count_b[b[j]] == 1:
                break  # the next anchor: it adds itself
            pairs.append((i, j))
            i, j = i + 1, j + 1
        low_a, low_b = i, j
    return pairs
