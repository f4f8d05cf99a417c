"""How far the server has come with its folder: the sessions listed, those not read yet and those whose search index
is still being built. What `/` says while a first read of thousands of sessions goes on, and what `/api/status`
answers a script waiting for a folder to be searchable whole."""

from __future__ import annotations

import threading
import time
from collections import Counter
from itertools import takewhile
from typing import NamedTuple

from viewer.index import sleeping
from viewer.library.background import spaced

RECOUNT_SHARE = 0.05  # of a core, at most, that counting takes however often the status is asked
RECOUNT_AT_MOST = 2.0  # seconds a count is answered for at most
# Every session is counted again after WHOLE_EVERY s (a session put to sleep may count otherwise without telling the
# library), or later as that count takes more than RECOUNT_SHARE of a core, but within WHOLE_AT_MOST s
WHOLE_EVERY, WHOLE_AT_MOST = 2.0, 60.0


class _Held(NamedTuple):
    """A count and what it was made at."""
    counts: dict
    version: int  # the library's version when counted
    beside: object  # what was asked with it (Counts.of)
    look_at: float  # when an ask may count again what changed since (monotonic s)
    whole_at: float  # when an ask counts every session again


def reading(sessions) -> dict:
    """{"sessions", "unread", "indexing"} of `sessions` (read without their locks and without waking any)."""
    return _counted(len(sessions), Counter(map(sleeping.read_state, sessions)))


class Counts:
    """A library's last count (`reading`) and its version then, one per app, kept up to date cheaply: each ask counts
    again only the sessions told changed since (Library.bumps: a read of 20,000 tells some hundred a second) and
    those counted indexing (their search index is built without telling the library). Every session
    is counted again (some 25 ms at 20,000) when one left or any row changed (`rows_changed_at`), when `beside` (what
    is asked with it: a scan under way, files read part way) differs from the count's, and every WHOLE_EVERY s or so;
    counting takes at most `share` of a core however often it is asked (`background.spaced`)."""

    def __init__(self, share: float = RECOUNT_SHARE) -> None:
        self.share = share
        self._held: _Held | None = None
        self._states: dict = {}  # session -> what it counted as (read_state) in the held count
        self._indexing: set = set()  # the sessions of `_states` counted indexing
        self._lock = threading.Lock()  # asks at once: one updates the count, the other answers it after

    def of(self, library, beside=None) -> tuple[dict, int]:
        """(the counts of `library`'s sessions, the library's version they were counted at)."""
        with self._lock:
            held, now = self._held, time.monotonic()
            if held is not None and held.beside == beside and now < held.look_at:
                return held.counts, held.version
            version, started = library.version, time.thread_time()  # first: a change meanwhile is told later
            sessions = library.sessions_now()
            whole = (held is None or held.beside != beside or now >= held.whole_at
                     or library.rows_changed_at > held.version)
            counts = self._count_all(sessions) if whole else self._count_changed(library, sessions, held)
            cpu = time.thread_time() - started
            if whole:  # the next ask counts what changed since at once (cheap)
                self._held = _Held(counts, version, beside, now,
                                   now + spaced(cpu, WHOLE_EVERY, self.share, WHOLE_AT_MOST))
            else:
                self._held = _Held(counts, version, beside, now + spaced(cpu, 0.0, self.share, RECOUNT_AT_MOST),
                                   held.whole_at)
            return counts, version

    def _count_all(self, sessions: list) -> dict:
        self._states = states = dict(zip(sessions, map(sleeping.read_state, sessions)))
        self._indexing = {s for s, state in states.items() if state == "indexing"}
        return _counted(len(sessions), Counter(states.values()))

    def _count_changed(self, library, sessions: list, held: _Held) -> dict:
        """The held count with the sessions told changed since its version (Library.bumps), and those indexing,
        counted again; every session when some told since have left the library's list of them, or one left unseen
        (more sessions counted than are listed)."""
        states, indexing, since = self._states, self._indexing, held.version
        with library.lock:
            bumps = library.bumps
            changed = None if len(bumps) == bumps.maxlen and bumps[0][0] > since else [
                s for _, s in takewhile(lambda bump: bump[0] > since, reversed(bumps))]
        if changed is None:
            return self._count_all(sessions)
        tally = Counter({"unread": held.counts["unread"], "indexing": held.counts["indexing"]})
        for s in {*changed, *indexing}:
            was, state = states.get(s), sleeping.read_state(s)
            if was != state:
                tally[was] -= 1
                tally[state] += 1
                states[s] = state
                (indexing.add if state == "indexing" else indexing.discard)(s)
        return _counted(len(sessions), tally) if len(states) == len(sessions) else self._count_all(sessions)


def _counted(sessions: int, states: Counter) -> dict:
    return {"sessions": sessions, "unread": states["unread"], "indexing": states["indexing"]}
