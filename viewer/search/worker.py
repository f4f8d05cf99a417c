"""The words of a big native file's search index, built in worker processes, on the other cores.

For a native session far behind (MIN_BEHIND events), the ingest thread hands runs of lines (their offsets) to worker
processes, which open the file themselves (checked as every read is) and post the words by the in-process rule;
the ingest thread merges the runs in order (`SearchIndex.take_run`). A run they cannot build is indexed in-process,
so the index is the same either way.
"""

from __future__ import annotations

import logging
import os
import queue
import socket
import subprocess
import sys
import threading
import weakref
from array import array
from typing import TYPE_CHECKING

from viewer.files.eventlist import parse_lines
from viewer.files.safe_open import open_regular

from . import index as search_index

if TYPE_CHECKING:  # imported by the functions that start or serve a worker: a restart starts none
    from multiprocessing.connection import Connection

log = logging.getLogger(__name__)

MIN_BEHIND = 16384  # events: a session less far behind is indexed in-process (a run there costs ~10 ms)
JOB_EVENTS = 512  # events per run: merging one holds the session's lock a few milliseconds
NICENESS = 10  # how far below the server's CPU priority the worker runs (see below_the_server)
IN_FLIGHT = 64  # runs handed out ahead per session (32k events): the workers never wait for the ingest thread
AHEAD = 2  # runs sent to a worker process beyond those it answered: it has the next at hand when it ends one
MAX_PROCESSES = 4  # worker processes at most (one a core)


# --- in the worker process --------------------------------------------------------------------

def main(fd: int) -> None:
    """The worker process: serve the server at the other end of the socket `fd`."""
    below_the_server()
    from multiprocessing.connection import Connection

    _serve(Connection(fd))


def below_the_server() -> None:
    """Lower the worker's CPU priority: on a busy machine its work waits, not the server's threads answering
    requests (each of which waits for a core several times a request: empty polls took 8-19 ms p95 while a
    big file was read beside the worker at the server's priority, 7-10 ms with it below)."""
    try:
        os.nice(NICENESS)
    except (AttributeError, OSError):  # not POSIX
        pass


def _serve(connection) -> None:
    """The worker: build each run asked for, in order, until told to stop (None) or the pipe closes."""
    opened: dict[tuple, int] = {}  # (path, identity) -> descriptor
    try:
        while True:
            job = connection.recv()
            if job is None:
                return
            number, path, inside, identity, start, offsets, lengths = job
            try:
                fd = opened.get((path, identity))
                if fd is None:
                    fd = _open(path, inside, identity)
                    for old in [k for k in opened if k[0] == path]:
                        os.close(opened.pop(old))
                    opened[(path, identity)] = fd
                answer = (number, _build(fd, start, array("q", offsets), array("I", lengths)), None)
            except Exception as error:  # the run is indexed in-process instead
                answer = (number, None, f"{type(error).__name__}: {error}")
            connection.send(answer)
    except (EOFError, OSError, KeyboardInterrupt):
        return


def _open(path: str, inside: str | None, identity: tuple[int, int]) -> int:
    fd = open_regular(path, inside)
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != tuple(identity):
        os.close(fd)
        raise OSError(f"{path} is no longer the file indexed")
    return fd


def _build(fd: int, start: int, offsets: array, lengths: array) -> tuple[dict, dict, list, list]:
    """The run's `search_index.run_postings`: all its events alone decide of what the index adds for them."""
    events = parse_lines(lambda offset, length: os.pread(fd, length, offset), offsets, lengths, start)
    return search_index.run_postings(events, start)


# --- in the server ------------------------------------------------------------------------------

def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def worker_count(available: int) -> int:
    """Worker processes to start on `available` cores: one a core, at most MAX_PROCESSES (on two cores, the second
    builds words once the file is read and the ingest thread's core is free; while it is read, both share the
    other core)."""
    return max(1, min(MAX_PROCESSES, available))


def spawn(serves: str, buffer: int | None = None) -> tuple[subprocess.Popen, Connection]:
    """A worker process running `main(fd)` of the module `serves` (this one's: search words; library.read_worker's:
    whole sessions read), and our end of the socket pair it talks over (`buffer`: bytes its answers may take
    there before it waits for us to read them)."""
    # A plain child process of this package's own code, talking over a socket pair: multiprocessing's spawn
    # would import the program's main module again (an unguarded script would start itself a second time).
    from multiprocessing.connection import Connection

    ours, theirs = socket.socketpair()
    try:
        if buffer is not None:
            theirs.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, buffer)
            ours.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, buffer)
        package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        popen = subprocess.Popen(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {package_parent!r}); "
                                   f"from {serves} import main; main({theirs.fileno()})"],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
    except Exception:
        ours.close()
        raise
    finally:
        theirs.close()
    return popen, Connection(ours.detach())


