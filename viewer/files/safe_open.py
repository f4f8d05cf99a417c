"""Open a file of the watched folder for reading, safely: only regular files, only inside the folder.

Every read of a user's file goes through `open_regular`. The checks are made on the descriptor opened, not on the
path before, so a path swapped between a check and an open is caught: what is not a regular file is not opened, the
open never blocks (a FIFO swapped in opens at once and is refused), and the file opened must be a regular file
inside the folder unless the caller allows any place (`--follow-symlinks`).
"""

from __future__ import annotations

import os
import stat
import sys

_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
          | getattr(os, "O_BINARY", 0))
_F_GETPATH = 50  # macOS's fcntl command for the path of a descriptor


class RefusedFile(OSError):
    """A file the viewer will not read; `kind` is the problem kind shown for it."""

    kind = "refused"

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(detail)
        self.path = path
        self.detail = detail


class NotRegularFile(RefusedFile):
    kind = "not_a_regular_file"


class OutsideFolder(RefusedFile):
    kind = "outside_folder"


def refused_path(error: OSError, default: str | None) -> str | None:
    """The path of the file a refusal (RefusedFile, PermissionError) is about."""
    path = getattr(error, "path", None) or error.filename
    return os.path.abspath(os.fsdecode(path)) if isinstance(path, (str, bytes)) else default


def _descriptor_path(fd: int) -> str | None:
    """The real path of the file open on `fd`, as the system knows it; None where it cannot tell."""
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        target = None
    if target is not None:
        return target.removesuffix(" (deleted)")
    if sys.platform == "darwin":
        import fcntl

        try:
            return os.fsdecode(fcntl.fcntl(fd, _F_GETPATH, b"\0" * 1024).rstrip(b"\0"))
        except OSError:
            return None
    return None


def _opened_inside(fd: int, path: str, inside: str) -> bool:
    real = _descriptor_path(fd)
    if real is None:  # no way to ask the descriptor: the path's real target, if it is the very file opened
        real = os.path.realpath(path)
        try:
            st, opened = os.stat(real), os.fstat(fd)
        except OSError:
            return False
        if (st.st_dev, st.st_ino) != (opened.st_dev, opened.st_ino):
            return False
    return _lies_in(real, inside)


def _lies_in(real: str, inside: str) -> bool:
    """Whether the real path `real` is the folder `inside` (a real path) or lies under it."""
    return real == inside or real.startswith(os.path.join(inside, ""))


def folder_inside(folder: str, inside: str | None, seen: dict[str, str]) -> bool:
    """Whether `folder` is, by its real path, in `inside` (None: anywhere), as a checked open tells of a file: for
    a file told unchanged without being opened (store/group_cache), which is never vouched for once a folder above
    it was swapped for a link out of DIR. `seen`: the real paths of folders found just now, shared by the caller's
    checks made together."""
    return inside is None or _lies_in(_real_folder(folder, seen), inside)


def _real_folder(folder: str, seen: dict[str, str]) -> str:
    """os.path.realpath of `folder` ("" if it is no folder now), by one lstat of it and its parents' real paths in
    `seen` (a group's hundreds of files lie in two or three folders, a folder's thousands of groups under a few:
    os.path.realpath of each would cost more than reading a file's ends)."""
    real = seen.get(folder)
    if real is None:
        parent, name = os.path.split(folder)
        try:
            mode = os.lstat(folder).st_mode if name not in ("", ".", "..") else None
        except OSError:
            mode = 0
        if mode is None or stat.S_ISLNK(mode):
            real = os.path.realpath(folder)
        else:
            real = os.path.join(_real_folder(parent, seen), name) if stat.S_ISDIR(mode) else ""
        seen[folder] = real
    return real


def open_regular(path: str, inside: str | None, found: os.stat_result | None = None) -> int:
    """A read-only descriptor of the regular file at `path` (the caller closes it).

    `inside`: the real path of the folder the file must lie in (None: anywhere); `found`: the caller's own
    os.stat of `path` (a walk's), taken instead of another; a file swapped since is looked at again. Raises
    FileNotFoundError when nothing is there, RefusedFile (NotRegularFile, OutsideFolder) when the file may
    not be read, and OSError (PermissionError...) when it cannot be.
    """
    return opened_regular(path, inside, found)[0]


def opened_regular(path: str, inside: str | None, found: os.stat_result | None = None) -> tuple[int, os.stat_result]:
    """`open_regular`'s descriptor, and the stat of the file it is open on (taken by it: none taken again)."""
    before = os.stat(path) if found is None else found
    if not stat.S_ISREG(before.st_mode):  # not even opened: a writer waiting on a FIFO would go on, then lose its pipe
        raise NotRegularFile(path, f"not a regular file ({_file_type(before.st_mode)}): never read")
    fd = os.open(path, _FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(path, f"not a regular file ({_file_type(st.st_mode)}): never read")
        swapped = found is not None and (st.st_ino, st.st_dev) != (found.st_ino, found.st_dev)
        if not swapped and inside is not None and not _opened_inside(fd, path, inside):
            raise OutsideFolder(path, "leads outside the watched folder (see --follow-symlinks): never read")
    except BaseException:
        os.close(fd)
        raise
    if swapped:  # not the file the caller saw: judged as it is now, by a stat of its own
        os.close(fd)
        return opened_regular(path, inside)
    return fd, st


def open_regular_file(path: str, inside: str | None):
    """`open_regular` as a binary file object."""
    return os.fdopen(open_regular(path, inside), "rb")


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a file"
