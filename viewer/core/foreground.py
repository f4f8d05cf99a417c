"""Requests come first: the ingest thread gives way while a request is being answered.

The web layer counts the requests under way (`enter`, `leave`); the ingest thread, between two short steps of its
work, waits while any is (`give_way`), at most as long as it worked since it last gave way. A page alone runs on its
own, and a steady stream of requests still leaves reading half of the time (docs/design.md, "Threads").
One `Foreground` per running app (its runtime owns it): an app's ingest gives way to that app's requests.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

from . import lockorder

GIVE_WAY_AT_MOST = 0.040  # seconds waited at once: most pages are made within it
WAIT_PER_WORK = 1.0  # seconds it may wait per second it worked


class Foreground:
    """The requests under way in one app, and the ingest thread's credit of time it may wait for them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._serving = 0  # requests under way, in every thread
        self._idle = threading.Event()
        self._idle.set()
        self._credit = GIVE_WAY_AT_MOST  # how long the thread giving way may still wait (one ingest thread gives way)
        self._since = 0.0  # when it last came back from giving way (time.monotonic)

    def enter(self) -> None:
        """A request starts (pair with leave)."""
        with self._lock:
            self._serving += 1
            self._idle.clear()

    def leave(self) -> None:
        """A request has been answered."""
        with self._lock:
            self._serving = max(0, self._serving - 1)
            if self._serving == 0:
                self._idle.set()

    @contextmanager
    def serving(self):
        self.enter()
        try:
            yield
        finally:
            self.leave()

    def busy(self) -> bool:
        return not self._idle.is_set()

    def give_way(self, at_most: float = GIVE_WAY_AT_MOST) -> None:
        """Called by background work between two steps: wait (without the GIL) while requests are under way, for
        at most the time worked since the last call (the credit saved, up to `at_most`)."""
        if lockorder.CHECKING:
            lockorder.none_held("giving way to requests")
        now = time.monotonic()
        credit = self._credit = min(at_most, self._credit + WAIT_PER_WORK * (now - self._since))
        if not self._idle.is_set() and credit > 0:
            self._idle.wait(credit)
            after = time.monotonic()
            self._credit -= after - now
            now = after
        self._since = now
