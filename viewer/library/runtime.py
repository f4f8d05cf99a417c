"""One running app's machinery, owned in one place: the Library and its ingest thread and watcher, the search
worker processes, what is kept between requests, the requests under way, the collector's pauses and the
interpreter settings serving needs. `close` undoes all of it; two apps in one process each have their own.

`create_app` makes one (and closes it when the app is closed); the layers below get what they need from its
`host` through their constructors, never from module state.
"""

from __future__ import annotations

import os
import sys
import warnings

from viewer.core import pricing
from viewer.core.host import Host
from viewer.core.bounded_map import BoundedMap
from viewer.core.tuning import Tuning
from viewer.search import count as search_count
from viewer.search.cursor_names import CursorNames
from viewer.store import kept_rates, session_cache

from . import read_pool
from .library import Library
from .read_pool import ReadPool
from .watcher import Watcher

# The ingest thread runs Python nonstop while a big folder is read and indexed. A request thread that waits for the
# GIL (after every read or write of its socket) gets it when the interpreter switches, every 5 ms by default: a poll
# that waits a handful of times takes tens of ms. Switching this often costs the ingest a little and keeps each
# wait short.
SWITCH_INTERVAL = 0.0005  # seconds
# watchdog warns "Callback with id ... already exists" each time it re-walks a folder tree growing under it,
# printing every watched path in the message: megabytes per warning, quadratic in a deep tree's depth.
WATCHDOG_WARNING = {"message": "Callback with id", "category": RuntimeWarning, "module": "watchdog"}


class Runtime:
    """Serves `root` (see create_app for the options); with `watch`, kept live by a Watcher started now, else
    scanned once. Use as a context manager, or call `close`."""

    def __init__(self, root: str | os.PathLike, *, watch: bool = True, polling: bool = False,
                 follow_symlinks: bool = False, cache_dir: str | None = None, tuning: Tuning | None = None,
                 prices: pricing.Prices | None = None) -> None:
        self.host = Host(tuning, prices)
        self.tuning = self.host.tuning
        self.foreground = self.host.foreground  # the requests under way: the web layer counts them here
        self.counts = search_count.counts()  # how far search totals got, for the next page
        self.cursor_names = CursorNames()  # long search cursors, kept under short names the answers carry
        self._kept: list[BoundedMap] = [self.counts, self.cursor_names.kept]  # kept between requests: emptied by close
        self._switch_interval: tuple[float, float] | None = None  # (found, set) while lowered
        self._warning_filter: tuple | None = None
        self._on_close: list = []  # what the app asked to be done when this closes
        self.closed = False
        cache = session_cache.for_folder(cache_dir, root, self.host)
        rates = kept_rates.in_folder(cache.folder) if cache is not None else None
        if rates is not None:
            self.host.keep_rates(rates)
        self.library = Library(root, follow_symlinks=follow_symlinks, cache=cache, host=self.host)
        self.library.groups.pool = ReadPool(self.library, read_pool.process_count(self.tuning))
        self.watcher: Watcher | None = None
        if watch:
            self._lower_switch_interval()
            self._quiet_watchdog()
            self.watcher = Watcher(self.library, polling=polling).start()
        else:
            self.library.scan()

    def keep(self, kept: BoundedMap) -> BoundedMap:
        """Something the layers above keep between requests (snapshots, drawn trees): emptied when this closes."""
        self._kept.append(kept)
        return kept

    def when_idle(self, *actions) -> None:
        """Call each of `actions` on the ingest thread once it has nothing else to do (nothing when not watching)."""
        if self.watcher is not None:
            self.watcher.when_idle(*actions)

    def on_close(self, action) -> None:
        """Call `action()` when this closes (after everything else is stopped)."""
        self._on_close.append(action)

    def close(self) -> None:
        """Stop the ingest thread, the watcher and the worker processes; drop what was kept; give the interpreter
        back its settings and the collector as it was found. Idempotent."""
        if self.closed:
            return
        self.closed = True
        self.host.stopping.set()
        if self.watcher is not None:
            self.watcher.stop()
        self.library.groups.pool.stop()
        if self.library.cache is not None:  # sessions a first read held for a pack: else read again at the next start
            self.library.cache.flush()
        for kept in self._kept:
            kept.clear()
        self._restore_switch_interval()
        self._unquiet_watchdog()
        self.host.close()
        for action in self._on_close:
            action()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- interpreter settings: each is put back only if nobody changed it meanwhile (another app may have) --------

    def _lower_switch_interval(self) -> None:
        found = sys.getswitchinterval()
        sys.setswitchinterval(min(found, SWITCH_INTERVAL))
        self._switch_interval = (found, sys.getswitchinterval())

    def _restore_switch_interval(self) -> None:
        if self._switch_interval is not None:
            found, lowered = self._switch_interval
            if sys.getswitchinterval() == lowered:
                sys.setswitchinterval(found)
            self._switch_interval = None

    def _quiet_watchdog(self) -> None:
        warnings.filterwarnings("ignore", **WATCHDOG_WARNING)
        self._warning_filter = warnings.filters[0]

    def _unquiet_watchdog(self) -> None:
        if self._warning_filter is not None:
            try:
                warnings.filters.remove(self._warning_filter)
            except ValueError:  # already gone (warnings.resetwarnings)
                pass
            self._warning_filter = None
