"""Read session files: follow an append-only file by byte offset, or read a gzip file whole."""

from __future__ import annotations

import os
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from .safe_open import open_regular, open_regular_file

try:
    import resource
except ImportError:  # not POSIX: no descriptor limit to read
    resource = None


READ_CHUNK = 8 * 1024 * 1024
BATCH_BYTES = 8 * 1024 * 1024  # a big file is ingested this much at a time: memory stays bounded


@dataclass(slots=True)
class Line:
    number: int  # 1-based line number in the file
    data: bytes  # without the trailing newline
    offset: int = -1  # where `data` starts in the file; -1 when it cannot be read there again (gzip)


@dataclass
class TailResult:
    lines: list[Line] = field(default_factory=list)
    restarted: bool = False  # the file was truncated or replaced: lines start from line 1 again
    modified_at: float | None = None  # the file's mtime when read
    error: str | None = None  # the file could not be read to its end (lines before the fault are kept)
    more: bool = False  # stopped at the byte limit: more complete lines wait; read again
    source: FileSource | None = None  # the open file the lines' offsets point into (None: keep their bytes)


_PREAD = getattr(os, "pread", None)


def _held_limit() -> int:
    """How many files may be held open: half the descriptors this process may have, so other opens never fail."""
    if resource is None:
        return 0
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 1 << 20 if soft == resource.RLIM_INFINITY else max(0, soft // 2)


def hold_more_files() -> None:
    """Let this process open as many files as its hard limit allows (a server holds one per session file)."""
    if resource is not None:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            except (ValueError, OSError):  # e.g. macOS caps the soft limit below an infinite hard one
                pass
    FileSource.limit = _held_limit()


class FileSource:
    """A file held open (one descriptor) and read at offsets, so the index keeps where a line is, not its bytes.

    `os.pread` does not move a shared file position, so request threads read while the tailer
    appends. The descriptor is closed when nothing refers to the source any more. A file still
    open after a rename or unlink keeps its bytes readable: what was indexed stays readable
    until the session is read again.
    """

    __slots__ = ("fd", "identity", "__weakref__")
    held = 0  # sources open in this process
    limit = _held_limit()
    _count_lock = threading.Lock()

    def __init__(self, path: str, inside: str | None = None) -> None:
        self.fd = -1
        fd = open_regular(path, inside)
        with FileSource._count_lock:
            FileSource.held += 1
        self.fd = fd
        st = os.fstat(fd)
        self.identity = (st.st_dev, st.st_ino)

    @classmethod
    def can_hold_more(cls) -> bool:
        return cls.held < cls.limit

    def read(self, offset: int, length: int) -> bytes:
        if _PREAD is not None:
            return _PREAD(self.fd, length, offset)
        with FileSource._count_lock:  # no pread (Windows): seek and read may not interleave
            os.lseek(self.fd, offset, os.SEEK_SET)
            return os.read(self.fd, length)

    def __del__(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
            with FileSource._count_lock:
                FileSource.held -= 1


def _open(path: str, inside: str | None = None):
    """The file, open for reading, and its fstat; None when it is gone."""
    try:
        f = open_regular_file(path, inside)
    except FileNotFoundError:
        return None
    return f, os.fstat(f.fileno())


class FileTailer:
    """Reads what was appended to a file since the last call.

    Only lines ending in ``\\n`` are returned. The bytes of a partial last line are kept
    (not parsed) until its newline arrives, so a line written in many chunks — even one
    splitting a UTF-8 character — is parsed once, whole, and a long line being written
    slowly is read once, not again on every append. A file that shrank below what was
    read, or whose inode changed, is read again from the start.
    """

    def __init__(self, path: str | os.PathLike, limit: int | None = None, inside: str | None = None):
        self.path = os.fspath(path)
        self.inside = inside
        self.limit = limit  # at most about this many bytes of lines per read (None: all there is)
        self.offset = 0  # end of the last complete line
        self.line_count = 0
        self._partial = b""  # bytes after `offset` already read, waiting for their newline
        self._identity: tuple[int, int] | None = None
        self._source: FileSource | None = None  # held open while it is the file at `path`

    def _open(self) -> tuple[FileSource, os.stat_result] | None:
        """The file now at `path` and its status: the one held when it is still that file (one stat, the
        poll's only system call when nothing was appended); None when it is gone."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        if self._source is not None and self._source.identity == (st.st_dev, st.st_ino):
            return self._source, st
        try:
            source = FileSource(self.path, self.inside)
        except FileNotFoundError:
            return None
        return source, os.fstat(source.fd)  # the file opened, which may not be the one stat saw

    def read(self, limit: int | None = None) -> TailResult:
        """The complete lines appended since the last call; with a limit, about that many bytes of them at most
        (a line is never cut) and `more` set when the rest waits for the next call."""
        limit = self.limit if limit is None else limit
        result = TailResult()
        if (opened := self._open()) is None:
            return result
        source, st = opened
        identity = source.identity
        result.modified_at = st.st_mtime
        read_to = self.offset + len(self._partial)
        if self._identity is not None and (identity != self._identity or st.st_size < read_to):
            self.offset, self.line_count, self._partial, read_to = 0, 0, b"", 0
            result.restarted = True
        self._identity = identity
        # Held open only while there are descriptors to spare; otherwise lines keep their bytes.
        held = source is self._source or FileSource.can_hold_more()
        self._source = source if held else None
        result.source = self._source
        if st.st_size == read_to:
            return result
        consumed = 0
        while chunk := source.read(read_to, READ_CHUNK if limit is None else min(READ_CHUNK, limit)):
            read_to += len(chunk)
            data = self._partial + chunk
            end = data.rfind(b"\n")
            if end < 0:
                self._partial = data
                continue
            start = self.offset
            lines, count = result.lines, self.line_count
            for raw in data[:end].split(b"\n"):
                count += 1
                lines.append(Line(count, raw, start))
                start += len(raw) + 1
            self.line_count = count
            self.offset += end + 1
            self._partial = data[end + 1 :]
            consumed += end + 1
            if limit is not None and consumed >= limit:
                result.more = True
                break
        return result


class WholeFileReader:
    """Base of the readers that read a file whole, again whenever it changes (a new inode, size or mtime)."""

    def __init__(self, path: str | os.PathLike, inside: str | None = None):
        self.path = os.fspath(path)
        self.inside = inside
        self._stamp: tuple[int, int, int, int] | None = None

    def _open_if_changed(self, result: TailResult):
        """The file, open, when it changed since the last read (noted in `result`); else None."""
        if (opened := _open(self.path, self.inside)) is None:
            return None
        f, st = opened
        stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        result.modified_at = st.st_mtime
        if stamp == self._stamp:
            f.close()
            return None
        result.restarted = self._stamp is not None
        self._stamp = stamp
        return f


class GzipReader(WholeFileReader):
    """Reads a ``.jsonl.gz`` file whole: compressed files are read, not tailed.

    A truncated or corrupt stream keeps every complete line before the fault and says why.
    """

    def read(self) -> TailResult:
        result = TailResult()
        if (f := self._open_if_changed(result)) is None:
            return result
        with f:
            partial, number = b"", 0
            try:
                for chunk in _gunzip(f):
                    data = partial + chunk
                    *complete, partial = data.split(b"\n")
                    for raw in complete:
                        number += 1
                        result.lines.append(Line(number, raw))
            except (EOFError, zlib.error) as exc:
                result.error = f"gzip stream unreadable after line {number}: {exc}"
                return result
            if partial:  # a finished archive: its last line needs no newline
                result.lines.append(Line(number + 1, partial))
        return result


def _gunzip(f) -> Iterator[bytes]:
    """Decompressed chunks of a gzip file, all its members; a cut-off stream yields all it can, then raises."""
    decompressor, fed = zlib.decompressobj(wbits=31), False
    while compressed := f.read(READ_CHUNK):
        while compressed:
            fed = True
            yield decompressor.decompress(compressed)
            if not decompressor.eof:
                break
            compressed = decompressor.unused_data  # the next member, if any
            decompressor, fed = zlib.decompressobj(wbits=31), False
    if fed:
        yield decompressor.flush()
        raise EOFError("the file ends before the end of its compressed stream")
