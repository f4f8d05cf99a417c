"""How far the server has come with its folder: the sessions listed, those not read yet and those whose search index
is still being built. What `/` says while a first read of thousands of sessions goes on, and what `/api/status`
answers a script waiting for a folder to be searchable whole."""

from __future__ import annotations

import time
from collections import Counter

from viewer.index import sleeping
from viewer.library.background import spaced

RECOUNT_SHARE = 0.05  # of a core, at most, that counting takes however often the status is asked
RECOUNT_AT_MOST = 2.0  # seconds a count is answered for at most


def reading(sessions) -> dict:
    """{"sessions", "unread", "indexing"} of `sessions` (read without their locks and without waking any)."""
    states = Counter(map(sleeping.read_state, sessions))
    return {"sessions": len(sessions), "unread": states["unread"], "indexing": states["indexing"]}


class Counts:
    """A library's last count (`reading`) and its version then, counted again once counting has taken at most `share`
    of a core since (`background.spaced`): 20,000 sessions take some 25 ms, asked ten times a second while they are
    read. One per app. A count of hundreds is made again within a millisecond, of 20,000 within half a second, and at
    once when `beside` (what is asked with it: a scan under way, files read part way) differs from the count's."""

    def __init__(self, share: float = RECOUNT_SHARE) -> None:
        self.share = share
        self._held: tuple | None = None  # (counts, library version, `beside` then, when to count again)

    def of(self, library, beside=None) -> tuple[dict, int]:
        """(the counts of `library`'s sessions, the library's version they were counted at)."""
        held, now = self._held, time.monotonic()
        if held is not None and held[2] == beside and now < held[3]:
            return held[0], held[1]
        version, started = library.version, time.thread_time()  # the version first: a change meanwhile is told later
        counts = reading(library.sessions_now())
        self._held = (counts, version, beside,
                      now + spaced(time.thread_time() - started, 0.0, self.share, RECOUNT_AT_MOST))
        return counts, version
