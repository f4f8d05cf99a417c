"""Readers of files read whole, again whenever they change: gzip session files, and JSON documents.

What they may cost is bounded by the same `tailer.Limits`: a gzip file inflating beyond `max_file_bytes`,
or a document whose parse would take more, is `too_large`; an over-long line is skipped as it streams by.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator

from .safe_open import open_regular_file
from .tailer import Limits, LineCutter, TailResult, size_text

# A whole file (gzip, a snapshot) is read and inflated this much at a time: zlib lets other threads run meanwhile.
READ_CHUNK = 8 * 1024 * 1024


class WholeFileReader:
    """Base of the readers that read a file whole, again whenever it changes (a new inode, size or mtime)."""

    def __init__(self, path: str | os.PathLike, inside: str | None = None, limits: Limits | None = None):
        self.path = os.fspath(path)
        self.inside = inside
        self.limits = limits or Limits()
        self._stamp: tuple[int, int, int, int] | None = None

    def _open_if_changed(self, result: TailResult):
        """The file, open, when it changed since the last read (noted in `result`); else None."""
        try:
            f = open_regular_file(self.path, self.inside)
        except FileNotFoundError:
            return None
        st = os.fstat(f.fileno())
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

    It is inflated a chunk at a time and cut into lines as it goes: an over-long line is skipped
    without being held, and reading stops (`too_large`) once more than `max_file_bytes` were inflated,
    so the lines kept never exceed that. A truncated or corrupt stream keeps every complete line
    before the fault and says why.
    """

    def read(self) -> TailResult:
        result = TailResult()
        if (f := self._open_if_changed(result)) is None:
            return result
        cutter = LineCutter(self.limits.max_line_bytes, offsets=False)
        cap = self.limits.max_file_bytes
        with f:
            try:
                for chunk in _gunzip(f):
                    if cutter.position + len(chunk) > cap:
                        cutter.feed(chunk[: cap - cutter.position], result.lines, result.problems)
                        result.problems.append(("too_large", None, f"inflates to more than {size_text(cap)} "
                                                f"(--max-file-bytes): read up to line {cutter.number}"))
                        return result
                    cutter.feed(chunk, result.lines, result.problems)
            except (EOFError, zlib.error) as exc:
                result.error = f"gzip stream unreadable after line {cutter.number}: {exc}"
                return result
            cutter.finish(result.lines)
        return result


def _gunzip(f, out_chunk: int = READ_CHUNK) -> Iterator[bytes]:
    """Inflated chunks (each at most `out_chunk` bytes) of a gzip file, all its members; a cut-off stream
    yields all it can, then raises."""
    decompressor, fed = zlib.decompressobj(wbits=31), False
    while compressed := f.read(1024 * 1024):
        while compressed:
            fed = True
            yield from _inflate(decompressor, compressed, out_chunk)
            if not decompressor.eof:
                break
            compressed = decompressor.unused_data  # the next member, if any
            decompressor, fed = zlib.decompressobj(wbits=31), False
    if fed:
        yield decompressor.flush()
        raise EOFError("the file ends before the end of its compressed stream")


def _inflate(decompressor, data: bytes, out_chunk: int) -> Iterator[bytes]:
    """All that `data` inflates to, at most `out_chunk` bytes at a time: a bomb is never inflated whole."""
    while True:
        out = decompressor.decompress(data, out_chunk)
        if out:
            yield out
        data = decompressor.unconsumed_tail
        if decompressor.eof or (not data and len(out) < out_chunk):
            return


def read_document(f, limits: Limits, result: TailResult) -> bytes | None:
    """A whole JSON document (inflated if it is gzip) from an open file; None, with `too_large` noted, when
    parsing it would cost more than `max_file_bytes`: its bytes plus about 100 bytes per object or array
    in it (what a parsed `{}` costs), counted as it is read, so a bomb stops early. Raises EOFError or
    zlib.error for a broken gzip stream."""
    cap = limits.max_file_bytes
    gzipped = f.read(2) == b"\x1f\x8b"
    f.seek(0)
    data, cost = bytearray(), 0
    for chunk in _gunzip(f) if gzipped else iter(lambda: f.read(READ_CHUNK), b""):
        cost += len(chunk) + 100 * (chunk.count(b"{") + chunk.count(b"["))
        if cost > cap:
            result.problems.append(("too_large", None, f"a document that would take more than {size_text(cap)} "
                                                       f"parsed (--max-file-bytes): not read"))
            return None
        data += chunk
    return bytes(data)
