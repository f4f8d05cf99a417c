"""Reading ahead of a folder's first walk: a thread beside it brings into the page cache the folders the walk will
list and the first page of each file it listed, in the order of their inodes, so that on a cold disk the walk finds
them cached rather than wait on each in name order (random on disk). It goes only where the walk goes, opens a file
only as a read may (safe_open), reads at most its first byte and only from the cache, keeps no descriptor, leaves
the files the walk has passed, and stops once a run of files is found cached (docs/design.md, "Threads").
"""

from __future__ import annotations

import os
import threading
from collections import deque

from viewer.files.safe_open import opened_regular

FIRST_PAGE = 4096  # what the walk reads of a file to tell its format
CACHED_RUN = 64  # files in a row found in the page cache before reading ahead stops
_WILLNEED = getattr(os, "POSIX_FADV_WILLNEED", None)  # None: the kernel cannot be asked (then nothing is done)
_NOWAIT = getattr(os, "RWF_NOWAIT", None)  # a read that fails rather than wait on the disk (Linux)


class ReadAhead:
    """A thread reading ahead of the first walk of `folders` (Folders.walk): `listed(...)` for each folder the walk
    lists, `passed` the count of files the walk has given so far, `stop()` at its end."""

    def __init__(self, folders) -> None:
        self._inside, self._list_folder = folders.inside, folders.listed
        self._files: deque = deque()  # (folder, place in its files in name order, entry): brought in first
        self._folders: deque = deque()  # folders the walk will list: listed here first, when no file waits
        self._listed: set[str] = set()  # folders whose files were queued (by the walk's listing or this thread's)
        self._firsts: dict[str, int] = {}  # folder -> the walk's number for its first file
        self.passed = 0  # files the walk has given: those are left alone
        self._ready = threading.Condition()
        self.over = _WILLNEED is None  # stopped, or found not worth it
        self._cached_run = 0
        self._thread = threading.Thread(target=self._run, name="agentview-read-ahead", daemon=True)
        if not self.over:
            self._thread.start()

    def listed(self, folder: str, files: list[os.DirEntry], subfolders: list[str], first: int) -> None:
        """The walk listed `folder`: its session files in name order, which it numbers from `first`, and the
        folders below it that it will list."""
        if self.over:
            return
        with self._ready:
            self._firsts[folder] = first
            if folder not in self._listed:
                self._listed.add(folder)
                self._files.extendleft(reversed(_in_inode_order(folder, files)))  # the walk is at them now
            self._folders.extend(subfolders)
            self._ready.notify()

    def stop(self) -> None:
        with self._ready:
            self.over = True
            self._files.clear()
            self._folders.clear()
            self._ready.notify()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._files and not self._folders and not self.over:
                    self._ready.wait()
                if self.over:
                    return
                file = self._files.popleft() if self._files else None
                folder = self._folders.popleft() if file is None else None
                first = None if file is None else self._firsts.get(file[0])
            if folder is not None:
                self._list(folder)
            elif first is not None and first + file[1] < self.passed:
                continue  # the walk is past it
            elif self._cached(file[2].path):
                self._cached_run += 1
                if self._cached_run >= CACHED_RUN:
                    self.over = True
                    return
            else:
                self._cached_run = 0

    def _list(self, folder: str) -> None:
        """List a folder before the walk does (its directory's blocks then cached), its files to be brought in."""
        if folder in self._listed:
            return
        try:
            _, files = self._list_folder(folder)
        except (OSError, ValueError):  # the walk says why
            return
        with self._ready:
            if folder not in self._listed:  # else the walk listed it meanwhile, and gave its files
                self._listed.add(folder)
                self._files.extend(_in_inode_order(folder, files))

    def _cached(self, path: str) -> bool:
        """Whether a file's first page is in the page cache; when not, the kernel is asked to bring it in."""
        try:
            fd, _ = opened_regular(path, self._inside)
        except (OSError, ValueError):  # refused or gone: the walk lists it with its problem
            return False
        try:
            if _NOWAIT is not None:
                try:
                    os.preadv(fd, [bytearray(1)], 0, _NOWAIT)
                    return True
                except BlockingIOError:
                    pass
            os.posix_fadvise(fd, 0, FIRST_PAGE, _WILLNEED)
            return False
        except OSError:
            return False
        finally:
            os.close(fd)


def _in_inode_order(folder: str, entries: list[os.DirEntry]) -> list[tuple[str, int, os.DirEntry]]:
    """(folder, place in name order, entry) of the regular files among a folder's session files in name order
    (told by their directory entries: no system call), in the order of their inodes."""
    plain = []
    for place, entry in enumerate(entries):
        try:
            if entry.is_file(follow_symlinks=False):
                plain.append((entry.inode(), place, entry))
        except OSError:
            continue
    plain.sort(key=lambda item: item[0])
    return [(folder, place, entry) for _, place, entry in plain]
