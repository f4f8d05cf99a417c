"""What is built from a session's events after ingest, in file order, from a cursor of its own."""

from __future__ import annotations

import weakref


class Incremental:
    """Built from events 0 .. indexed-1 of a session; `catch_up` extends it (in the background after
    each ingest batch, and before every read of it, so a read always sees every event ingested).

    Subclasses say how to take in a run of events (`_extend`, which moves `indexed` to its stop) and
    how many at a time (`BATCH`).
    """

    BATCH = 512  # events per slice: a few milliseconds


    def __init__(self, session=None) -> None:
        self.indexed = 0
        self._session = weakref.ref(session) if session is not None else None  # no cycle: the session owns this

    def belong_to(self, session) -> None:
        """Be built from `session` from now on (a sleeping session taking back its index)."""
        self._session = weakref.ref(session)

    def catch_up(self, count: int, budget: int | None = None, along: Incremental | None = None) -> bool:
        """Take in the session's events up to `count` not taken in yet (at most `budget` of them); True when
        complete.

        `count`: how many events the session holds, as its caller read it (the session is of a higher layer: it
        hands down what this needs). Within a reading of the file it only grows; a session read again from its
        start drops this (`drop`), so a count read before that is never walked to. `along`: another index built
        from the same session, extended from the same read of the events while both stand at the same place (a
        Claude Code entry is read back from its file: once for both, not once each)."""
        s = self._session() if self._session is not None else None
        if s is None or self.indexed >= count:
            return True
        with s.lock:
            if self._session is None:  # dropped while this waited for the lock
                return True
            if along is not None and along.indexed != self.indexed:  # under the lock: a request may move it
                along = None
            end = count if budget is None else min(count, self.indexed + budget)
            while self.indexed < end:
                start, stop = self.indexed, min(end, self.indexed + self.BATCH)
                events = s.events.walk(start, stop) if along is not None else None
                self._extend(s, start, stop, events)
                if along is not None:
                    along._extend(s, start, stop, events)
            return self.indexed >= count

    def catch_up_in_slices(self, count: int, size: int | None = None) -> None:
        """Take in the session's events up to `count`, `size` at a time, each slice under the session's lock and
        none between: a request that needs all of it waits, while the other requests for the session wait at most
        one slice. Call it without holding the session's lock (else they all wait)."""
        while not self.catch_up(count, size or self.BATCH):
            pass

    def drop(self) -> None:
        """Be built from nothing from now on: the session was emptied (its file read again from the start) and holds
        a new one; a caller still holding this, with a count read before, takes nothing in."""
        self._session = None

    def _extend(self, s, start: int, stop: int, events: list | None = None) -> None:
        """Take in events start .. stop-1 (`events`: them, read already), moving `indexed` to stop."""
        raise NotImplementedError
