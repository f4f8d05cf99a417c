"""No cyclic garbage collection while a batch is indexed, and none over the index afterwards.

A session's index is millions of small objects without reference cycles: the collector is paused while a batch is
added (`batch`), and a big batch's objects are frozen afterwards (gc.freeze) so that full collections skip them.
One `GcPause` per running app (its runtime owns it); `close` gives the collector back as it found it.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

FREEZE_AFTER = 1000  # a batch that added this many events or more is frozen; a live append of a few is not


class GcPause:
    """The batches under way in one app, with the collector off while any is."""

    def __init__(self, collects: bool = True) -> None:
        # False: a one-off read that exits when done freezes a big batch without collecting it first (a young
        # collection would look at every event it keeps)
        self.collects = collects
        self._lock = threading.Lock()
        self._depth = 0  # batches under way, in every thread
        self._added = 0  # events added by the batches of this pause (each says how many as it ends)
        self._garbage = False  # a batch of this pause may have left garbage: collected before the freeze
        self._was_enabled = True
        self.froze = False  # objects were moved to the permanent generation (undone by close)

    @contextmanager
    def batch(self, kept: bool = False):
        """Cyclic GC off for the duration (nested and overlapping uses too); the caller says how much it added
        with `added`. When the last batch under way ends, what they all added decides whether to freeze.
        `kept`: what the batch makes is all kept (a first scan's sessions): no young collection walks it for
        garbage before it is frozen (a walk of everything made, 1.7 s at 20,000 sessions, finding nothing)."""
        with self._lock:
            if self._depth == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._depth += 1
        counter = {"added": 0}
        try:
            yield counter
        finally:
            with self._lock:
                self._depth -= 1
                self._added += counter["added"]
                self._garbage = self._garbage or not kept
                if self._depth == 0:
                    if self._added >= FREEZE_AFTER:
                        if self.collects and self._garbage:
                            gc.collect(1)  # the young garbage of this batch (and of other threads) is collected first
                        gc.freeze()
                        self.froze = True
                    self._added = 0
                    self._garbage = False
                    if self._was_enabled:
                        gc.enable()

    def forgotten(self) -> None:
        """A session was cleared or forgotten: let the next full collection look at everything again."""
        gc.unfreeze()

    def close(self) -> None:
        """The app stops: what it froze is collected again, and a collector it left off is on again."""
        with self._lock:
            if self._depth and self._was_enabled:
                gc.enable()
            self._depth = 0
            if self.froze:
                gc.unfreeze()
                self.froze = False
