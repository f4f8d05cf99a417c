"""Sessions kept between runs: a restart takes a file's index from the cache and reads only what came after.

An entry is keyed by the file's identity (device and inode: a renamed file keeps it) and holds how far the file was
read, a print of its bytes and its index; it is used only when the file still holds those bytes. The cache lives
in the user's cache folder, never in the folder being watched.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
import zlib

from viewer.core import lockorder
from viewer.core.host import Host
from viewer.files.safe_open import open_regular
from viewer.files.tailer import FileTailer
from viewer.index import sleeping
from viewer.index.session_index import SessionIndex
from viewer.search.folder_words import FolderWords

from . import code_version, folder_cache, group_cache, index_state
from .cache_store import CacheStore, CorruptEntry, Raw

log = logging.getLogger(__name__)

HEAD_BYTES = 64 * 1024
BLOCK_BYTES = 4096
BLOCKS = 64
WHOLE_BELOW = 1024 * 1024
SAVE_AFTER_IDLE_S = 2.0  # a session is saved once it has not changed for this long...
MIN_SAVE_GAP_S = 30.0  # ... and at most this often (a session written to all the time is not saved all the time)
SLEEP_AFTER_S = 60.0  # a kept session of several files nobody has looked at for this long sleeps (see sleeping)


def default_folder() -> str:
    import platformdirs

    return os.path.join(platformdirs.user_cache_dir("agentview", appauthor=False), "sessions")


def content_print(fd: int, size: int) -> int:
    """A CRC-32 of the first `size` bytes of a file: all of them for a small file, else samples of them."""
    if size <= WHOLE_BELOW:
        return zlib.crc32(os.pread(fd, size, 0)) if size else 0
    crc = zlib.crc32(os.pread(fd, HEAD_BYTES, 0))
    step = (size - HEAD_BYTES - BLOCK_BYTES) // BLOCKS
    for i in range(BLOCKS):
        crc = zlib.crc32(os.pread(fd, BLOCK_BYTES, HEAD_BYTES + i * step), crc)
    return zlib.crc32(os.pread(fd, BLOCK_BYTES, size - BLOCK_BYTES), crc)


def for_folder(cache_dir: str | None, root: str | os.PathLike, host: Host | None = None) -> SessionCache | None:
    """The cache to use while serving `root`: None without a `cache_dir`, or when it is inside `root` (the
    server never writes into the folder it serves) or cannot be made."""
    if cache_dir is None:
        return None
    folder, served = os.path.realpath(cache_dir), os.path.realpath(root)
    if os.path.commonpath([folder, served]) == served:
        log.warning("not caching: the cache folder %s is inside the served folder %s", folder, served)
        return None
    try:
        return SessionCache(folder, host=host)
    except OSError as error:
        log.warning("not caching: cannot use %s: %s", folder, error)
        return None


def _collector_paused(method):
    """The method runs with the cyclic collector paused (see `_sections`)."""
    @functools.wraps(method)
    def paused(self, *args):
        with self.host.gc.batch():
            return method(self, *args)
    return paused


class SessionCache:
    def __init__(self, folder: str | None = None, max_bytes: int | None = None, version: str | None = None,
                 host: Host | None = None):
        """`version`: what entries must have been written by (code_version.version(): the code that builds them);
        `host`: the app's (its tuning, the collector's pauses)."""
        self.host = host if host is not None else Host()
        folder = folder or default_folder()
        self.store = CacheStore(folder, version or code_version.version(),
                                **({"max_bytes": max_bytes} if max_bytes else {}))
        self.folder = folder
        self._saved: dict[str, tuple] = {}  # path -> (serial, epoch, count) of the session saved last
        self._saved_at: dict[str, float] = {}
        self.restored = 0  # sessions taken from the cache this run (a figure for the benchmark and tests)
        self.restored_listed = 0  # ... of them, groups taken from the folder's entry (folder_cache)
        self.read_elsewhere = 0  # groups read by worker processes, taken as kept (take_group)
        self._due: list[tuple] = []  # sessions found due to be saved, not saved yet (see save_one)
        # a group's main path -> its entry's (key, files, sidecars): group_cache
        self._entries: dict[str, tuple[str, dict, dict]] = {}
        self.listed: folder_cache.Listed | None = None  # the folder's entry, while a restart's first scan reads it
        self._folder_words: FolderWords | None = None  # which sessions hold a word (see folder_words)
        self._words_kept = False  # whether the folder's entry the first scan read may hold them (the last run's)
        self._words_lock = lockorder.ordered(threading.Lock(), lockorder.CACHE, "folder words read")
        # (session, inside, its asleep state) restored by their files' stat alone: their bytes are checked soon after
        self._unchecked: list[tuple] = []
        # (session, lost) woken whose entry could not give a part when first read (group_cache.wake): read again
        self._spoiled: list[tuple] = []
        self._kept_changes = 0  # groups kept or forgotten: the folder's entry is written again when this moved
        self._folder_saved: tuple[int, float] = (0, float("-inf"))  # (_kept_changes, when) at its last write

    # --- a start: the cache's session, when it still holds --------------------------------------------------

    def restore(self, path: str, session_id: str, relpath: str, inside: str | None,
                tailer: FileTailer) -> SessionIndex | None:
        """The session of the file at `path` as kept, with `tailer` set to go on from where it was read; None
        (and `tailer` untouched) on any miss."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = _key((st.st_dev, st.st_ino))
        kept = self.store.sections(key)
        if kept is None:
            return None
        try:
            with self.host.gc.batch() as made:  # an index made at once, as a read makes it: not walked while it grows
                session = self._restore(kept, path, session_id, relpath, inside, tailer)
                made["added"] = session.count if session is not None else 0
                kept.close()  # the entry's file closed here, not whenever the generator is let go
        except (CorruptEntry, KeyError, TypeError, ValueError, IndexError, StopIteration) as error:
            log.info("cache entry of %s not used: %s", relpath, error)
            session = None
        if session is None:
            self.store.drop(key)
            return None
        self._kept(path, session)
        return session

    def restore_group(self, session: SessionIndex, tailers: dict, inside: str | None, lost) -> bool:
        """A group of files (listed, not read yet) as kept, asleep, its `tailers` set to go on from the end of each
        file; False on a miss (then the caller makes new tailers: some may have moved). See group_cache; `lost` is
        told if it cannot be woken from its entry (sleeping)."""
        row = self.listed.group(session.path) if self.listed is not None else None
        entry = None
        if row is not None:
            entry = group_cache.restore_listed(self.store, session, tailers, inside, lost, row,
                                               unchanged=self.listed.unchanged, spoiled=self._spoiler(lost))
            if entry is not None:
                self._unchecked.append((session, inside, session.asleep))
                self.restored_listed += 1
        # A first start (the cache empty) opens no files of a group this run has not kept, only to find nothing
        if entry is None and (session.path in self._saved_at or not self.store.was_empty()):
            entry = group_cache.restore(self.store, session, tailers, inside, lost, self._spoiler(lost))
            self._kept_changes += entry is not None  # the folder's entry lacked it: written again
        if entry is None:
            return False
        self._entries[session.path] = entry
        self._kept(session.path, session)
        return True

    def take_group(self, session: SessionIndex, tailers: dict, inside: str | None, lost, read: tuple) -> bool:
        """A group (listed, not read yet) read and kept by a worker process (library.read_worker: `read` is the entry's
        key, its sections encoded, its files, sidecars, summary and normalizer's state), kept here and taken asleep
        as a restart takes a listed one, its `tailers` set to go on from the end of each file. False on a miss (its
        files changed since: then the caller makes new tailers and reads it)."""
        key, sections, files, sidecars, summary, state = read[:6]
        if set(files) != set(session.members) or not all(type(section) in (bytes, Raw) for section in sections):
            return False
        self.store.put(key, sections, pack=True, encoded=True)
        entry = group_cache.restore_listed(self.store, session, tailers, inside, lost,
                                           (key, files, sidecars, summary, state), checked=True,
                                           spoiled=self._spoiler(lost))
        if entry is None:
            self.store.drop(key)
            return False
        self._entries[session.path] = entry
        self._saved[session.path] = _marker(session)
        self._saved_at[session.path] = time.monotonic()
        self._kept_changes += 1
        self.read_elsewhere += 1
        return True

    def check_step(self, most: int = 16) -> bool:
        """Check the bytes of up to `most` sessions restored by their files' stat alone (restore_listed), and mark
        their entries used (the folder's entry was read, not theirs: else they would be evicted first). One whose
        files no longer hold what they held is woken, which finds it and reads them again (sleeping: `lost`).
        First, sessions whose entry could not give a part when first read are read again (`_spoiler`).
        False when none waits."""
        spoiled = bool(self._spoiled)
        while self._spoiled:
            session, lost = self._spoiled.pop()
            lost(session)
        if not self._unchecked:
            return spoiled
        checked, folders = [], {}
        for session, inside, asleep in self._unchecked[-most:]:
            entry = self._entries.get(session.path)
            if entry is None or session.asleep is not asleep:
                continue  # woken since (its wake checked it), read again, or forgotten
            key, files, _ = entry
            if not group_cache.same_files(files, inside, folders):
                session.wake(seen=False)
                continue
            checked.append(key)
            with session.lock:
                if session.asleep is asleep:
                    asleep["wake"] = functools.partial(group_cache.wake, self.store, key, files,
                                                       spoiled=self._spoiler(asleep["lost"]))
        self.store.touch(*checked)  # sixteen groups' entries lie in one or two packs: each is touched once
        del self._unchecked[-most:]
        return True

    def sleep_quiet(self, sessions, lost, now: float) -> int:
        """Put to sleep the sessions of several files kept as they are now and not looked at for SLEEP_AFTER_S
        (see sleeping): how many. A folder of thousands of sessions holds those someone reads."""
        return sum(self.sleep(session, lost, now) for session in sessions)

    def sleep(self, session: SessionIndex, lost, now: float, summary: dict | None = None) -> bool:
        """Put one session to sleep if it is kept as it is now and nobody has looked at it for SLEEP_AFTER_S;
        `summary`: the one it was kept with (`save_group`), taken just before (unchanged: it is kept as it is now)."""
        entry = self._entries.get(session.path)
        if (entry is None or not self.sleeps_once_kept(session, now)
                or self._saved.get(session.path) != _marker(session)):
            return False
        key, files, _ = entry
        session.sleep(functools.partial(group_cache.wake, self.store, key, files, spoiled=self._spoiler(lost)),
                      lost, summary)
        return True

    def _spoiler(self, lost):
        """What a woken session's entry tells when a part of it cannot be read when first needed (evicted, replaced
        or corrupt since the wake): the session, then read again by `lost` from its files (check_step: outside the
        session's lock, which its reader holds)."""
        return functools.partial(_spoiled_later, self._spoiled, lost)

    @staticmethod
    def sleeps_once_kept(session: SessionIndex, now: float) -> bool:
        """Whether `sleep` puts a session of several files to sleep as soon as it is kept as it is now."""
        return bool(session.members) and session.sleepy(now, SLEEP_AFTER_S)

    def _kept(self, path: str, session: SessionIndex) -> None:
        self._saved[path] = _marker(session)
        self._saved_at[path] = time.monotonic()
        self.restored += 1

    def _restore(self, kept, path, session_id, relpath, inside, tailer) -> SessionIndex | None:
        name, file = next(kept)
        if name != "file":
            return None
        fd = open_regular(path, inside)
        try:
            st = os.fstat(fd)
            position = file["tailer"]["position"]
            if (st.st_dev, st.st_ino) != tuple(file["tailer"]["identity"]) or st.st_size < position:
                return None
            if content_print(fd, position) != file["print"]:
                return None  # the bytes read before are not there any more
        finally:
            os.close(fd)
        session = index_state.restore(kept, session_id, path, relpath, host=self.host)
        if session is None or not tailer.resume(file["tailer"]):
            return None
        session.events.read_from(tailer.source)
        return session

    # --- saving: from the ingest thread, while nothing else waits --------------------------------------------

    def save_one(self, files_now, inside: str | None) -> bool:
        """Save one session that is due; False when none is. `files_now()` gives every (path, session, reader) read
        to its end; `inside`: the folder the files must lie in (safe_open).

        The sessions due are found in one pass and saved one a call, each looked at again when its turn comes:
        a folder of thousands is walked once for all of them, not once a save."""
        self.flush()
        now = time.monotonic()
        if not self._due:
            self._due = self._all_due(files_now(), now)
        while self._due:
            path, session, tailers = self._due.pop()
            if not self.due(path, session, now):
                continue
            if session.members:
                self.save_group(session, tailers, inside)
            else:
                self.save(path, session, tailers, inside)
            return True
        return False

    def _all_due(self, files, now: float) -> list[tuple]:
        """(path, session, its reader or, for a session of several files, {path: reader}) of each session due. One
        asleep is not: it was put to sleep kept as it is, and wakes before it changes (a restart's thousands)."""
        due, groups = [], {}
        for path, session, tailer in files:
            if session.asleep is not None:
                continue
            if session.members:
                groups.setdefault(id(session), (session, {}))[1][path] = tailer
            elif isinstance(tailer, FileTailer) and self.due(path, session, now):
                due.append((path, session, tailer))
        for session, tailers in groups.values():
            if tailers.keys() == session.members.keys() and self.due(session.path, session, now):
                due.append((session.path, session, tailers))
        return due

    def due(self, path: str, session: SessionIndex, now: float) -> bool:
        """Whether `session` has changed since it was saved, has been still for a moment, and was not saved
        just now."""
        if self._saved.get(path) == _marker(session) or session.count == 0:
            return False
        if session.updated_at is not None and time.time() - session.updated_at < SAVE_AFTER_IDLE_S:
            return False
        return now - self._saved_at.get(path, -MIN_SAVE_GAP_S) >= MIN_SAVE_GAP_S

    @_collector_paused
    def save(self, path: str, session: SessionIndex, tailer: FileTailer, inside: str | None) -> bool:
        """Keep the session of `path`, read up to where `tailer` is. Called by the ingest thread, the only one
        that changes the index: its state cannot move while it is written."""
        marker = _marker(session)
        self._saved_at[path] = time.monotonic()
        if not index_state.cacheable(session) or tailer.source is None:
            self._saved[path] = marker  # not asked again until it changes
            return False
        state = tailer.state()
        try:
            identity = tuple(state["identity"])
            fd = open_regular(path, inside)  # the file read, checked as every read is: never one outside DIR
            try:
                st = os.fstat(fd)
                if (st.st_dev, st.st_ino) != identity:
                    return False
                printed = content_print(fd, state["position"])
            finally:
                os.close(fd)
            self.store.put(_key(identity), self._sections(state, printed, session))
        except (OSError, ValueError) as error:  # no room, a file gone: not kept, nothing else changes
            log.warning("could not keep %s in the cache: %s", session.relpath, error)
            return False
        self._saved[path] = marker
        return True

    @_collector_paused
    def save_group(self, session: SessionIndex, tailers: dict, inside: str | None, summary: dict | None = None) -> bool:
        """Keep a group of files read to their ends, once its normalizer has settled (see group_cache). Its first
        keeping this run goes in a pack (`flush` writes it): a first read of thousands of small sessions makes a file
        per megabyte of them. Later ones are files of their own, so that a session kept again and again leaves no
        copies. `summary`: the session's summary() when the caller took it already (then `sleep` is given it too)."""
        marker = _marker(session)
        first = session.path not in self._saved_at
        self._saved_at[session.path] = time.monotonic()
        self._entries.pop(session.path, None)
        try:
            entry = group_cache.save(self.store, session, tailers, inside, pack=first, summary=summary)
        except (OSError, ValueError) as error:  # no room, a file gone: not kept, nothing else changes
            log.warning("could not keep %s in the cache: %s", session.relpath, error)
            return False
        self._saved[session.path] = marker  # kept, or not keepable: not asked again until it changes
        self._kept_changes += 1
        if entry is not None:
            self._entries[session.path] = entry
        return entry is not None

    def flush(self) -> None:
        """Write the sessions held for a pack (see save_group): once a scan has read its groups, and before any
        background save. Until then they are read from memory."""
        self.store.flush()

    # --- the folder's entry (folder_cache) --------------------------------------------------------------------

    def read_listed(self, key: str) -> None:
        """Read the folder's entry for a restart's first scan (`listed`; `done_listing` when it is over)."""
        self.listed = folder_cache.load(self.store, key)
        self._words_kept = self.listed is not None

    def done_listing(self) -> None:
        self.listed = None

    def folder_words(self, key: str) -> FolderWords:
        """The folder's words (search.folder_words): at first, those its entry holds (folder_cache.load_words), read
        when first asked for, so that a restart nobody searches holds none of them."""
        words = self._folder_words
        if words is None:
            with self._words_lock:
                if self._folder_words is None:
                    kept = folder_cache.load_words(self.store, key) if self._words_kept else None
                    self._folder_words = kept or FolderWords()
                words = self._folder_words
        return words

    def save_folder(self, key: str, groups) -> bool:
        """Write the folder's entry from the groups kept as they are now, and its words, if a group was kept or
        forgotten since it was last written and that was Tuning.save_gap_s ago or more; whether it wrote."""
        changes, at = self._folder_saved
        now = time.monotonic()
        if changes == self._kept_changes or now - at < self.host.tuning.save_gap_s:
            return False
        self.flush()  # the groups it lists are in the folder before it is
        self._folder_saved = (self._kept_changes, now)
        words = self.folder_words(key)  # the last run's read first, if not yet: the entry written keeps them

        def rows():
            for session in groups:
                entry = self._entries.get(session.path)
                if entry is None or not session.members:
                    continue
                with session.lock:
                    kept = self._saved.get(session.path) == _marker(session) and session.normalizer is not None
                    row = folder_cache.row(session, *entry) if kept else None
                if row is not None:  # yielded outside its lock: the section it goes in is written meanwhile
                    yield row
        try:
            folder_cache.save(self.store, key, rows())
            folder_cache.save_words(self.store, key, words)
        except (OSError, ValueError) as error:  # no room: a restart reads the groups' entries one by one
            log.warning("could not keep the folder's list in the cache: %s", error)
            return False
        return True

    @staticmethod
    def _sections(state: dict, printed: int, session: SessionIndex):
        """The entry's sections, made as they are written. Written with the cyclic collector paused: they are
        garbage without cycles, freed as each is written, but their millions of allocations set off full
        collections over the whole heap (10-40 ms each at 1M events, every request waiting)."""
        yield "file", {"tailer": state, "print": printed}
        yield from index_state.sections(session)

    def forget(self, path: str) -> None:
        """A session gone from the folder (Library.forget): what this run knew of what it kept. A group's leaves the
        folder's entry, written again without it."""
        if self._entries.pop(path, None) is not None:
            self._kept_changes += 1
        self._saved.pop(path, None)
        self._saved_at.pop(path, None)


def _spoiled_later(spoiled: list, lost, session: SessionIndex) -> None:
    sleeping.spoiled(session)
    spoiled.append((session, lost))


def _marker(session: SessionIndex) -> tuple:
    """What changes whenever a session's kept state would: a session that settles is kept anew."""
    normalizer = session.normalizer
    settled = normalizer is not None and normalizer.settled
    return session.serial, session.epoch, session.count, settled, session.indexed_whole


def _key(identity: tuple[int, int]) -> str:
    """An entry's key: the file's device and inode (a renamed file keeps its entry)."""
    return f"file {identity[0]}:{identity[1]}"
