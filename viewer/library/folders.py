"""The folders below DIR: walking them, and the problems that stop one being read (permission, depth)."""

from __future__ import annotations

import errno
import operator
import os
import stat
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from viewer.core.problems import Problem
from viewer.formats import detect
from viewer.index.session_ids import shown

from .read_ahead import ReadAhead


_name = operator.attrgetter("name")


def _is_folder(entry: os.DirEntry) -> bool:
    """A folder, or a symlink to one (as os.walk tells them)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


# Folders never walked: a version control system's own (big, and never a session's). Other dot-folders are:
# a home folder's `.claude`, `.codex`, `.gemini`, `.copilot` and `.local/share/opencode` hold sessions.
NOT_WALKED = frozenset({".git", ".hg", ".svn"})
MAX_FOLDER_DEPTH = 64  # folders further below DIR are not read (a `too_deep_folder` problem names the first)
# cleared once it reads (a database that could not be read: once it is, see stores)
_FOLDER_READ_KINDS = ("permission_denied", "unreadable_folder", "too_deep_folder", "database_locked",
                      "damaged_database")


def file_stat(path: str, entry: os.DirEntry | None = None) -> os.stat_result | None:
    """The stat of what is at `path` when it is anything but a folder; else None (a symlink leading nowhere is
    nothing). `entry`: the walk's of it, whose stat is made once (one system call for a file that is no symlink)."""
    try:
        found = os.stat(path) if entry is None else entry.stat()
        if stat.S_ISLNK(found.st_mode):  # a symlink since the folder was read: what it leads to
            found = os.stat(path)
    except (OSError, ValueError):
        return None
    return None if stat.S_ISDIR(found.st_mode) else found


