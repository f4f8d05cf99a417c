"""Session files found gone, whose sessions a watcher keeps a little while: the move that took them may be told later."""

from __future__ import annotations

import os
import time


class GoneFiles:
    """The session files found gone, each with when it was first found so: kept `keep_for` seconds before forgotten.

    A folder's rename can be told after its files were found gone: a polling snapshot taken while the folder was
    renamed lists the folder but none of its files (watchdog's walk stats a folder's entries before it lists the
    ones inside), and tells them deleted; the rename comes with the next snapshot. Kept until then, a session
    follows the move instead of being read again from its start under its new name."""

    def __init__(self, keep_for: float) -> None:
        self.keep_for = keep_for
        self._since: dict[str, float] = {}  # path -> monotonic time it was first found gone

    def keep(self, path: str) -> bool:
        """Whether the session of `path`, found gone now, is kept for now (else it is to be forgotten now)."""
        now = time.monotonic()
        if now - self._since.setdefault(path, now) < self.keep_for:
            return True
        del self._since[path]
        return False

    def back(self, path: str) -> None:
        """`path` is there again, or its session moved or was forgotten: nothing more to wait for."""
        self._since.pop(path, None)

    def due(self) -> list[str]:
        """The files kept as long as they may be: each is to be looked at again (and forgotten if still gone)."""
        now = time.monotonic()
        return [path for path, since in list(self._since.items()) if now - since >= self.keep_for]

    def next_due(self) -> float | None:
        """When (monotonic) the next file is due, if any."""
        return min(self._since.values()) + self.keep_for if self._since else None


class ListedLately:
    """The session files a watcher listed lately, by identity (device, inode): a file listed at a new path whose
    identity is one of theirs, while that one's path holds it no more, is that file moved. A rename the watcher
    learns of only as a new file (the folder walked between two polling snapshots listed it; the snapshot after the
    rename shows only the new path) is so taken as the move it is. What the files hold is checked as for any move:
    a file that only reuses a deleted one's inode is read again from its start (the tailer's fingerprint)."""

    def __init__(self, most: int) -> None:
        self.most = most
        self._paths: dict[tuple[int, int], str] = {}  # identity -> path, the latest listed last

    def moved_from(self, path: str) -> str | None:
        """The path of a file listed lately that the one now at `path` is, moved; else None (`path` is noted)."""
        identity = identity_of(path)
        if identity is None:
            return None
        earlier = self._paths.pop(identity, None)
        self._paths[identity] = path
        if len(self._paths) > self.most:
            del self._paths[next(iter(self._paths))]
        return earlier if earlier is not None and earlier != path and identity_of(earlier) != identity else None


def identity_of(path: str) -> tuple[int, int] | None:
    """The (device, inode) of the file at `path` (where a symlink leads), None when there is none."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino
