"""The order locks are taken in, checked while testing: a thread that takes them out of order raises.

A thread holding locks takes further ones only further down this list, never back up it (two threads doing
it the other way round each wait for the other's lock forever):

    LIBRARY  the library's lock (its sessions, groups and folder problems)
    SESSION  a session's lock (its index; pages read under it, ingest writes under it)
    CACHE    a cache's own lock (as-of copies, search counts, tree outlines, rendered entries)
    FILES    the open files' pool

Work that gives way to requests (foreground.give_way) does so holding none of them: a request waiting for a
lock the giving thread holds would wait out the whole give-way instead of running first.

With AGENTVIEW_CHECK_LOCKS=1 in the environment (the test suite sets it) `ordered` wraps each lock to keep
what each thread holds and raise LockOrderError on a wrong order; without it, `ordered` returns the lock as
it is and `none_held` is not called, so the checks cost nothing.
"""

from __future__ import annotations

import os
import threading

LIBRARY, SESSION, CACHE, FILES = 1, 2, 3, 4
NAMES = {LIBRARY: "library", SESSION: "session", CACHE: "cache", FILES: "files"}

CHECKING = os.environ.get("AGENTVIEW_CHECK_LOCKS", "") not in ("", "0")

_held = threading.local()  # .locks: the ordered locks this thread holds, in the order taken (with repeats)
violations: list[str] = []  # every one raised, also where a thread catches it (the ingest thread logs and goes on)


class LockOrderError(RuntimeError):
    """A lock taken out of the order above: a deadlock waiting for the wrong interleaving."""


def _holding() -> list[OrderedLock]:
    try:
        return _held.locks
    except AttributeError:
        _held.locks = []
        return _held.locks


class OrderedLock:
    """A Lock or RLock that checks, before each acquire, that this thread takes it in order."""

    def __init__(self, lock, level: int, name: str):
        self._lock, self.level, self.name = lock, level, name
        self._reentrant = not isinstance(lock, type(threading.Lock()))

    def _check(self) -> None:
        for held in _holding():
            if held is self:
                if not self._reentrant:
                    _raise(f"{self.name} lock taken again by the thread holding it (it would wait for itself "
                           "forever)")
            elif held.level > self.level:
                _raise(f"{self.name} lock ({NAMES[self.level]}) taken while holding the {held.name} lock "
                       f"({NAMES[held.level]}): {NAMES[self.level]} locks come first")

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        self._check()
        taken = self._lock.acquire(blocking, timeout)
        if taken:
            _holding().append(self)
        return taken

    def release(self) -> None:
        self._lock.release()
        holding = _holding()
        for i in range(len(holding) - 1, -1, -1):  # the latest hold of it: locks need not be let go in order
            if holding[i] is self:
                del holding[i]
                break

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

    def locked(self) -> bool:
        return self._lock.locked()


def ordered(lock, level: int, name: str):
    """`lock`, checked for its place in the order when checking (else `lock` itself)."""
    return OrderedLock(lock, level, name) if CHECKING else lock


def none_held(what: str) -> None:
    """Raise if this thread holds any ordered lock: `what` must be done holding none (call it `if CHECKING`)."""
    holding = _holding()
    if holding:
        _raise(f"{what} while holding the {holding[-1].name} lock ({NAMES[holding[-1].level]})")


def _raise(message: str) -> None:
    violations.append(message)
    raise LockOrderError(message)