class Folders:
    """DIR and its folders: walking them and listing what stops one being read. `changed()` is told (outside its
    lock) whenever the problems change: the Library's listing shows them."""

    def __init__(self, root: str | os.PathLike, follow_symlinks: bool = False, changed=lambda: None):
        self.root = os.path.abspath(root)
        self._root_slash = os.path.join(self.root, "")
        self.real_root = os.path.realpath(root)
        self.follow_symlinks = follow_symlinks
        self._lock = threading.Lock()  # guards `_problems`
        self._problems: list[Problem] = []  # of the folder, not of one session (see `problems`)
        self._changed = changed

    @property
    def problems(self) -> list[Problem]:
        """Problems of the folder as a whole (folders that cannot be read, watcher failures): a copy."""
        with self._lock:
            return list(self._problems)

    def folder_problem(self, kind: str, relpath: str, detail: str) -> None:
        """Record a problem of the folder, once per kind and path (a later detail replaces the earlier one);
        shown on `/` and in /api/sessions."""
        problem = Problem(kind, None, detail, path=shown(relpath))
        with self._lock:
            for i, known in enumerate(self._problems):
                if (known.kind, known.path) == (problem.kind, problem.path):
                    if known.detail == detail:
                        return
                    self._problems[i] = problem
                    break
            else:
                self._problems.append(problem)
        self._changed()

    def read_fine(self, relpath: str) -> None:
        """A folder was read: what stopped it being read before no longer holds."""
        path = shown(relpath)
        self._drop_folder_problems(lambda p: p.path == path)

    def gone(self, relpath: str) -> None:
        """A folder went away: so did what stopped it, or a folder in it, being read."""
        path = shown(relpath)
        below = path + "/" if path != "." else ""
        self._drop_folder_problems(lambda p: p.path == path or p.path.startswith(below))

    def forget_gone_folders(self) -> None:
        """Drop the problems of folders whose top folder below DIR is gone (a walk of the folder cannot see what
        is not there; the watcher calls this when it walks DIR without a file event to go by)."""
        with self._lock:
            tops = {p.path.split("/", 1)[0] for p in self._problems if p.kind in _FOLDER_READ_KINDS and p.path}
        for top in tops:
            if top != "." and not os.path.lexists(os.path.join(self.root, top)):
                self.gone(top)

    def _drop_folder_problems(self, concerns) -> None:
        if not self._problems:  # as nearly always: a walk of thousands of folders finds nothing to drop
            return
        with self._lock:
            kept = [p for p in self._problems if not (p.kind in _FOLDER_READ_KINDS and concerns(p))]
            dropped = len(kept) != len(self._problems)
            self._problems = kept
        if dropped:
            self._changed()

    @property
    def inside(self) -> str | None:
        """The folder every file read must really lie in (what safe_open checks); None: anywhere."""
        return None if self.follow_symlinks else self.real_root

    def relpath(self, path: str) -> str:
        """A path relative to DIR, '/'-separated, as on disk (a name that is not UTF-8 keeps its surrogates:
        ids escape its bytes; `shown` makes it printable)."""
        if path == self.root:
            return "."
        if path.startswith(self._root_slash) and os.sep == "/":  # the usual case, 10x faster
            below = path[len(self._root_slash):].rstrip("/")
            # no "." or ".." to resolve, no "//" to fold (a dot-folder, as ~/.claude is, needs neither)
            if "//" not in below and "/./" not in f"/{below}/" and "/../" not in f"/{below}/":
                return below or "."
        return Path(os.path.relpath(path, self.root)).as_posix()

    def session_files(self, folder: str | None) -> Iterator[str]:
        """Every session file below a folder (see `walk`)."""
        return (entry.path for entry in self.walk(folder))

    def walk(self, folder: str | None, first: bool = False) -> Iterator[os.DirEntry]:
        """The entry of every session file below a folder (see `_walk`); `first`: the first walk of DIR, which a
        thread reads ahead of (read_ahead: on a cold disk, the walk then finds most of what it looks at cached)."""
        ahead = ReadAhead(self) if first else None
        try:
            yield from self._walk(folder, ahead)
        finally:
            if ahead is not None:
                ahead.stop()

    def _walk(self, folder: str | None, ahead: ReadAhead | None) -> Iterator[os.DirEntry]:
        """The entry of every session file below a folder (its `path` absolute), each given as it is found: level by
        level, every folder's files before those of any folder below it, folders in name order. A session's main file
        lies above its sub-agents' folders (`<project>/<id>.jsonl`, `<project>/<id>/subagents/`), so a first walk
        lists every session before it looks into any of those (a third of a Claude Code folder's walk). Iterative: a
        folder of any depth costs no recursion; folders deeper than MAX_FOLDER_DEPTH and folders that cannot be read
        are listed in `problems` and left out."""
        seen_folders: set[str] = set()  # followed symlinks can loop (unfollowed, no folder is reached twice)
        pending = deque([os.path.abspath(folder or self.root)])
        given = 0
        while pending:
            dirpath = pending.popleft()
            relpath = self.relpath(dirpath)
            if self._too_deep(relpath):
                continue
            if self.follow_symlinks:
                real = os.path.realpath(dirpath)
                if real in seen_folders:
                    continue
                seen_folders.add(real)
            listed = self._list_folder(dirpath, relpath)
            if listed is not None:
                subfolders, files = listed
                if ahead is None:
                    yield from files
                else:  # the folders below that the walk will list (not too deep), to be listed ahead of it
                    below = 0 if relpath == "." else relpath.count("/") + 1
                    ahead.listed(dirpath, files, subfolders if below < MAX_FOLDER_DEPTH else [], given)
                    for entry in files:
                        yield entry
                        given += 1
                        ahead.passed = given
                pending.extend(subfolders)

    def _too_deep(self, relpath: str) -> bool:
        """Whether a folder lies more than MAX_FOLDER_DEPTH below DIR (then a problem names the first such
        folder of its chain: one problem per deep chain). Told from the path alone, before any system call."""
        if relpath == "." or relpath.count("/") < MAX_FOLDER_DEPTH:  # told without splitting the path
            return False
        folders = relpath.split("/")
        self.folder_problem("too_deep_folder", "/".join(folders[: MAX_FOLDER_DEPTH + 1]),
                            f"more than {MAX_FOLDER_DEPTH} folders below the watched folder: not read")
        return True

    def listed(self, dirpath: str) -> tuple[list[str], list[os.DirEntry]]:
        """A folder's subfolders a walk goes into (their paths: not NOT_WALKED; symlinked ones only when followed)
        and the entries of its session files, each in name order. Raises OSError when it cannot be read."""
        subfolders, files = [], []
        with os.scandir(dirpath) as entries:
            for entry in entries:
                if not _is_folder(entry):
                    if detect.is_session_file(entry.name):  # told by its name: most files of a folder are not
                        files.append(entry)
                elif (self.follow_symlinks or not entry.is_symlink()) and entry.name not in NOT_WALKED:
                    subfolders.append(entry.path)
        files.sort(key=_name)
        subfolders.sort()
        return subfolders, files

    def _list_folder(self, dirpath: str, relpath: str) -> tuple[list[str], list[os.DirEntry]] | None:
        """The folder `listed`; None, with a problem, when it cannot be read."""
        try:
            subfolders, files = self.listed(dirpath)
        except FileNotFoundError:  # gone meanwhile
            return None
        except PermissionError as exc:
            self.folder_problem("permission_denied", relpath, f"the folder cannot be read: {exc.strerror}")
            return None
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                self.folder_problem("too_deep_folder", relpath, "its path is longer than the system allows: not read")
            elif exc.errno != errno.ENOTDIR:  # a file now: the watcher reads it as one
                self.folder_problem("unreadable_folder", relpath, f"the folder cannot be read: {exc.strerror}")
            return None
        self.read_fine(relpath)
        return subfolders, files
