"""No cyclic garbage collection while a batch is indexed, and none over the index afterwards.

A session's index is millions of small objects without reference cycles: the collector is paused while a batch is
added (`batch`), and a big batch's objects are frozen afterwards (gc.freeze) so that full collections skip them.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

FREEZE_AFTER = 1000  # a batch that added this many events or more is frozen; a live append of a few is not

_lock = threading.Lock()
_depth = 0  # batches under way, in every thread
_added = 0  # events added by the batches of this pause (each says how many as it ends)
_was_enabled = True


@contextmanager
def batch():
    """Cyclic GC off for the duration (nested and overlapping uses too); the caller says how much it added
    with `added`. When the last batch under way ends, what they all added decides whether to freeze."""
    global _depth, _added, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    counter = {"added": 0}
    try:
        yield counter
    finally:
        with _lock:
            _depth -= 1
            _added += counter["added"]
            if _depth == 0:
                if _added >= FREEZE_AFTER:
                    gc.collect(1)  # the young garbage of this batch (and of other threads) is collected first
                    gc.freeze()
                _added = 0
                if _was_enabled:
                    gc.enable()


def forgotten() -> None:
    """A session was cleared or forgotten: let the next full collection look at everything again."""
    gc.unfreeze()
