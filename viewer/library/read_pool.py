"""A first read of many sessions of several files (a `~/.claude/projects` folder) spread over worker processes.

Each worker (library.read_worker) reads whole groups by the ingest thread's code and answers with their cache entry
and listing row; the ingest thread keeps the entry and takes the group asleep from it, as a restart would, and
reads groups itself meanwhile, newest first as ever. A group a worker leaves, a worker that
dies or hangs, a group still being written or a big one: read in-process, so the result is the same either way.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import subprocess
import time
from collections import deque

from viewer.search import worker as search_worker

log = logging.getLogger(__name__)

MAX_PROCESSES = 1  # by default: each costs some 55 MB (imports, the prices); --read-workers N asks for more
AHEAD = 16  # groups out per process: it reads on while the ingest thread reads a big group itself (100 ms and more)
ANSWERS_HELD = 4 * 1024 * 1024  # bytes of answers a worker sends before it waits for the ingest thread to take them
HANG_AFTER = 30.0  # seconds without an answer while groups are out: the workers are ended, the rest read here
MOST_BYTES = 16 * 1024 * 1024  # a bigger group is read in-process, in slices that give way to requests
SETTLED_BY = 60.0  # seconds of margin: a group handed out settles at once (Tuning.settle_after) in the worker too


def process_count(tuning) -> int:
    """Worker processes for `tuning`: its read_workers, else a core each but the ingest thread's (none on one)."""
    if tuning.read_workers is not None:
        return max(0, tuning.read_workers)
    cores = tuning.cores if tuning.cores is not None else search_worker.cores()
    return max(0, min(MAX_PROCESSES, cores - 1))


class _Worker:
    """One worker process, talked to by the ingest thread alone (no thread of ours beside it: a group sent is a few
    hundred bytes, an answer is read once it has come)."""

    def __init__(self, serves: tuple) -> None:
        """`serves`: what it reads as the library does, told once (read_worker.main)."""
        self.popen, self.connection = search_worker.spawn(_WORKER, ANSWERS_HELD)
        try:
            self.connection.send(serves)
        except Exception:
            self.end(kill=True)
            raise
        self.out: dict[int, object] = {}  # job number -> its group, not answered yet
        self.since = time.monotonic()  # when it last answered (or was given work while it had none)

    def send(self, number: int, session, paths: list[str]) -> None:
        if not self.out:
            self.since = time.monotonic()
        self.connection.send((number, paths))
        self.out[number] = session

    def end(self, kill: bool) -> None:
        """Tell it to stop (or kill it), and wait for it: a worker never outlives its pool."""
        with contextlib.suppress(OSError, ValueError):
            if not kill:
                self.connection.send(None)
        try:
            self.popen.wait(timeout=0 if kill else 2)
        except subprocess.TimeoutExpired:
            pass
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait()
        self.connection.close()


