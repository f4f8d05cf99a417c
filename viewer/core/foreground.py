"""Requests come first: the ingest thread gives way while a request is being answered.

The web layer counts the requests under way (`enter`, `leave`); the ingest thread, between two short steps of its
work, waits while any is (`give_way`), at most as long as it worked since it last gave way. A page alone runs on its
own, and a steady stream of requests still leaves reading half of the time (docs/design.md, "Threads").
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

from . import lockorder

GIVE_WAY_AT_MOST = 0.040  # seconds waited at once: most pages are made within it
WAIT_PER_WORK = 1.0  # seconds it may wait per second it worked

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


class _Credit:
    """How long the thread giving way may still wait (its own: one ingest thread gives way)."""
    seconds = GIVE_WAY_AT_MOST
    since = 0.0  # when it last came back from giving way (time.monotonic)


def give_way(at_most: float = GIVE_WAY_AT_MOST) -> None:
    """Called by background work between two steps: wait (without the GIL) while requests are under way, for
    at most the time worked since the last call (the credit saved, up to `at_most`)."""
    if lockorder.CHECKING:
        lockorder.none_held("giving way to requests")
    now = time.monotonic()
    credit = _Credit.seconds = min(at_most, _Credit.seconds + WAIT_PER_WORK * (now - _Credit.since))
    if not _idle.is_set() and credit > 0:
        _idle.wait(credit)
        after = time.monotonic()
        _Credit.seconds -= after - now
        now = after
    _Credit.since = now
