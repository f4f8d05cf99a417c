"""Keep a Library in step with its folder: a watchdog observer plus one ingest thread."""

from __future__ import annotations

import logging
import os
import threading

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from .index import Library

log = logging.getLogger(__name__)


class _MarkDirty(FileSystemEventHandler):
    def __init__(self, watcher: "Watcher"):
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        if event.event_type == "moved":
            self.watcher.moved(os.fsdecode(event.src_path), os.fsdecode(event.dest_path), event.is_directory)
            return
        paths = [event.src_path, getattr(event, "dest_path", "")]
        for path in filter(None, (os.fsdecode(p) for p in paths)):
            self.watcher.mark(path, folder=event.is_directory)


class Watcher:
    """Watches a library's root; a single thread ingests the files that changed.

    The observer only marks paths dirty, so a burst of writes to one file costs one
    read of what was appended. The observer starts before the initial scan, so a file
    written during the scan is marked and read again (reads are idempotent).
    """

    def __init__(self, library: Library, polling: bool = False):
        self.library = library
        self._observer = PollingObserver(timeout=1.0) if polling else Observer()
        self._dirty: dict[str, bool] = {}  # path -> is a folder
        self._moves: list[tuple[str, str, bool]] = []  # (source, destination, is a folder), in order
        self._wake = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="agentview-ingest", daemon=True)
        self.ready = threading.Event()  # set once the initial scan is done

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
        self._observer.schedule(_MarkDirty(self), self.library.root, recursive=True)
        self._observer.start()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._observer.stop()
        with self._wake:
            self._stopping = True
            self._wake.notify()
        self._observer.join(timeout=5)
        self._thread.join(timeout=5)

    def _run(self) -> None:
        self._guarded(self.library.scan)
        self.ready.set()
        indexing = True  # search indexes catch up, a slice at a time, whenever no file waits
        while True:
            with self._wake:
                while not self._dirty and not self._stopping and not indexing:
                    self._wake.wait()
                if self._stopping:
                    return
                batch, self._dirty = self._dirty, {}
                moves, self._moves = self._moves, []
            if not batch and not moves:  # nothing to read: one slice of search indexing, then look again
                indexing = self._index_step()
                continue
            indexing = True
            for source, destination, folder in moves:
                self._guarded(self._move, source, destination, folder)
            for path, folder in batch.items():
                self._guarded(self._handle, path, folder)

    def _index_step(self) -> bool:
        """One slice of search indexing; False when every session's index is complete."""
        try:
            return self.library.index_step()
        except Exception:
            log.exception("search indexing failed")
            return False

    def _handle(self, path: str, folder: bool) -> None:
        if folder or os.path.isdir(path):
            if os.path.isdir(path):
                self.library.scan(path)
            else:
                self.library.forget_below(path)
        else:
            self.library.refresh(path)

    def _move(self, source: str, destination: str, folder: bool) -> None:
        if not folder:
            self.library.move(source, destination)
            return
        prefix = os.path.join(os.path.abspath(source), "")
        for path in self.library.paths_below(prefix):
            self.library.move(path, os.path.join(destination, path[len(prefix):]))

    @staticmethod
    def _guarded(action, *args) -> None:
        # One bad file must not stop the thread that tails all the others.
        try:
            action(*args)
        except Exception:
            log.exception("ingest failed for %s", args[0] if args else "the initial scan")
