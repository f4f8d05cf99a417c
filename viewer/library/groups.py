"""Sessions of several files (Claude Code: a main file and its sub-agents' files): joining a file to its group,
reading a group's files merged by time, settling a group left alone, and taking one back from the cache.

Groups owns the groups and the readers of their files; the Library it serves decides which file is which session
and lists them, and is asked through its public methods only (`session_at`, `place`, `list_session`, ...).
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import weakref

from viewer import formats
from viewer.files.safe_open import refused_path
from viewer.files.tailer import FileTailer
from viewer.formats.detect import SESSION_SUFFIX
from viewer.index.session_ids import GROUP_MARK, group_id_for, shown
from viewer.index.session_index import SessionIndex
from viewer.search import worker as search_worker

from . import project_notes
from .reading import lines_from, read_some


class Groups:
    """The multi-file sessions of a Library (see the module). The Library's `lock` guards `_groups`."""

    def __init__(self, library):
        self._library = library
        self._groups: dict[tuple[str, str], SessionIndex] = {}  # (folder, session id) -> a multi-file session
        # folder -> its groups (by session id): what a project's notes are passed to, not every group of the library
        self._in_folder: dict[str, dict[str, SessionIndex]] = {}
        # path of a group's file -> its reader (reading.reader_for), made when first wanted (`_reader`): None until then
        self._readers: dict[str, object] = {}
        self._notes: dict[str, dict] = {}  # project folder -> what its sessions said of each other (Normalizer.take)
        # groups to read once a scan has found all their files -> the last write of their files, as each was found
        self._deferred: dict[tuple[str, str], int] | None = None
        self._lost: weakref.WeakSet = weakref.WeakSet()  # sleeping sessions that could not be woken: read again
        self._cache_tried: weakref.WeakSet = weakref.WeakSet()  # groups looked up in the cache (`_kept`)
        # settled groups resumed, being read again from their start (`_read_again`): their epoch may yet be kept
        self.reading_again: weakref.WeakSet = weakref.WeakSet()
        self.pool = None  # the worker processes that read groups (read_pool.ReadPool; its runtime's), if any

    def at(self, key: tuple[str, str]) -> SessionIndex | None:
        """The group of (folder, session id), if it is still one (gone if its only file could not be read)."""
        return self._groups.get(key)

    def format_at(self, folder: str, session: str) -> formats.Format | None:
        """The format of the group of (folder, session id), if there is one."""
        group = self._groups.get((folder, session))
        return group.format if group is not None else None

    def all(self) -> list[SessionIndex]:
        """Every group now (a copy)."""
        with self._library.lock:
            return list(self._groups.values())

    def files(self) -> list[tuple[str, SessionIndex, object]]:
        """(path, group, reader) of every file of a group; the reader None for a group not read yet (nothing of it to
        save: its readers are made when it is read, not for a look at every file)."""
        library = self._library
        with library.lock:
            return [(p, library.session_at(p), reader) for p, reader in self._readers.items()]

    @contextlib.contextmanager
    def read_after(self):
        """The groups whose files are found meanwhile are read once all are known (together, merged by time),
        when the outermost of these ends (a scan, or a file opened with the other files of its session)."""
        outer = self._deferred is None
        if outer:
            self._deferred = {}
        try:
            yield
        finally:
            if outer:
                deferred, self._deferred = self._deferred, None
                keys = self._newest_first(deferred)
                if self.pool is not None:  # spread over worker processes (read_pool)
                    self.pool.read(self, keys)
                else:
                    stopping = self._library.host.stopping
                    for key in keys:
                        if stopping.is_set():
                            break
                        if key in self._groups:  # gone if its only file could not be read
                            self.read(self._groups[key])
                if deferred and self._library.cache is not None:
                    self._library.cache.flush()  # the groups just read and kept, written together

    @staticmethod
    def _newest_first(deferred: dict) -> list:
        """Groups by the last write of their files (as the walk found them: no stat again), newest first: the sessions
        worked in last are read (and so searchable) first, not last, in a folder of thousands."""
        return sorted(deferred, key=lambda key: (-deferred[key], key))

    def sidecar_changed(self, path: str) -> None:
        """A sub-agent's `.meta.json` written after its file: its session looks again (a flush, no new lines; a
        settled session is read again from its start, as its normalizer would take it)."""
        session = self._library.session_at(formats.sidecar_owner(path) or "")
        if session is not None and session.members and session.normalizer.settled:
            self._read_again(session)
        elif session is not None and session.members:
            session.ingest_records([])
            self._library.changed(session)  # its tree may have changed (a parent found): pages and background work look again

    def join(self, path: str, fmt: formats.Format, member: dict, written: int = 0) -> None:
        """One file of a multi-file session (Claude Code: main file, sub-agent files); `written`: its last write
        (st_mtime_ns), which orders the groups a scan reads."""
        library = self._library
        key = (member["folder"], member["session"])
        session = self._groups.get(key)
        if session is None:
            main = os.path.join(member["folder"], member["session"] + SESSION_SUFFIX)
            folder = library.relpath(member["folder"])
            with library.lock:
                session_id = self._group_id(key, folder, main)
            session = SessionIndex(session_id, main, library.relpath(main), fmt,
                                   name=shown(member.get("name") or member["session"]), host=library.host, unread=True)
            # `serve` one project folder: name it, not "."
            project = member.get("project") or (os.path.basename(member["folder"]) if folder == "." else folder)
            session.project = shown(project)  # a format may know the project better than the folder (its cwd)
            self._groups[key] = session
            self._in_folder.setdefault(key[0], {})[key[1]] = session
            if self._deferred is not None:  # read once the scan has found every file: listed now, as being read
                library.list_session(session)
        rel = session.relpath if path == session.path else shown(library.relpath(path))  # the main file's: made above
        member = {**member, "rel": rel, "path": path, "inside": library.inside}
        with session.lock:
            session.members[path] = member
        library.place(path, session)
        if path != session.path and library.is_listed(session):  # its row lists its files (web.render.Rows)
            library.changed(session)
        self._readers[path] = None  # a first walk lists thousands of groups before it reads one
        if self._deferred is not None:
            self._deferred[key] = max(self._deferred.get(key, 0), written)
            if self.pool is not None:
                self.pool.expect(len(self._deferred))
        else:
            self.read(session)

    def _group_id(self, key: tuple[str, str], relpath: str | None = None, main: str | None = None) -> str:
        """A group's id (caller holds the lock): its main file's, marked when a session of one file that
        is not in the group has that id (a native file named after a Claude Code sessionId). `relpath` and `main`:
        the folder's path relative to DIR and the main file's path, when the caller has them."""
        folder, name = key
        sid = group_id_for(self._library.relpath(folder) if relpath is None else relpath, name)
        holder = self._library.session_at(os.path.join(folder, name + SESSION_SUFFIX) if main is None else main)
        taken = holder is not None and not holder.members and holder.id == sid
        return sid + GROUP_MARK if taken else sid

    def _reader(self, path: str):
        """The reader of a group's file, made now if it was not yet."""
        reader = self._readers[path]
        if reader is None:
            reader = self._readers[path] = self._library.reader(path)
        return reader

    def name_at(self, path: str) -> None:
        """A session of one file came or went at `path` (caller holds the lock): the group whose main file
        that path names takes the id it has now. Its id depends on what is in the folder, not on the order
        files were found in."""
        if not self._groups or not path.endswith(SESSION_SUFFIX):
            return
        key = (os.path.dirname(path), os.path.basename(path)[: -len(SESSION_SUFFIX)])
        group = self._groups.get(key)
        if group is not None:
            self._library.rename(group, self._group_id(key))

    def forget_file(self, path: str, session: SessionIndex) -> SessionIndex | None:
        """A file of `session` is gone (caller holds the lock): the group to read again without it, or None when it
        was the last (the group is gone too)."""
        self._readers.pop(path, None)
        with session.lock:
            session.members.pop(path, None)
        if session.members:  # the others stay: read them again without it
            self.start_over(session)
            return session
        gone = [key for key, group in self._groups.items() if group is session]
        for folder, name in gone:
            del self._groups[folder, name]
            in_folder = self._in_folder[folder]
            del in_folder[name]
            if not in_folder:
                del self._in_folder[folder]
        return None

    def read(self, session: SessionIndex, elsewhere=None) -> None:
        """Read what was appended to any file of a multi-file session; all again when one was replaced.

        A file of it that may not or cannot be read (now) leaves the session, which is read again without
        it, and is listed on its own with the problem. `elsewhere(session)`: whether a worker process reads it
        instead, for a group not read yet (read_pool: it is taken asleep once read, see `take`)."""
        try:
            if session in self._lost:  # asleep, and could not be woken from the cache: read from its start
                self._lost.discard(session)
                self.start_over(session)
            if not self._kept(session) and not (elsewhere is not None and session.count == 0 and elsewhere(session)):
                # no cyclic collection while it is read, indexed, kept and put to sleep (a small session in one go): its
                # objects hold no cycles, and a folder of thousands would be walked by the collector at each
                with self._library.host.gc.batch():
                    self._read_files(session)
        except formats.NOT_READABLE as error:
            path = refused_path(error, None)
            if path not in session.members:
                raise
            self._library.refuse(path, error)

    def _kept(self, session: SessionIndex) -> bool:
        """Whether a group not read yet was taken from the cache, asleep (see sleeping), its files to be read on from
        their ends; else it is read from its start."""
        library = self._library
        cache = library.cache
        if cache is None or session.count or not session.members or session in self._cache_tried:
            return False
        self._cache_tried.add(session)  # once: a group with no events is not looked up again at every refresh
        if any(self._readers[p].state()["position"] for p in session.members
               if isinstance(self._readers.get(p), FileTailer)):
            return False
        return self.take(session, functools.partial(cache.restore_group, session))

    def take(self, session: SessionIndex, restore) -> bool:
        """Take a group not read yet asleep by `restore(readers, inside, lost)` (from the cache, or as a worker process
        read it: read_pool), its readers set to go on from the end of each file; False (new readers) on a miss."""
        library = self._library
        readers = {p: self._reader(p) for p in session.members}
        if not restore(readers, library.inside, self.lost):
            for p in session.members:  # some may have been moved on before the miss was found
                self._readers[p] = library.reader(p)
            return False
        if library.is_listed(session):
            library.changed(session)
        else:
            library.list_session(session)
        self._pass_notes(session)
        return True

    def lost(self, session: SessionIndex) -> None:
        """A sleeping session whose cache entry is gone (emptied, see SessionIndex.wake): the ingest thread reads it
        again from its start (see `read`)."""
        self._lost.add(session)
        self._library.read_later(session)

    def keep(self, session: SessionIndex) -> None:
        """Keep a settled group in the cache now and put it to sleep unless someone reads it: done as soon as it
        settles (in a first read, as soon as it is read: thousands of sessions are held a few at a time, not all),
        and again once background work, which wakes it for that, has built its search index and facets
        (background.index_step)."""
        cache = self._library.cache
        if cache is None or not session.members:
            return
        readers = {p: self._readers.get(p) for p in session.members}
        with session.lock:  # one summary for its entry and its sleep: its usage read and priced once
            summary = session.summary()
        if cache.save_group(session, readers, self._library.inside, summary):
            cache.sleep(session, self.lost, time.monotonic(), summary)

    def _read_files(self, session: SessionIndex) -> None:
        """The files are merged as they are read, Tuning.group_batch_bytes of each at a time: a big group is never
        in memory whole."""
        paths = list(session.members)
        readers = [self._reader(p) for p in paths]
        batch = self._library.host.tuning.group_batch_bytes
        results = [read_some(reader, batch) for reader in readers]
        replaced: list[str] = []  # files replaced before or while they were read: the group is read again
        problems = [problem for r in results for problem in r.problems]
        withdrawn = [problem for r in results for problem in r.withdrawn]
        resumed = any(r.lines for r in results) and session.normalizer is not None and session.normalizer.settled
        in_hand = False  # its events cached as read, for its search index built as it settles (see `settle`)
        if not resumed and not any(r.restarted for r in results):
            batches = [(session.members[p], lines_from(reader, r, replaced, problems, batch))
                       for p, reader, r in zip(paths, readers, results) if r.lines]
            if batches:
                in_hand = self._settles_once_read(session, results)
                session.ingest_records(batches, in_hand)
                self._pass_notes(session)
        if resumed or replaced or any(r.restarted for r in results):
            self._read_again(session, files=True, appended=resumed and not replaced)
            return
        for r in results:
            if r.error:
                session.file_problem(r.error)
        session.reader_problems(problems, withdrawn)
        stamps = [r.modified_at for r in results if r.modified_at is not None]
        library = self._library
        listed = library.is_listed(session)
        if batches or not listed:
            if stamps:
                session.updated_at = max(stamps)
            library.list_session(session) if not listed else library.changed(session)
        elif problems or withdrawn:  # an idle file's open last line judged: its count on `/` changes
            library.changed(session)
        self.settle(session)
        # not indexed as it settled: read back when it is (few, and big). A read worker's stay in hand: its summary
        # and entry are made of them next, and then the whole library is emptied (read_worker)
        if in_hand and session.asleep is None and not library.hands_over:
            with session.lock:
                session.events.forget_cached()

    def _settles_once_read(self, session: SessionIndex, results: list) -> bool:
        """Whether a group about to be read was left alone long enough to settle right after (see `settle`), its
        search index built then from the events still in hand: a first read of a folder of old sessions."""
        normalizer, stamps = session.normalizer, [r.modified_at for r in results if r.modified_at is not None]
        return (normalizer is not None and not normalizer.settled and bool(stamps) and session.count == 0
                and time.time() - max(stamps) >= self._library.host.tuning.settle_after)

    def _read_again(self, session: SessionIndex, files: bool = False, appended: bool = False) -> None:
        """Forget what was read of a multi-file session and read all its files from their start (`files`: already
        inside a read of them, so without the check for a file it may not read: the caller's does it).

        `appended`: only lines were added to its files (a settled session resumed). When every event read before
        is again where it was, the session keeps its epoch: a page open on it takes the new events as they come,
        and does not reload."""
        before = (session.epoch, session.count, dict(session.by_id)) if appended else None
        if appended:  # meanwhile it shows a later epoch and fewer events: a page's poll waits (polling)
            self.reading_again.add(session)
        try:
            self.start_over(session)
            (self._read_files if files else self.read)(session)  # fresh readers: no restart reported
            if before is not None:
                epoch, count, by_id = before
                with session.lock:
                    if session.count >= count and all(session.by_id.get(m) == p for m, p in by_id.items()):
                        session.epoch = epoch
        finally:
            self.reading_again.discard(session)

    def start_over(self, session: SessionIndex) -> None:
        session.restart()
        for p in session.members:
            self._readers[p] = self._library.reader(p)

    def settle(self, session: SessionIndex, now: float | None = None) -> bool:
        """A session read to its end whose files were last written Tuning.settle_after ago or more keeps only what
        its pages read of its normalizer (Normalizer.settle): a folder of thousands of finished sessions holds their
        indexes, not what reading them needed (a session still being worked in keeps all of it; one left alone
        this long is read again from its start if it is resumed). Whether it settled now."""
        normalizer = session.normalizer
        if (normalizer is None or normalizer.settled or session.updated_at is None
                or (time.time() if now is None else now) - session.updated_at < self._library.host.tuning.settle_after):
            return False
        settled = normalizer.settle()
        if settled is None:
            return False
        with session.lock:
            session.normalizer = settled
        if session.count < search_worker.MIN_BEHIND:
            # Its search index and facets are built in this thread anyway: now, while its files are fresh, so that
            # it is kept once, whole, not kept, woken, indexed and kept again (each of thousands of small sessions)
            while not session.search.catch_up(session.count, session.search.BATCH, along=session.facets):
                pass
            session.facets.catch_up_in_slices(session.count)
        library = self._library
        # postings saved and dropped at once (a session asleep as soon as it is kept, or read for another process)
        # are not worth interning
        dropped = library.hands_over or (library.cache is not None
                                         and library.cache.sleeps_once_kept(session, time.monotonic()))
        with session.lock:
            if not library.hands_over:  # a read worker's words are filed by the server it hands them to (read_worker)
                library.folder_words.take(session)
            session.search.pack(interned=not dropped)  # when complete; else once it is (background.index_step)
        self.keep(session)
        return True

    def settle_quiet(self) -> bool:
        """Settle one session that has been left alone long enough (see `settle`); False when none is due."""
        now = time.time()
        return any(self.settle(session, now) for session in self.all())

    def _pass_notes(self, session: SessionIndex) -> None:
        folder = os.path.dirname(session.path)
        others = lambda: list(self._in_folder.get(folder, {}).values())  # noqa: E731
        if project_notes.pass_notes(self._notes.setdefault(folder, {}), session, others):
            self._library.changed()