class _Process:
    """One worker process and the two threads that talk to it: runs go out and answers come in through threads of
    their own. The worker never waits to send an answer, so it always reads the next run; the ingest thread never
    waits to hand one out (sending the runs ahead from it blocked it on the full pipe a third of the time while a
    big file was read). A process is sent AHEAD runs more than it has answered: the others wait in the queue that
    all processes take from, for whichever is free first."""

    def __init__(self, jobs: queue.SimpleQueue, answers: queue.SimpleQueue) -> None:
        self.popen, self.connection = spawn(__name__)
        self.sent = self.answered = 0  # runs sent to it, and runs it answered (for tests)
        self._free = threading.Semaphore(AHEAD)  # runs it may be sent before it answers one
        self.reader = threading.Thread(target=self._read_answers, args=(answers,), name="agentview-search-answers",
                                       daemon=True)
        self.reader.start()
        self.sender = threading.Thread(target=self._send_jobs, args=(jobs, answers), name="agentview-search-runs",
                                       daemon=True)
        self.sender.start()

    def _send_jobs(self, jobs: queue.SimpleQueue, answers: queue.SimpleQueue) -> None:
        """Send it runs from the queue as it answers, until told to stop (None, sent on to the worker)."""
        while True:
            self._free.acquire()
            job = jobs.get()
            try:
                self.connection.send(job)
            except (OSError, ValueError) as error:  # the worker gone: the server indexes the rest
                log.info("search worker: could not hand out a run: %s", error)
                answers.put(None)
                return
            if job is None:
                return
            self.sent += 1

    def _read_answers(self, answers: queue.SimpleQueue) -> None:
        try:
            while True:
                answer = self.connection.recv()
                self.answered += 1
                answers.put(answer)
                self._free.release()
        except Exception:  # closed, or cut off mid-answer (the worker killed): the server indexes the rest
            answers.put(None)

    def let_go(self) -> None:
        """Let its sender take the stop that comes next, even with AHEAD runs unanswered."""
        self._free.release()

    def stop(self, kill: bool = False) -> None:
        """Wait for it to end (after the stop was sent), or end it."""
        if kill:
            self.popen.kill()
        self.sender.join(timeout=2)
        try:
            self.popen.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(timeout=2)
        self.reader.join(timeout=2)  # the pipe's end: at once, the process gone
        if not self.sender.is_alive() and not self.reader.is_alive():
            # else left open: a descriptor closed under a thread still using it may be another file's by then
            self.connection.close()


class _Run:
    __slots__ = ("number", "session", "search", "start", "stop", "built", "done")

    def __init__(self, number: int, s, start: int, stop: int) -> None:
        self.number, self.session, self.search = number, weakref.ref(s), s.search
        self.start, self.stop = start, stop
        self.built: tuple[dict, dict, list, list] | None = None  # see _build
        self.done = False  # answered (built None: build it in-process)

    def stale(self) -> bool:
        """For an index that is gone (the session forgotten or read again) or already past it."""
        s = self.session()
        return s is None or s.search is not self.search or self.search.indexed > self.start


