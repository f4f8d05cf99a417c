"""Keep a Library in step with its folder: a watchdog observer plus one ingest thread, both kept alive."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import deque

from watchdog.events import (
    DirAttribEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirModifiedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, EventEmitter
from watchdog.observers.polling import PollingObserver

from viewer.search import worker as search_worker

from . import background
from .gone import GoneFiles, ListedLately, identity_of
from .library import Library

log = logging.getLogger(__name__)
HEALTH_EVERY = 1.0  # seconds between looks at the observer's threads (a dead one delivers nothing, silently)
RESTARTS = 3  # a dead observer is started again this many times; then the folder is walked on a timer instead
RESCAN_EVERY = 2.0  # seconds between walks of the folder when no observer can run
SWEEP_EVERY = 10.0  # seconds between walks of the folder while one runs (what it was slow to tell, or missed)...
SWEEP_SHARE = 0.01  # ... or longer, so that they take at most this share of a core (a big folder's walk costs more)
SWEEP_AT_MOST = 300.0  # ... but never longer than this
HOT_EVERY = 0.5  # seconds between looks at the files written lately, whatever the observer tells or fails to tell
HOT_FOR = 60.0  # seconds a file stays looked at so after the observer (or a walk) last told of a change to it
HOT_FILES = 64  # at most this many files looked at so: the latest written
POLL_EVERY = 1.0  # seconds between two snapshots of the folder, without OS events
# seconds the session of a file found gone is kept (GoneFiles): the rename that took it away may be told that much
# later (polling: with the next snapshot; OS events: at once, unless a look at the file came first)
GONE_FOR_POLLING, GONE_FOR = POLL_EVERY + 0.5, 0.5


# What the observer asks the kernel to tell: changes, not a file opened or closed unwritten. Every read of a session
# file (the viewer's own first of all: thousands of files opened at a start) would be two events more for watchdog's
# threads to take apart in Python, holding the GIL while the folder is read and the pages wait.
# A file's or folder's mode changed (chmod) is heard too: one that could not be read is read once it can be.
HEARD = [FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent, FileClosedEvent, FileAttribEvent,
         DirCreatedEvent, DirModifiedEvent, DirDeletedEvent, DirMovedEvent, DirAttribEvent]


class _MarkDirty(FileSystemEventHandler):
    def __init__(self, watcher: "Watcher"):
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type == "moved":
            self.watcher.moved(os.fsdecode(event.src_path), os.fsdecode(event.dest_path), event.is_directory)
            return
        paths = [event.src_path, getattr(event, "dest_path", "")]
        for path in filter(None, (os.fsdecode(p) for p in paths)):
            self.watcher.mark(path, folder=event.is_directory)


class Watcher:
    """Watches a library's root; a single thread ingests the files that changed.

    The observer only marks paths dirty, so a burst of writes to one file costs one
    read of what was appended. It starts once the initial scan is over, on a thread of its own: its
    watches list every folder again (a second of a cold disk for 10,000 folders), and the scan does
    not wait for them. A watch added after a listing is followed by a listing: once an observer runs,
    the folder is walked again, so a file changed between the scan and its folder's watch is read too.

    One refresh reads at most one slice of a file (Library.slices_per_read): a big file is read
    a slice per turn, in turn with every other file that changed, so it never holds them up.

    Nothing stops the watching silently: the ingest thread survives any exception (and is started
    again by `ensure_alive` if it died anyway); an observer that cannot start or whose threads died
    (watchdog's recursive walk fails on a folder about 1,000 levels deep) is started again, and
    after RESTARTS tries the folder is walked every RESCAN_EVERY seconds instead. Each of these is
    reported on the library's problems, shown on `/`. With an observer, the folder is still walked every
    SWEEP_EVERY seconds, or as seldom as keeps it to SWEEP_SHARE of a core (0.2 s of CPU for 3,000 files):
    watchdog can fall minutes behind on a deep folder tree growing under it, and a network mount may drop events.

    Sessions being written do not wait for any of that: the files written lately are looked at every
    HOT_EVERY seconds (a stat each when nothing changed), and an observer is started again on a thread of
    its own (each try walks the whole folder tree: a second for a folder 1,000 deep), while the ingest
    thread walks the folder every RESCAN_EVERY seconds until one runs.
    """

    def __init__(self, library: Library, polling: bool = False):
        self.library = library
        self.library.slices_per_read = 1
        self._polling = polling
        self._observer: Observer | PollingObserver | None = None
        self._observer_threads: list[threading.Thread] = []  # what it runs on (see _start_observer)
        self._observer_kinds: set[str] = set()  # the kinds of thread the first one ran on
        self._restarts = 0
        self._starter: threading.Thread | None = None  # starts an observer (again), off the ingest thread
        self._rescanning = False  # no observer, for good: the folder is walked on a timer
        self._next_look = 0.0  # monotonic time of the next health look
        self._last_walk = time.monotonic()  # ... and of the last walk of the whole folder
        self._sweep_every = SWEEP_EVERY  # seconds to the next walk while an observer runs (see _swept)
        self._hot: dict[str, float] = {}  # file -> when a change to it was last told (monotonic), oldest first
        self._when_idle: deque = deque()  # what to do, one at a time, once no file and no index waits (when_idle)
        self._next_hot = 0.0  # monotonic time of the next look at them
        self._dirty: dict[str, bool] = {}  # path -> is a folder
        self._moves: list[tuple[str, str, bool]] = []  # (source, destination, is a folder), in order
        self.gone = GoneFiles(GONE_FOR_POLLING if polling else GONE_FOR)
        self._listed_lately = ListedLately(HOT_FILES)
        self._wake = threading.Condition()
        self._stopping = False
        self._thread = self._new_thread()
        self.ready = threading.Event()  # set once the initial scan is done
        self.watching = threading.Event()  # ... and once an observer first runs (its watches added after the scan)
        # builds big sessions' search words in other processes, on the cores the app may use
        self.words = search_worker.WordWorker(available=library.host.tuning.cores)
        self._give_way = library.host.foreground.give_way  # between two steps: a request under way runs first

    def _new_thread(self) -> threading.Thread:
        return threading.Thread(target=self._run, name="agentview-ingest", daemon=True)

    def mark(self, path: str, folder: bool = False) -> None:
        with self._wake:
            self._dirty[path] = self._dirty.get(path, False) or folder
            self._wake.notify()

    def moved(self, source: str, destination: str, folder: bool = False) -> None:
        """A rename: the session keeps its index; both paths are looked at again afterwards."""
        with self._wake:
            self._moves.append((source, destination, folder))
            self._dirty.setdefault(source, folder)
            self._dirty[destination] = self._dirty.get(destination, False) or folder
            self._wake.notify()

    def start(self) -> "Watcher":
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify()
        starter = self._starter
        if starter is not None:
            starter.join(timeout=10)  # it may be starting an observer: stopped below
        observer = self._observer
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)
        self._thread.join(timeout=5)
        self.words.stop()

    def ensure_alive(self) -> None:
        """Start the ingest thread again if it died (called by the sessions page: cheap when it is alive)."""
        if self._thread.is_alive() or self._stopping or not self._thread.ident:
            return
        with self._wake:
            if self._thread.is_alive() or self._stopping:
                return
            self._report("ingest_restarted", "the thread reading the folder had stopped: started again")
            self._thread = self._new_thread()
            self._thread.start()

    # --- the observer ------------------------------------------------------------------------

    def _start_observer(self) -> str | None:
        """Start an observer; why it could not (None when it runs)."""
        observer = PollingObserver(timeout=POLL_EVERY) if self._polling else Observer()
        try:
            observer.schedule(_MarkDirty(self), self.library.root, recursive=True, event_filter=HEARD)
            observer.start()
        except Exception as error:  # e.g. RecursionError: watchdog walks the folder tree recursively
            with contextlib.suppress(Exception):
                observer.stop()
            return f"could not start ({type(error).__name__}: {error})"
        # Every watchdog thread it runs on: the observer, its emitters, and threads they share with other
        # observers (inotify's one reader of the kernel's events: when it dies, its emitters live on, deaf).
        threads = [observer, *observer.emitters, *(
            t for t in threading.enumerate() if type(t).__module__.startswith("watchdog.")
            and not isinstance(t, (BaseObserver, EventEmitter)))]  # other observers' own threads are not ours
        kinds = {type(t).__name__ for t in threads}
        if self._observer_kinds and not self._observer_kinds <= kinds:
            # a shared thread died and was not started again for it: this observer would hear nothing
            with contextlib.suppress(Exception):
                observer.stop()
            return f"could not start again (no {', '.join(sorted(self._observer_kinds - kinds))})"
        self._observer, self._observer_threads = observer, threads
        self._observer_kinds = self._observer_kinds or kinds
        with self._wake:  # walk now: what changed before its watches were added was not told
            self._last_walk = float("-inf")
            self._wake.notify()
        self.watching.set()
        return None

    def _observer_alive(self) -> bool:
        return self._observer is not None and all(t.is_alive() for t in self._observer_threads)

    def _observer_failed(self, why: str) -> None:
        self._observer = None
        self._start_aside(why)

    def _start_aside(self, why: str | None) -> None:
        """Start an observer (again, `why` the last could not run) on a thread of its own, so that the ingest thread
        reads on meanwhile."""
        with self._wake:  # not once stop() has looked for that thread
            if not self._stopping and (self._starter is None or not self._starter.is_alive()):
                self._starter = threading.Thread(target=self._start_until_running, args=(why,), name="agentview-watch-start",
                                                 daemon=True)
                self._starter.start()

    def _start_until_running(self, why: str | None) -> None:
        """Start it (None: for the first time), again up to RESTARTS times; then walk the folder on a timer."""
        if why is None and not self._stopping:
            why = self._start_observer()
        while why is not None and not self._stopping:
            if self._restarts >= RESTARTS:
                self._rescanning = True
                self._report("watcher_failed", f"the folder watcher {why}: the folder is now read again every "
                                               f"{RESCAN_EVERY:g} s instead (changes show up a little later)")
                return
            self._restarts += 1
            self._report("watcher_restarted", f"the folder watcher {why}: started again "
                                              f"({self._restarts} of {RESTARTS}) and the folder read again")
            why = self._start_observer()

    def _look(self) -> None:
        """Every HEALTH_EVERY seconds: a dead observer is replaced. The folder is walked again every
        RESCAN_EVERY seconds without one, and every SWEEP_EVERY seconds with one (a safety net: watchdog
        can fall behind for minutes on a deep folder tree growing under it). The files written lately are
        looked at every HOT_EVERY seconds."""
        now = time.monotonic()
        if not self._rescanning and now >= self._next_look:
            self._next_look = now + HEALTH_EVERY
            if self._observer is not None and not self._observer_alive():
                observer = self._observer
                with contextlib.suppress(Exception):
                    observer.stop()
                self._observer_failed("stopped")
                self._last_walk = -SWEEP_EVERY  # walk now: what changed while nothing was watching
        if now >= self._last_walk + (self._sweep_every if self._observer_alive() else RESCAN_EVERY):
            self._last_walk = now
            started = time.thread_time()
            self._walk_again()
            self._swept(time.thread_time() - started)
        if self._hot and now >= self._next_hot:
            self._next_hot = now + HOT_EVERY
            self._look_at_hot(now)
        for path in self.gone.due():  # still gone: forgotten now (else read again)
            self.mark(path)

    def _written(self, path: str) -> None:
        """A change to a file was told: it is looked at every HOT_EVERY seconds for a while."""
        self._hot.pop(path, None)
        self._hot[path] = time.monotonic()
        if len(self._hot) > HOT_FILES:
            del self._hot[next(iter(self._hot))]

    def _look_at_hot(self, now: float) -> None:
        for path, told in list(self._hot.items()):
            if now - told > HOT_FOR or not os.path.lexists(path):  # a file gone is the observer's to tell:
                del self._hot[path]  # it may have been moved, and its session must follow it, not be forgotten
            else:
                self._guarded(self.library.refresh, path)
        self._requeue_unfinished()

    def _wait_for_work(self) -> float:
        """How long the idle ingest thread may wait: the observer is looked at now and then, hot files often."""
        wait, now = HEALTH_EVERY, time.monotonic()
        if self._hot:
            wait = min(wait, self._next_hot - now)
        if (due := self.gone.next_due()) is not None:
            wait = min(wait, due - now)
        return max(0.0, wait)

    def _swept(self, cpu: float) -> None:
        """A walk of the folder took `cpu` seconds of this thread: the next waits long enough to keep the walks
        within SWEEP_SHARE of a core (a restart's first scan, a walk too, sets the first wait)."""
        self._sweep_every = background.spaced(cpu, SWEEP_EVERY, SWEEP_SHARE, SWEEP_AT_MOST)

    def _walk_again(self) -> None:
        """Read every file again (idle ones cost a stat), find new ones, and forget the ones gone. Without an
        observer, the files written lately become hot, as the observer's telling would make them: their next lines
        show within HOT_EVERY seconds, not at the next walk."""
        lately, recent, gone = time.time() - HOT_FOR, [], {}
        for path in self.library.paths_below(self.library.root):
            try:
                written = os.stat(path).st_mtime  # the file's, where a symlink leads: the link's own never changes
            except OSError:
                if not os.path.lexists(path):  # a symlink leading nowhere is kept (its refresh says why)
                    self.mark(path)  # its refresh forgets it
                    if (identity := self.library.identity_at(path)) is not None:
                        gone[identity] = path
                continue
            if self._rescanning and written >= lately:
                recent.append((written, path))
        for _, path in sorted(recent):  # the latest written last: the ones kept when more than HOT_FILES were
            self._written(path)
        self.library.forget_gone_folders()
        self._scan(gone=gone)
        self._requeue_unfinished()

    # --- the ingest thread ---------------------------------------------------------------------

    def _run(self) -> None:
        started = time.thread_time()
        self._guarded(self.library.scan)
        self._swept(time.thread_time() - started)
        self._last_walk = time.monotonic()
        self._requeue_unfinished()
        self.ready.set()
        if self._observer is None and not self._rescanning:  # (not when this thread is started again)
            self._start_aside(None)
        indexing = True  # search indexes catch up, a slice at a time, whenever no file waits
        give_way = self._give_way
        while True:
            give_way()  # between two steps of work: a request under way runs first
            try:
                finished, indexing = self._step(indexing)
            except Exception as error:  # one bad turn must not end the thread that reads every file
                log.exception("ingest failed")
                self._report("ingest_failed", f"{type(error).__name__}: {error}")
                finished, indexing = False, True
            if finished:
                return

    def _step(self, indexing: bool) -> tuple[bool, bool]:
        """One turn: read what changed (a slice of each file), else index a slice; (stopping, still indexing)."""
        with self._wake:
            if not self._dirty and not self._stopping and not indexing:
                self._wake.wait(self._wait_for_work())
            if self._stopping:
                return True, indexing
            batch, self._dirty = self._dirty, {}
            moves, self._moves = self._moves, []
        self._look()
        if not batch and not moves:  # nothing to read: one slice of search indexing, then look again
            return False, self._index_step()
        for source, destination, folder in moves:
            self._guarded(self._move, source, destination, folder)
        for path, folder in batch.items():
            self._guarded(self._handle, path, folder)
        self._guarded(background.merge_words, self.library, self.words)
        self._requeue_unfinished()
        return False, True

    def _requeue_unfinished(self) -> None:
        """Files read only in part go to the back of the queue: everything else that changed is read first."""
        for path in self.library.take_unfinished():
            self.mark(path)

    def when_idle(self, *actions) -> None:
        """Call each of `actions` on the ingest thread, one a step, once nothing else is left to do."""
        self._when_idle.extend(actions)

    def _index_step(self) -> bool:
        """One step of background work (search indexing, then the cache, then what waits for idle time); False when
        none is left."""
        try:
            if background.step(self.library, self.words):
                return True
            if self._when_idle:
                self._when_idle.popleft()()
                return True
            return False
        except Exception:
            log.exception("background work failed")
            return False

    def _handle(self, path: str, folder: bool) -> None:
        if folder or os.path.isdir(path):
            if os.path.isdir(path):
                self._scan(path)
            else:
                self.library.forget_below(path, kept=self._kept_gone)
        elif not self._kept_gone(path):
            self.gone.back(path)
            if self.library.is_session_file(path):
                self._written(path)
            listed = self.library.session_at(os.path.abspath(path)) is not None
            self.library.refresh(path)
            if not listed:
                self._listed_anew([os.path.abspath(path)])

    def _scan(self, folder: str | None = None, gone: dict | None = None) -> None:
        """Library.scan of a folder (None: the whole), the files it lists anew followed as any the watcher lists."""
        below = os.path.join(os.path.abspath(self.library.root if folder is None else folder), "")
        self._listed_anew([path for path in self.library.scan(folder) if path.startswith(below)], gone)

    def _listed_anew(self, paths: list[str], gone: dict | None = None) -> None:
        """Files listed anew: one that is a file listed lately, moved (ListedLately), or one of `gone` ({identity:
        path} of listed files a walk found gone: moved while no observer told of it), takes its session along."""
        for path in paths:
            earlier = self._listed_lately.moved_from(path) if self.library.session_at(path) is not None else None
            if earlier is None and gone:
                earlier = gone.pop(identity_of(path), None)
            if earlier is not None and self.library.session_at(earlier) is not None:
                self.gone.back(earlier)
                self.library.move(earlier, path)

    def _kept_gone(self, path: str) -> bool:
        """Whether `path` is a listed session's file found gone, kept a while for the move that may follow."""
        return (not os.path.lexists(path) and self.library.session_at(os.path.abspath(path)) is not None
                and self.gone.keep(path))

    def _move(self, source: str, destination: str, folder: bool) -> None:
        if not folder:
            self.gone.back(source)
            self.library.move(source, destination)
            return
        prefix = os.path.join(os.path.abspath(source), "")
        for path in self.library.paths_below(prefix):
            self.gone.back(path)
            self.library.move(path, os.path.join(destination, path[len(prefix):]))

    def _report(self, kind: str, detail: str) -> None:
        log.warning("%s: %s", kind, detail)
        self.library.folder_problem(kind, ".", detail)

    @staticmethod
    def _guarded(action, *args) -> None:
        # One bad file must not stop the thread that tails all the others.
        try:
            action(*args)
        except Exception:
            log.exception("ingest failed for %s", args[0] if args else "the initial scan")
