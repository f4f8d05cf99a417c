"""Requests come first: the ingest thread gives way while a request is being answered.

One interpreter serves the pages and reads and indexes the files. A request competing with the ingest
thread for the GIL gets about half of it, and waits out each of its long C calls (a split, a join, a
set of a slice's tokens): a page took several times its own cost while a big file was read. So the web
layer counts the requests under way (`serving`), and the ingest thread, between two short steps of its
work, waits while any is (`give_way`) — for at most GIVE_WAY_AT_MOST, so that a steady stream of
requests slows reading and indexing down but never stops them. A request that needs work not done yet
(a search while the index is built) never waits for it: it answers with what is ready (see search_index).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

# Seconds waited per step of work (a step is ~2 ms: 256 lines read, 128 events indexed): most pages are made
# within it, and with requests always under way, reading and indexing still get about a tenth of the time.
GIVE_WAY_AT_MOST = 0.020

_lock = threading.Lock()
_serving = 0  # requests under way, in every thread
_idle = threading.Event()
_idle.set()


def enter() -> None:
    """A request starts (pair with leave)."""
    global _serving
    with _lock:
        _serving += 1
        _idle.clear()


def leave() -> None:
    """A request has been answered."""
    global _serving
    with _lock:
        _serving = max(0, _serving - 1)
        if _serving == 0:
            _idle.set()


@contextmanager
def serving():
    enter()
    try:
        yield
    finally:
        leave()


def busy() -> bool:
    return not _idle.is_set()


def give_way(at_most: float = GIVE_WAY_AT_MOST) -> None:
    """Called by background work between two steps: wait (without the GIL) while requests are under way."""
    if not _idle.is_set():
        _idle.wait(at_most)
