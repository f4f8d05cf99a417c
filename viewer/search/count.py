"""How many hits a query has in all (the search page's total), counted on the position lists its search
intersects, never by reading events.

A count is bounded (COUNT_BUDGET looks, COUNT_SESSIONS sessions); past that it is a lower bound. How far a session
was counted is kept per reading and query, so the next page or a reload goes on from there.
"""

from __future__ import annotations

from bisect import bisect_left

from viewer.core.bounded_map import BoundedMap
from viewer.core.positions import intersection_chunks

from .index import AGENT

# Looks a count makes (0.1 to 0.5 us each) before it settles for bounds.
COUNT_BUDGET = 50_000
COUNT_SESSIONS = 500  # sessions a count visits at most (its lock, its lists, its kept count: about 9 us each)
KEPT = 4096  # counts kept: (session, reading, requirements) -> (events before it counted, hits among them)


def counts(most: int = KEPT) -> BoundedMap:
    """How far counts got, kept between requests (one per running app, its runtime's): (session, reading,
    requirements) -> (events before it counted, hits among them)."""
    return BoundedMap("search counts", most)


class Tally:
    """How many events meet a query's requirements (every word, every qualifier), summed over sessions;
    phrases are not checked (that reads each event's text): see `total`. How far earlier counts got is read
    from and kept in `kept` (none kept without it)."""

    def __init__(self, budget: int = COUNT_BUDGET, sessions: int = COUNT_SESSIONS,
                 kept: BoundedMap | None = None) -> None:
        self.count, self.most, self.left, self.complete = 0, 0, budget, True
        self.visits = sessions
        self.kept = kept if kept is not None else counts()

    @property
    def spent(self) -> bool:
        """Whether it has visited as many sessions as it may."""
        return self.visits <= 0

    def skip(self) -> None:
        """A session not visited (visits ran out): the count is a lower bound, and no upper bound is known."""
        self.complete, self.most = False, None

    def add_nothing(self, sessions: int = 1) -> None:
        """Sessions visited that have no candidate (known without looking at their lists)."""
        self.visits -= sessions

    def pass_over(self, sessions: int) -> None:
        """Sessions without a candidate, visited if visits are left (as add_nothing), else skipped (as skip)."""
        visited = min(sessions, max(self.visits, 0))
        self.visits -= visited
        if visited < sessions:
            self.skip()

    def add(self, s, required: tuple, key: tuple) -> None:
        """Count one session's candidates (callers hold its lock). `key` says what the requirements are
        (search.requirements_key), for how far this session's count got to be kept."""
        lists, agents = required
        self.visits -= 1
        if agents is None:
            self._add(s, lists, key)
            return
        # Events are read from the file when asked for: each agent's postings are intersected in turn
        # instead of asking each candidate's agent (an agent's events are its own: the counts add up).
        for agent_id in sorted(agents):
            self._add(s, [*lists, s.search.get(AGENT + agent_id)], (*key, agent_id))

    def _add(self, s, lists: list, key: tuple) -> None:
        if len(lists) <= 1:  # counted by its length: nothing to keep
            self._count(lists, 0)
            return
        kept_as = (s.serial, s.epoch, key)
        upto, counted = self.kept.get(kept_as, (0, 0))
        if upto > s.count:  # not this reading's (cannot happen within an epoch): count it all
            upto, counted = 0, 0
        before = self.count
        stopped = self._count(lists, upto)
        # all of it counted: up to where the search index is built (all the events, unless it is behind)
        searched = min(s.count, s.search.indexed)
        self.kept.put(kept_as, (searched if stopped is None else stopped, counted + self.count - before))
        self.count += counted

    def _count(self, lists: list, start: int) -> int | None:
        """Add the events at or after `start` that are in every list, as far as the looks left go: returns
        None when it counted them all, else the position it stopped before (all earlier ones counted)."""
        if not lists or any(not len(positions) for positions in lists):
            return None
        shortest = min(range(len(lists)), key=lambda i: len(lists[i]))
        driver = lists[shortest]
        if self.most is not None:
            self.most += len(driver)
        first = bisect_left(driver, start)
        if len(lists) == 1:
            self.count += len(driver) - first
            return None
        others = len(lists) - 1
        take = min(len(driver) - first, self.left // others)
        self.left -= take * others
        for chunk in intersection_chunks([driver[first:first + take]] + lists[:shortest] + lists[shortest + 1:]):
            self.count += len(chunk)
        if first + take == len(driver):
            return None
        self.complete = False  # the events before the next position of the driving list are counted
        return driver[first + take]

    def total(self, phrases: bool, found: int, whole: bool) -> dict:
        """{"count", "exact", "at_most"}: `count` hits (a lower bound unless `exact`, then `at_most` is an upper
        bound, or None when not every session was visited), given the `found` hits of the page and whether that
        page is `whole` (from the start, nothing after it). A query with `phrases` is exact only when whole: its
        phrases are checked on the page only."""
        if whole:
            return {"count": found, "exact": True, "at_most": None}
        if phrases:
            return {"count": found, "exact": False, "at_most": self.count if self.complete else self.most}
        if self.complete:
            return {"count": self.count, "exact": True, "at_most": None}
        return {"count": max(self.count, found), "exact": False, "at_most": self.most}

