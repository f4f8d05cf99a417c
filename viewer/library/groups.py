"""Sessions of several files (Claude Code: a main file and its sub-agents' files): how the Library joins a file to
its group, reads a group's files merged by time, settles a group left alone, and takes one back from the cache.
"""

from __future__ import annotations

import os
import time

from viewer import formats
from viewer.files.safe_open import refused_path
from viewer.files.tailer import FileTailer
from viewer.formats.detect import SESSION_SUFFIX
from viewer.index.session_ids import GROUP_MARK, group_id_for, shown
from viewer.index.session_index import SessionIndex
from viewer.store import folder_cache

from . import project_notes
from .reading import lines_from, read_some



class Groups:
    """The Library's sessions of several files (see the module)."""

    def _sidecar_changed(self, path: str) -> None:
        """A sub-agent's `.meta.json` written after its file: its session looks again (a flush, no new lines; a
        settled session is read again from its start, as its normalizer would take it)."""
        session = self._by_path.get(formats.sidecar_owner(path) or "")
        if session is not None and session.members and session.normalizer.settled:
            self._read_again(session)
        elif session is not None and session.members:
            session.ingest_records([])
            self._changed()  # its tree may have changed (a parent found): pages and background work look again

    def _join_group(self, path: str, fmt: formats.Format, member: dict) -> None:
        """One file of a multi-file session (Claude Code: main file, sub-agent files)."""
        key = (member["folder"], member["session"])
        session = self._groups.get(key)
        if session is None:
            main = os.path.join(member["folder"], member["session"] + SESSION_SUFFIX)
            with self.lock:
                session_id = self._group_id(key)
            session = SessionIndex(session_id, main, self.relpath(main), fmt,
                                   name=shown(member.get("name") or member["session"]), host=self.host)
            project = self.relpath(member["folder"])  # `serve` one project folder: name it, not "."
            project = member.get("project") or (os.path.basename(member["folder"]) if project == "." else project)
            session.project = shown(project)  # a format may know the project better than the folder (its cwd)
            self._groups[key] = session
            if self._deferred is not None:  # read once the scan has found every file: listed now, as being read
                self._list_group(session)
        member = {**member, "rel": shown(self.relpath(path)), "path": path, "inside": self.inside}
        with session.lock:
            session.members[path] = member
        self._by_path[path] = session
        self._tailers[path] = self._reader(path)
        if self._deferred is not None:
            self._deferred.add(key)
        else:
            self._read_group(session)

    def _group_id(self, key: tuple[str, str]) -> str:
        """A group's id (caller holds the lock): its main file's, marked when a session of one file that
        is not in the group has that id (a native file named after a Claude Code sessionId)."""
        folder, name = key
        sid = group_id_for(self.relpath(folder), name)
        holder = self._by_path.get(os.path.join(folder, name + SESSION_SUFFIX))
        taken = holder is not None and not holder.members and holder.id == sid
        return sid + GROUP_MARK if taken else sid

    def _settle_group_at(self, path: str) -> None:
        """A session of one file came or went at `path` (caller holds the lock): the group whose main file
        that path names takes the id it has now. Its id depends on what is in the folder, not on the order
        files were found in."""
        if not self._groups or not path.endswith(SESSION_SUFFIX):
            return
        key = (os.path.dirname(path), os.path.basename(path)[: -len(SESSION_SUFFIX)])
        group = self._groups.get(key)
        if group is not None:
            self._rename(group, self._group_id(key))

    def _read_group(self, session: SessionIndex) -> None:
        """Read what was appended to any file of a multi-file session; all again when one was replaced.

        A file of it that may not or cannot be read (now) leaves the session, which is read again without
        it, and is listed on its own with the problem."""
        try:
            if session in self._lost:  # asleep, and could not be woken from the cache: read from its start
                self._lost.discard(session)
                self._start_over(session)
            if not self._kept_group(session):
                self._read_group_files(session)
        except formats.NOT_READABLE as error:
            path = refused_path(error, None)
            if path not in session.members:
                raise
            self._refuse(path, error)

    def _kept_group(self, session: SessionIndex) -> bool:
        """Whether a group not read yet was taken from the cache, asleep (see sleeping), its files to be read on from
        their ends; else it is read from its start."""
        if self.cache is None or session.count or not session.members or session in self._cache_tried:
            return False
        self._cache_tried.add(session)  # once: a group with no events is not looked up again at every refresh
        tailers = {p: self._tailers[p] for p in session.members}
        if any(t.state()["position"] for t in tailers.values() if isinstance(t, FileTailer)):
            return False
        if not self.cache.restore_group(session, tailers, self.inside, self._lost_group):
            for p in session.members:  # some may have been moved on before the miss was found
                self._tailers[p] = self._reader(p)
            return False
        if session.id in self.sessions:
            self._changed()
        else:
            self._list_group(session)
        self._pass_notes(session)
        return True

    def _lost_group(self, session: SessionIndex) -> None:
        """A sleeping session whose cache entry is gone (emptied, see Sleeps.wake): the ingest thread reads it again
        from its start (see `_read_group`)."""
        with self.lock:
            self._lost.add(session)
            self.unfinished.update(session.members)
            self.version += 1

    def keep(self, session: SessionIndex) -> None:
        """Keep a settled group in the cache now and put it to sleep unless someone reads it: done as soon as it
        settles (in a first read, as soon as it is read: thousands of sessions are held a few at a time, not all),
        and again once background work, which wakes it for that, has built its search index and facets
        (background.index_step)."""
        if self.cache is None or not session.members:
            return
        tailers = {p: self._tailers.get(p) for p in session.members}
        if self.cache.save_group(session, tailers, self.inside):
            self.cache.sleep(session, self._lost_group, time.monotonic())

    @property
    def _folder_key(self) -> str:
        return folder_cache.key_of(self.real_root, self.follow_symlinks)

    def keep_folder(self) -> bool:
        """Write what a restart needs to list the kept groups at once (folder_cache), when they changed."""
        if self.cache is None:
            return False
        with self.lock:
            groups = list(self._groups.values())
        return self.cache.save_folder(self._folder_key, groups)

    def sleep_quiet(self) -> bool:
        """Put to sleep the kept sessions nobody has looked at for a while (SessionCache.sleep_quiet)."""
        if self.cache is None:
            return False
        with self.lock:
            groups = list(self._groups.values())
        return self.cache.sleep_quiet(groups, self._lost_group, time.monotonic()) > 0

    def _read_group_files(self, session: SessionIndex) -> None:
        """The files are merged as they are read, Tuning.group_batch_bytes of each at a time: a big group is never
        in memory whole."""
        paths = list(session.members)
        batch = self.host.tuning.group_batch_bytes
        results = [read_some(self._tailers[p], batch) for p in paths]
        replaced: list[str] = []  # files replaced before or while they were read: the group is read again
        problems = [problem for r in results for problem in r.problems]
        resumed = any(r.lines for r in results) and session.normalizer is not None and session.normalizer.settled
        if not resumed and not any(r.restarted for r in results):
            batches = [(session.members[p], lines_from(self._tailers[p], r, replaced, problems, batch))
                       for p, r in zip(paths, results) if r.lines]
            if batches:
                session.ingest_records(batches)
                self._pass_notes(session)
        if resumed or replaced or any(r.restarted for r in results):
            self._read_again(session, files=True, appended=resumed and not replaced)
            return
        for r in results:
            if r.error:
                session.file_problem(r.error)
        session.reader_problems(problems)
        stamps = [r.modified_at for r in results if r.modified_at is not None]
        listed = session.id in self.sessions
        if batches or not listed:
            if stamps:
                session.updated_at = max(stamps)
            self._list_group(session) if not listed else self._changed()
        self.settle(session)

    def _read_again(self, session: SessionIndex, files: bool = False, appended: bool = False) -> None:
        """Forget what was read of a multi-file session and read all its files from their start (`files`: already
        inside a read of them, so without the check for a file it may not read: the caller's does it).

        `appended`: only lines were added to its files (a settled session resumed). When every event read before
        is again where it was, the session keeps its epoch: a page open on it takes the new events as they come,
        and does not reload."""
        before = (session.epoch, session.count, dict(session.by_id)) if appended else None
        self._start_over(session)
        (self._read_group_files if files else self._read_group)(session)  # fresh readers: no restart reported
        if before is not None:
            epoch, count, by_id = before
            with session.lock:
                if session.count >= count and all(session.by_id.get(m) == p for m, p in by_id.items()):
                    session.epoch = epoch

    def _start_over(self, session: SessionIndex) -> None:
        session.restart()
        for p in session.members:
            self._tailers[p] = self._reader(p)

    def settle(self, session: SessionIndex, now: float | None = None) -> bool:
        """A session read to its end whose files were last written Tuning.settle_after ago or more keeps only what
        its pages read of its normalizer (Normalizer.settle): a folder of thousands of finished sessions holds their
        indexes, not what reading them needed (a session still being worked in keeps all of it; one left alone
        this long is read again from its start if it is resumed). Whether it settled now."""
        normalizer = session.normalizer
        if (normalizer is None or normalizer.settled or session.updated_at is None
                or (time.time() if now is None else now) - session.updated_at < self.host.tuning.settle_after):
            return False
        settled = normalizer.settle()
        if settled is None:
            return False
        with session.lock:
            session.normalizer = settled
            session.search.pack()  # when complete; else once it is (background.index_step)
        self.keep(session)
        return True

    def settle_quiet(self) -> bool:
        """Settle one session that has been left alone long enough (see `settle`); False when none is due."""
        now = time.time()
        with self.lock:
            groups = list(self._groups.values())
        return any(self.settle(session, now) for session in groups)

    def _list_group(self, session: SessionIndex) -> None:
        self._continue_epoch(session)
        with self.lock:
            self.sessions[session.id] = session
            self.aliases.pop(session.id, None)
            self.version += 1

    def _pass_notes(self, session: SessionIndex) -> None:
        folder = os.path.dirname(session.path)
        others = lambda: [other for (where, _), other in list(self._groups.items()) if where == folder]  # noqa: E731
        if project_notes.pass_notes(self._notes.setdefault(folder, {}), session, others):
            self._changed()