class ReadPool:
    """The worker processes of one Library (its groups' `pool`), started at the first read that wants them and never
    again once one failed. Used by the ingest thread only."""

    def __init__(self, library, processes: int, hang_after: float = HANG_AFTER, shares: bool = True) -> None:
        """`shares`: the ingest thread reads groups too while the workers read others (else it only takes theirs)."""
        self._library, self.process_count, self.hang_after, self.shares = library, processes, hang_after, shares
        self._serves: tuple = ()  # what a worker needs to read as this library does (`_start`)
        self._workers: list[_Worker] = []
        self._broken = processes <= 0 or library.cache is None  # what it hands back is a kept group: no cache, none
        self._numbers = itertools.count()
        self._orphans: deque = deque()  # groups a worker had when the workers were ended: read here next
        self.taken = self.left = 0  # groups read by a worker and taken, and left to the ingest thread (tests)

    def read(self, groups, keys: list) -> None:
        """Read the groups of `keys` (Groups.at), newest first: handed out to the workers while the ingest thread
        reads the next itself, each taken as its answer comes."""
        pending = deque(keys)
        wanted = len(keys) >= self._library.host.tuning.read_pool_from and not self._broken
        give_way, stopping = self._library.host.foreground.give_way, self._library.host.stopping
        while (pending or self._out() or self._orphans) and not stopping.is_set():
            self._collect(groups)
            while self._orphans:
                self.left += 1
                groups.read(self._orphans.popleft())
            while wanted and pending and self._room():
                self._read(groups, pending.popleft(), self._send)
            if pending and (self.shares or not self._out()):
                self._read(groups, pending.popleft())
            elif self._out():
                self._wait(groups)
            give_way()  # a request under way runs first

    def expect(self, groups: int) -> None:
        """A first read has found this many groups so far: the workers start once they will be wanted, while the walk
        goes on (each takes a fraction of a second to start); not on a restart taking them from the folder's entry."""
        cache = self._library.cache
        if groups == self._library.host.tuning.read_pool_from and cache is not None and cache.listed is None:
            self._start()

    def pids(self) -> list[int]:
        return [worker.popen.pid for worker in self._workers]

    def stop(self, kill: bool = False) -> None:
        self._broken = True
        workers, self._workers = self._workers, []
        for worker in workers:
            worker.end(kill)

    # --- inside ---------------------------------------------------------------------------------

    def _out(self) -> bool:
        return any(worker.out for worker in self._workers)

    def _room(self) -> bool:
        return not self._broken and (not self._workers or any(len(w.out) < AHEAD for w in self._workers))

    @staticmethod
    def _read(groups, key, elsewhere=None) -> None:
        session = groups.at(key)
        if session is not None:
            groups.read(session, elsewhere)

    def _send(self, session) -> bool:
        """Hand a group out to the least busy worker (Groups.read's `elsewhere`): whether it went."""
        if not self._settles_at_once(session) or not self._start():
            return False
        worker = min(self._workers, key=lambda w: len(w.out))
        try:
            worker.send(next(self._numbers), session, sorted(session.members))
        except (OSError, ValueError) as error:  # it died: this group is read here, with the rest
            self._fail(f"could not hand out a group: {error}")
            return False
        return True

    def _settles_at_once(self, session) -> bool:
        """Whether the group's files were left alone long enough that its first read settles it (else it is not kept:
        nothing for a worker to hand back), and are not too big for one answer."""
        settled_before = time.time() - self._library.host.tuning.settle_after - SETTLED_BY
        size = 0
        for path in session.members:
            try:
                st = os.lstat(path)
            except OSError:
                return False
            size += st.st_size
            if st.st_mtime > settled_before or size > MOST_BYTES:
                return False
        return True

    def _start(self) -> bool:
        if self._workers or self._broken:
            return not self._broken
        library, prices, rates = self._library, self._library.host.prices, self._library.host.rates
        self._serves = (library.root, library.follow_symlinks, library.host.tuning,
                        (prices.theirs, prices.as_of, prices.over, prices.catalog.source),
                        None if rates is None else (rates.folder, rates.version))
        try:
            for _ in range(self.process_count):
                self._workers.append(_Worker(self._serves))
            return True
        except Exception as error:
            self._fail(f"could not start: {error}")
            return False

    def _collect(self, groups) -> None:
        """Take every answer that has come."""
        for worker in list(self._workers):
            try:
                while worker.out and worker.connection.poll():
                    self._take(groups, worker, worker.connection.recv())
            except (EOFError, OSError, ValueError) as error:  # it died
                self._fail(f"a worker's pipe closed: {error or type(error).__name__}")
                return

    def _wait(self, groups) -> None:
        """Wait (without the GIL) for the next answer; the workers are ended when one gave none for `hang_after`."""
        busy = [worker for worker in self._workers if worker.out]
        oldest = min(worker.since for worker in busy)
        left = self.hang_after - (time.monotonic() - oldest)
        if left <= 0:
            self._fail(f"no answer for {self.hang_after:.0f} s")
            return
        from multiprocessing.connection import wait  # here, not at the top: a restart starts no worker

        wait([worker.connection for worker in busy], timeout=min(0.05, left))
        self._collect(groups)

    def _take(self, groups, worker: _Worker, answer) -> None:
        number, read, error = answer
        session = worker.out.pop(number)
        worker.since = time.monotonic()
        cache = self._library.cache
        if type(read) is tuple and groups.take(session, functools.partial(cache.take_group, session, read=read)):
            self._library.folder_words.take_words(session, read[6].split())
            self.taken += 1
            return
        self.left += 1
        log.debug("group %s read in-process: %s", session.relpath, error or read or "its files changed")
        groups.read(session)

    def _fail(self, why: str) -> None:
        """End every worker; the groups they had are read here (`read`), and all others from now on."""
        log.warning("read workers stopped (%s): reading in-process", why)
        self._orphans.extend(session for worker in self._workers for session in worker.out.values())
        self.stop(kill=True)


_WORKER = "viewer.library.read_worker"
