"""The Library: every session below a folder, keyed by its stable id, kept in step with the files.

It decides which file is which session (ids, multi-file groups, renames, files it may not read); reading bytes is
the readers' job (reading), recognizing a file the formats', and indexing a session's events SessionIndex's.
"""

from __future__ import annotations

import contextlib
import logging
import operator
import os
import stat
import threading
import time
from collections import deque

from viewer import formats
from viewer.core import lockorder
from viewer.core.gcpause import FREEZE_AFTER
from viewer.core.host import Host
from viewer.core.problems import Problem
from viewer.files.safe_open import open_regular, refused_path
from viewer.files.tailer import FileTailer
from viewer.files.whole_file import GzipReader
from viewer.formats import detect
from viewer.formats.base import refusal
from viewer.formats.detect import GZIP_SUFFIX
from viewer.index import sleeping
from viewer.index.session_ids import session_id_for, session_name, shown
from viewer.index.session_index import SessionIndex
from viewer.search.folder_words import FolderWords
from viewer.store import folder_cache
from viewer.store.session_cache import SessionCache

from .folders import Folders, file_stat
from .groups import Groups
from .listed import ListedFiles
from .reading import not_read_yet, read_so_far, reader_for
from .stores import Stores

log = logging.getLogger(__name__)
_relpath = operator.attrgetter("relpath")  # what the listing is sorted by