class WordWorker:
    """The ingest thread's handle on the worker processes: started when first needed, restarted never (a worker
    that died leaves everything in-process). Used by one thread only (the ingest thread)."""

    def __init__(self, min_behind: int = MIN_BEHIND, job_events: int = JOB_EVENTS, processes: int | None = None,
                 available: int | None = None) -> None:
        """`available`: the cores it may use (Tuning.cores; None: those this process may run on)."""
        self.min_behind, self.job_events = min_behind, job_events
        available = cores() if available is None else available
        self.process_count = worker_count(available) if processes is None else processes
        # Whether a core is left beside the ingest thread and the workers: only then does the ingest thread do other
        # background work while they build (the facets took a core from two workers on two cores: the search was
        # complete seconds later).
        self.spares_a_core = self.process_count < available
        self._processes: list[_Process] = []
        self._broken = False
        self._runs: dict[int, _Run] = {}  # run number -> run, answered or not
        self._next = weakref.WeakKeyDictionary()  # search index -> the first of its events not handed out
        self._numbers = 0
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()  # runs handed out, for the first free process (None: stop)
        self._answers: queue.SimpleQueue = queue.SimpleQueue()  # (run number, what it built, error); None: a pipe closed
        self.merged = self.left = 0  # runs the worker built, and runs it left to the server (for tests, benchmarks)

    def step(self, s) -> bool | None:
        """Extend the session's search index by one run, if the worker has built it: True. None: the next run
        is being built (do something else meanwhile); False: not for the worker (index in-process)."""
        search = s.search
        if not self.wants(s):
            self._next.pop(search, None)
            return False
        self._collect()
        self._hand_out(s, search)
        run = next((r for r in self._runs.values() if r.search is search and r.start == search.indexed), None)
        if run is None:
            return False
        if not run.done:
            return None
        del self._runs[run.number]
        if run.built is None:  # this run in-process, a slice at a time (the next ones may come from the worker)
            self.left += 1
            while search.indexed < run.stop:
                search.catch_up(s.count, min(search.BATCH, run.stop - search.indexed))
            return True
        with s.lock:
            if s.search is search and search.indexed == run.start and s.count >= run.stop:
                search.take_run(s, run.start, run.stop, run.built)
                self.merged += 1
        return True

    def wait(self, seconds: float) -> None:
        """Wait (without the GIL) for the workers' next answer, at most `seconds`."""
        if self._processes and any(not run.done for run in self._runs.values()):
            try:
                self._take(self._answers.get(timeout=seconds))
            except queue.Empty:
                pass

    def stop(self) -> None:
        self._broken = True  # never started again: this handle is done
        processes, self._processes = self._processes, []
        self._end(processes)

    def pids(self) -> list[int]:
        return [process.popen.pid for process in self._processes]

    def wants(self, s) -> bool:
        """Whether the session's next events are for the worker: it is far behind, or runs are out for it."""
        search = s.search
        return not self._broken and (s.count - search.indexed >= self.min_behind
                                     or self._next.get(search, 0) > search.indexed)

    # --- inside ---------------------------------------------------------------------------------

    def _hand_out(self, s, search) -> None:
        """Hand out the next runs of the session's events, up to IN_FLIGHT ahead of the index."""
        for number in [n for n, r in self._runs.items() if r.stale()]:
            del self._runs[number]
        start = max(self._next.get(search, 0), search.indexed)
        limit = min(s.count, search.indexed + IN_FLIGHT * self.job_events)
        while start < limit and not self._broken:
            stop = min(start + self.job_events, s.count)
            if stop - start < self.job_events and s.count - search.indexed < self.min_behind:
                break  # a short run at the end of a session nearly caught up: in-process
            run = self._runs[self._numbers] = _Run(self._numbers, s, start, stop)
            self._numbers += 1
            spans = s.events.file_spans(start, stop)
            if spans is None or not self._start():
                run.done = True  # in-process
            else:
                source, offsets, lengths = spans
                self._jobs.put((run.number, source.path, source.inside, source.identity, start,
                                offsets.tobytes(), lengths.tobytes()))
            start = stop
        self._next[search] = start

    def _start(self) -> bool:
        if self._processes:
            return True
        if self._broken:
            return False
        try:
            for _ in range(self.process_count):
                self._processes.append(_Process(self._jobs, self._answers))
            return True
        except Exception as error:
            self._fail(f"could not start: {error}")
            return False

    def _collect(self) -> None:
        """Take every answer that has arrived."""
        while True:
            try:
                answer = self._answers.get_nowait()
            except queue.Empty:
                return
            self._take(answer)

    def _take(self, answer: tuple | None) -> None:
        if answer is None:
            if self._processes:
                self._fail("a worker's pipe closed")
            return
        number, built, error = answer
        run = self._runs.get(number)
        if error is not None:
            log.info("search worker: run %s left to the server: %s", number, error)
        if run is not None:
            run.built, run.done = built, True

    def _fail(self, why: str) -> None:
        log.warning("search worker stopped (%s): indexing in-process", why)
        self._broken = True  # everything in-process from now on
        self._runs.clear()
        processes, self._processes = self._processes, []
        self._end(processes, kill=True)

    def _end(self, processes: list[_Process], kill: bool = False) -> None:
        """Stop the processes: each sender takes a stop from the queue, emptied of the runs no process took."""
        while True:
            try:
                self._jobs.get_nowait()
            except queue.Empty:
                break
        for process in processes:
            self._jobs.put(None)
            process.let_go()
        for process in processes:
            process.stop(kill)
