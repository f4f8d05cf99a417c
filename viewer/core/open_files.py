"""One app's pool of open session files: at most `cap` hold a descriptor at once, the least recently read closed
first, so any number of session files costs a bounded number of descriptors (files/file_source.py reads through
it). Each app's runtime holds one on its Host; code that runs alone makes its own."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

from . import lockorder

try:
    import resource
except ImportError:  # not POSIX: no descriptor limit to read
    resource = None


def default_cap() -> int:
    """How many session files stay open at once: a quarter of the soft descriptor limit, at most 256.

    A quarter leaves the rest to connections, the watcher and logs (256 of macOS's default 256 would
    leave none); 256 keeps every descriptor well below 1024, where `select()` stops working, and is
    more files than a person reads at once: the others are opened again by path (about 10 µs) when read.
    """
    if resource is None:
        return 256
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 256 if soft == resource.RLIM_INFINITY else max(4, min(soft // 4, 256))


class OpenFiles:
    """Open files (objects with `recent`, `users` and `close_descriptor()`), at most `cap` (None: default_cap)."""

    def __init__(self, cap: int | None = None) -> None:
        self.cap = default_cap() if cap is None else cap
        self.open: OrderedDict[int, object] = OrderedDict()  # id -> open file, least recently read first
        # reentrant: a file collected while this thread holds the lock closes itself under it
        self.lock = lockorder.ordered(threading.RLock(), lockorder.FILES, "open files")

    def held(self) -> int:
        """How many files are open now."""
        return len(self.open)

    def enter(self, source) -> None:
        """`source` is open now (held by a weak reference: a file nobody holds closes itself): files not read lately
        are closed to stay within the cap (the clock algorithm, an approximate least-recently-used order: a read only
        sets `recent`; eviction walks the pool oldest first, giving a file read since the last walk a second chance at
        the end). Under `lock`."""
        pool = self.open
        pool[id(source)] = weakref.ref(source)
        if len(pool) <= self.cap:  # room to spare: no walk (nor a copy of the pool's keys to walk)
            return
        if self._closed_oldest(source):  # the usual case once full: the walk's first step, without copying the pool
            return
        for key in list(pool) * 2:  # two walks: the first may only clear `recent`
            if len(pool) <= self.cap:
                return
            found = pool.get(key)
            other = found() if found is not None else None
            if other is None or other is source or other.users:
                continue
            if other.recent:
                other.recent = False
                pool.move_to_end(key)
            else:
                other.close_descriptor()

    def _closed_oldest(self, source) -> bool:
        """Close the oldest file if the walk would close it first (not read lately, not in use), without copying
        the pool's keys (a cold read of thousands of files enters each into a full pool); False if not."""
        pool = self.open
        key = next(iter(pool))
        other = pool[key]()
        if other is None or other is source or other.users or other.recent:
            return False
        other.close_descriptor()
        return len(pool) <= self.cap

    def leave(self, source) -> None:
        """`source` closed its descriptor (under `lock`)."""
        self.open.pop(id(source), None)