class Library:
    """Every session below a folder, keyed by its stable id.

    Only regular files inside the folder are read, checked on the descriptor opened (safe_open): a FIFO, a device,
    a file a symlink leads to outside the folder (unless `follow_symlinks` is set) or one this user may not read is
    listed with a problem and 0 events, and never read. What stops a folder being read (permission, depth) is listed
    in `problems`, not silently left out (see Folders).

    It holds the walk of the folder (`folders`: Folders) and the sessions of several files (`groups`: Groups);
    `lock` guards what it lists (`sessions`, `aliases`, the files and their readers) and `version`.
    `host`: what its sessions share with the app serving them (its runtime's; one of its own by default).
    """

    is_session_file = staticmethod(detect.is_session_file)

    def __init__(self, root: str | os.PathLike, follow_symlinks: bool = False, cache: SessionCache | None = None,
                 host: Host | None = None, hands_over: bool = False):
        self.host = host if host is not None else cache.host if cache is not None else Host()
        self.lock = lockorder.ordered(threading.Lock(), lockorder.LIBRARY, "library")
        self.version = 0  # bumped on every change; the sessions list polls it
        self.rows_changed_at = 0  # the version of the last change not told of one session (bump)
        self.bumps: deque = deque(maxlen=4096)  # (version, session) of the last bumps of one: what changed since
        self.folders = Folders(root, follow_symlinks, self.changed)
        self.root, self.real_root, self.follow_symlinks = self.folders.root, self.folders.real_root, follow_symlinks
        self.inside = self.folders.inside  # the folder every file read must really lie in (safe_open); None: anywhere
        self.relpath = self.folders.relpath
        self.folder_problem = self.folders.folder_problem
        self.forget_gone_folders = self.folders.forget_gone_folders
        self.cache = cache  # sessions kept between runs (None: every start reads every file)
        self.hands_over = hands_over  # what it reads is handed to another process, not kept (a read worker's)
        self._folder_words = FolderWords()  # which sessions hold a word, without a cache (see folder_words)
        self.sessions: dict[str, SessionIndex] = {}
        self.aliases: dict[str, str] = {}  # id of a renamed session -> its id now
        self._tailers: dict[str, FileTailer | GzipReader] = {}  # readers of the files of one session each
        self._by_path = ListedFiles()  # every file -> its session
        self.groups = Groups(self)
        self.keep, self.settle, self.settle_quiet = self.groups.keep, self.groups.settle, self.groups.settle_quiet
        # id -> epoch of the session just dropped under it (refused, or readable again): its successor's is later
        self._replaced_epochs: dict[str, int] = {}
        # How many Tuning.batch_bytes slices one refresh reads of a file (None: to its end). The watcher sets 1 so one big
        # file never holds up the others; the files left unfinished wait in `unfinished` for their next turn.
        self.slices_per_read: int | None = None
        self.unfinished: set[str] = set()
        self.indexing_from = 0  # where background indexing last found work (background.index_step)
        self.searched_at = -1  # the version at which every search index was last found complete (the same)
        self.faceted_at = -1  # ... and every session's facets
        self.look_after = float("-inf")  # when background work looks again for sessions to settle or save (background)
        self._reading: dict[str, FileTailer | GzipReader] = {}  # files read part way, for pages that say how far (progress)
        self._scanned = False  # the first scan of DIR is over
        self.stores = Stores(self)

    def scan(self, folder: str | None = None) -> list[str]:
        """Read every session file below a folder (idempotent: known files are tailed); the files it listed that were
        not listed before, in order. The first scan of DIR takes what the cache listed of it (folder_cache)."""
        walking = folder is None and not self._scanned  # the first walk of DIR
        first = walking and self.cache is not None
        if first:
            with self.host.gc.batch(kept=True) as made:  # the folder's entry: its rows become the restored groups'
                self.cache.read_listed(self._folder_key)
                made["added"] = len(self.cache.listed or ())
        # A restart taking thousands of sessions from the cache makes their objects in about a second, all to be
        # kept: the cyclic collector would walk them again and again meanwhile (40% of that second). A first walk
        # without them makes an empty session for each group it finds, to be kept as well (half of its CPU).
        listing = first and self.cache.listed is not None
        # A restart's pause spans the groups read after the walk too; a cold walk's pause ends before them (each
        # group read then pauses the collector itself: Groups.read)
        restored = self.host.gc.batch(kept=True) if listing else contextlib.nullcontext({})
        walked = self.host.gc.batch(kept=True) if walking and not listing else contextlib.nullcontext({})
        try:
            with self._by_path.noting() as anew, restored as made, self.groups.read_after(), walked as made_walking:
                for entry in self.folders.walk(folder, first=walking and not listing):  # a restart opens no file
                    try:
                        self.refresh(entry.path, entry)
                    except Exception:  # one unreadable file must not hide the others
                        log.exception("could not read %s", entry.path)
                made["added"] = made_walking["added"] = len(self._by_path)
        finally:
            if walking:
                self._scanned = True
            if first:
                self.cache.done_listing()
        return anew

    def refresh(self, path: str, entry: os.DirEntry | None = None) -> None:
        """Ingest whatever was appended to one file since the last call. A file that may not or cannot be read is
        listed with a problem instead (see `refuse`), until it goes away or can be read: then it is read like any
        other. `entry`: the walk's of the session file at `path` (Folders.walk), whose stat is the one taken for it."""
        path = os.path.abspath(path) if entry is None else path  # a walk's paths are absolute already
        store = detect.store_file(path)  # a database, its write-ahead log, a document of a storage folder
        if store is not None:
            self.stores.refresh(store, path)
            return
        if entry is None and not self.is_session_file(path):
            self.groups.sidecar_changed(path)
            return
        if (found := file_stat(path, entry)) is None:  # nothing there, or a folder
            self.forget(path)
            return
        # the walk's stat is the file's own when no symlink is there (else `found` is its target's): taken for the
        # checks of its first open
        own = found if entry is not None and not stat.S_ISLNK(entry.stat(follow_symlinks=False).st_mode) else None
        try:
            self._refresh(path, found.st_mtime_ns, own)
        except formats.NOT_READABLE as error:
            self.refuse(refused_path(error, path), error)
        except FileNotFoundError:  # gone while it was looked at
            self.forget(path)

    def _refresh(self, path: str, written: int, own: os.stat_result | None = None) -> None:
        session = self._by_path.get(path)
        if session is not None and session.format is formats.NOT_READ:  # listed unread: readable now?
            os.close(open_regular(path, self.inside))  # raises while it is not
            self._drop(path, session, session.id)
            session = None
        if session is not None and session.members:
            self.groups.read(session)
            return
        if session is not None and session.count == 0 and (
                not session.format_settled or session.format is formats.UNRECOGNIZED):
            fmt, _, group = detect.classify(path, self.inside)
            if fmt is not session.format or group is not None:  # its first line arrived: now we can tell
                self.forget(path)
                session = None
        new = session is None
        if new:
            fmt, reason, group = self._classify(path, own)
            if group is not None:
                self.groups.join(path, fmt, group, written)
                return
            session = self._session_of(path, fmt, reason)
            self._tailers[path] = self.reader(path, self.host.tuning.batch_bytes)
            session = self._kept(path, session)
        tailer = self._tailers[path]
        changed = False
        slices = self.slices_per_read
        while True:  # a big file in batches of Tuning.batch_bytes: the lines read wait in memory one batch at a time
            result = tailer.read()
            if result.restarted:
                session.restart()
            if result.lines and session.format is formats.UNRECOGNIZED and detect.is_document(path):
                pass  # a JSON document of no known shape: listed with the reason, not read as lines
            elif result.lines and session.reads_records:
                session.ingest_records([({"rel": session.relpath}, result.lines)])
            elif result.lines:
                session.ingest(result.lines, result.source)
            if result.error:
                session.file_problem(result.error)
            session.reader_problems(result.problems, result.withdrawn)
            changed = changed or bool(result.lines or result.restarted or result.error or result.problems
                                      or result.withdrawn)
            if not result.more:
                break
            if slices is not None:
                slices -= 1
                if slices <= 0:  # the rest of a big file waits its turn: other files are read meanwhile
                    with self.lock:
                        self.unfinished.add(path)
                        self._reading[path] = tailer
                    break
            del result  # its lines are indexed: free them before reading the next batch
        if not result.more and path in self._reading:
            with self.lock:
                self._reading.pop(path, None)
        if changed or new:
            session.updated_at = result.modified_at
            if new:  # listed once read: nobody sees it empty while its lines are on their way
                self._list(path, session)
            else:
                self.changed(session)

    def _classify(self, path: str, own: os.stat_result | None) -> tuple[formats.Format, str, dict | None]:
        """A new file's format (detect.classify; `own`: its stat, as a walk made it), or what the cache listed of it
        while a restart's first scan reads its folder's entry and the file is as it was (folder_cache)."""
        listed = self.cache.listed if self.cache is not None else None
        known = listed.classified(path, own) if listed is not None else None
        return known if known is not None else detect.classify(path, self.inside, self.groups.format_at, own)

    def _kept(self, path: str, session: SessionIndex) -> SessionIndex:
        """The session as the cache kept it (its tailer set to read what came after), else `session`."""
        tailer = self._tailers[path]
        if self.cache is None or session.format is not formats.NATIVE or not isinstance(tailer, FileTailer):
            return session
        kept = self.cache.restore(path, session.id, self.relpath(path), self.inside, tailer)
        return session if kept is None else kept

    def reader(self, path: str, limit: int | None = None) -> FileTailer | GzipReader:
        """The reader of a session file of this folder, within the app's limits (reading.reader_for)."""
        return reader_for(path, limit, inside=self.inside, limits=self.host.tuning.limits, tuning=self.host.tuning,
                          files=self.host.files)

    def _session_of(self, path: str, fmt: formats.Format = formats.NATIVE, reason: str = "") -> SessionIndex:
        """A new, empty index of the session file at `path`, of the format its content shows."""
        relpath = self.relpath(path)
        name = shown(detect.document_name(path)) if detect.is_document(path) else None
        return SessionIndex(session_id_for(relpath), path, relpath, fmt, reason, name, self.host)

    def _list(self, path: str, session: SessionIndex) -> None:
        self._continue_epoch(session)
        with self.lock:
            self._by_path[path] = session
            self.groups.name_at(path)  # a group named like this file gives way
            self.sessions[session.id] = session
            self.aliases.pop(session.id, None)
            self.bump(session)

    def _continue_epoch(self, session: SessionIndex) -> None:
        """A session listed in place of one dropped under its id starts a later epoch: a page polling with
        the dropped one's cursor reloads instead of taking the new events for more of the old ones."""
        dropped = self._replaced_epochs.pop(session.id, None)
        if dropped is not None and session.epoch <= dropped:
            with session.lock:
                session.epoch = dropped + 1

    def _drop(self, path: str, listed: SessionIndex | None, successor_id: str) -> None:
        """Forget what is listed at `path`, to list the file there now (refused, or readable again) under
        `successor_id`: under the same id, it starts a later epoch than the one dropped (see `_continue_epoch`)."""
        if listed is not None and listed.id == successor_id:
            self._replaced_epochs[successor_id] = listed.epoch
        self.forget(path)

    def refuse(self, path: str, error: OSError) -> None:
        """List a file that may not or cannot be read (a FIFO, a device, a symlink out of the folder, permission
        denied): 0 events and one problem saying what it is. What was read of it before is no longer shown."""
        kind, detail = refusal(error)
        listed = self._by_path.get(path)
        if (listed is not None and listed.format is formats.NOT_READ
                and listed.problems == [Problem(kind, None, detail)]):
            return  # refused as before: nothing changed
        log.debug("not reading %s: %s", path, detail)  # shown on the sessions list and its problems page
        session = self._session_of(path, formats.NOT_READ, detail)
        self._drop(path, listed, session.id)
        session.file_problem(detail, kind)
        self._list(path, session)

    def rename(self, session: SessionIndex, new_id: str) -> None:
        """Give a session a new id (caller holds the lock); links to the old one follow it (see `resolve`)."""
        old_id = session.id
        if old_id == new_id:
            return
        with session.lock:
            session.id = new_id
        if self.sessions.get(old_id) is session:
            del self.sessions[old_id]
            self.sessions[new_id] = session
            self.aliases.pop(new_id, None)
            self.aliases[old_id] = new_id
        self.bump(session)

    def changed(self, session: SessionIndex | None = None) -> None:
        with self.lock:
            self.bump(session)

    def bump(self, session: SessionIndex | None = None) -> None:
        """A change to what is listed, of `session`'s row (None: of any row), told to pages (caller holds the lock).
        A row is made again only once told (web.render.Rows), so every change to what a row shows is told here."""
        self.version += 1
        if session is None:
            self.rows_changed_at = self.version
        else:
            session.changed_at = self.version
            self.bumps.append((self.version, session))

    # --- what Groups asks of the files it reads ----------------------------------------------------------------

    def session_at(self, path: str) -> SessionIndex | None:
        """The session listed for the file at `path`."""
        return self._by_path.get(path)

    def identity_at(self, path: str) -> tuple[int, int] | None:
        """The (device, inode) of the file its session at `path` was read from (None: not known, read whole, or one
        of a group's files, whose move reads the group again: `move`)."""
        return getattr(getattr(self._tailers.get(path), "source", None), "identity", None)  # a gzip reader has none

    def place(self, path: str, session: SessionIndex) -> None:
        """The file at `path` is one of `session`'s (Groups.join)."""
        with self.lock:
            self._by_path[path] = session

    def is_listed(self, session: SessionIndex) -> bool:
        return session.id in self.sessions

    def list_session(self, session: SessionIndex) -> None:
        """List a session of several files under its id (it starts a later epoch than one dropped under it)."""
        self._continue_epoch(session)
        with self.lock:
            self.sessions[session.id] = session
            self.aliases.pop(session.id, None)
            self.bump(session)

    def read_later(self, session: SessionIndex) -> None:
        """A session's files to be read again by the ingest thread (it could not be woken from the cache)."""
        with self.lock:
            self.unfinished.update(session.members)
            self.bump(session)

    def move(self, source: str, destination: str) -> None:
        """A session file was renamed: keep its index and its reading position under the new name. Links to the old
        id keep working (see `resolve`). Renamed to something that is not a session file, it is forgotten; a file
        renamed over a session replaces it."""
        source, destination = os.path.abspath(source), os.path.abspath(destination)
        session = self._by_path.get(source)
        if session is not None and session.members:  # one file of several: read the group again
            self.forget(source)
            self.refresh(destination)
            return
        if (session is None or session.format is formats.NOT_READ or not self.is_session_file(destination)
                or source.endswith(GZIP_SUFFIX) != destination.endswith(GZIP_SUFFIX)):  # NOT_READ: nothing to keep
            self.forget(source)
            self.refresh(destination)
            return
        if destination in self._by_path:
            self.forget(destination)
        relpath = self.relpath(destination)
        with self.lock, session.lock:
            old_id = session.id
            del self._by_path[source], self.sessions[old_id]
            tailer = self._tailers.pop(source)
            tailer.path = destination
            session.id, session.path, session.relpath = session_id_for(relpath), destination, shown(relpath)
            session.name = session_name(relpath)
            self._by_path[destination], self._tailers[destination] = session, tailer
            self.groups.name_at(source)
            self.groups.name_at(destination)
            self.sessions[session.id] = session
            self.aliases.pop(session.id, None)
            if old_id != session.id:
                self.aliases[old_id] = session.id
            self.bump(session)
        self.refresh(destination)

    def forget(self, path: str) -> None:
        path = os.path.abspath(path)
        if self.stores.forget(path):
            return
        with self.lock:
            session = self._by_path.pop(path, None)
            self._tailers.pop(path, None)
            self._reading.pop(path, None)
            if session is not None and session.members:
                regroup = self.groups.forget_file(path, session)
                if regroup is not None:  # the others stay: read them again without it
                    self.bump()
                else:
                    if self.sessions.get(session.id) is session:  # not a main file listed unread under its id
                        del self.sessions[session.id]
                        self.folder_words.forget(session.id)
                    if self.cache is not None:  # what it kept of the group goes too (the folder's entry with it)
                        self.cache.forget(session.path)
                    self.bump()
                session = None
            else:
                regroup = None
            if session is not None:
                if self.sessions.pop(session.id, None) is session:
                    self.folder_words.forget(session.id)
                if self.cache is not None:
                    self.cache.forget(path)
                self.groups.name_at(path)  # a group named like this file may have its id back
                self.bump()
                if session.count >= FREEZE_AFTER:
                    self.host.gc.forgotten()
        if regroup is not None:
            self.groups.read(regroup)

    def take_unfinished(self) -> list[str]:
        """The files a refresh left part-read (see slices_per_read), to be read on; the set is emptied."""
        with self.lock:
            paths, self.unfinished = sorted(self.unfinished), set()
        return paths

    def paths_below(self, folder: str) -> list[str]:
        prefix = os.path.join(os.path.abspath(folder), "")
        with self.lock:
            return [p for p in [*self._by_path, *self.stores.paths()] if p.startswith(prefix)]

    def forget_below(self, folder: str, kept=lambda path: False) -> None:
        """A folder went away: forget every session that was inside it (but the files `kept` keeps), and its problems."""
        for path in self.paths_below(folder):
            if not kept(path):
                self.forget(path)
        self.folders.gone(self.relpath(folder))

    def sessions_now(self) -> list[SessionIndex]:
        return list(self.sessions.values())  # one C call: no other thread changes the dict meanwhile

    def settled_files(self) -> list[tuple[str, SessionIndex, FileTailer | GzipReader | None]]:
        """(path, session, reader) of each file read to its end (not part way)."""
        with self.lock:
            files = [(p, s, self._tailers.get(p)) for p, s in self._by_path.items()
                     if not s.members and p not in self._reading and p not in self.unfinished]
        return files + [f for f in self.groups.files() if f[0] not in self.unfinished]

    def progress(self) -> dict[str, dict]:
        """The files read part way so far: {path relative to the root: {"read": bytes, "size": bytes}}."""
        with self.lock:
            reading = list(self._reading.items())
        read = ((path, read_so_far(path, tailer)) for path, tailer in reading)
        return {self.relpath(path): done for path, done in read if done is not None}

    def progress_of(self, path: str) -> dict | None:
        """How far one file is read ({"read", "size"}), None when it is not being read: a session's page asks for
        its own file only, so a poll stats that file, not every file being read."""
        with self.lock:
            tailer, session = self._reading.get(path), self._by_path.get(path)
        if tailer is None and session is not None and sleeping.read_state(session) == "unread":
            return not_read_yet(list(session.members))
        return None if tailer is None else read_so_far(path, tailer)

    def get(self, session_id: str) -> SessionIndex | None:
        """The session a page asks for, marked seen (one left alone may sleep: SessionCache.sleep_quiet)."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.seen_at = time.monotonic()
        return session

    def resolve(self, session_id: str) -> str | None:
        """The id a session has now, after renames; None when it is gone."""
        with self.lock:
            for _ in range(100):  # renamed again and again: a chain, never a loop, but bounded
                if session_id in self.sessions:
                    return session_id
                session_id = self.aliases.get(session_id)
                if session_id is None:
                    return None
        return None

    def listing(self) -> list[SessionIndex]:
        with self.lock:
            return sorted(self.sessions.values(), key=_relpath)

    @property
    def problems(self) -> list:
        """Problems of the folder as a whole (folders that cannot be read, watcher failures): a copy."""
        return self.folders.problems

    # --- the cache ---------------------------------------------------------------------------------------------

    @property
    def _folder_key(self) -> str:
        return folder_cache.key_of(self.real_root, self.follow_symlinks)

    @property
    def folder_words(self) -> FolderWords:
        """Which sessions hold a word: a rare word's search looks at those (after a restart, the last run's, read
        when first asked for: SessionCache.folder_words)."""
        return self._folder_words if self.cache is None else self.cache.folder_words(self._folder_key)

    def keep_folder(self) -> bool:
        """Write what a restart needs to list the kept groups at once (folder_cache), when they changed."""
        return self.cache is not None and self.cache.save_folder(self._folder_key, self.groups.all())

    def sleep_quiet(self) -> bool:
        """Put to sleep the kept sessions nobody has looked at for a while (SessionCache.sleep_quiet)."""
        return (self.cache is not None
                and self.cache.sleep_quiet(self.groups.all(), self.groups.lost, time.monotonic()) > 0)
