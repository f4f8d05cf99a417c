"""Read session files of lines: follow an append-only file by byte offset (whole-file readers: whole_file).

Every file is opened through safe_open. What a file may cost is bounded (`Limits`): a line longer than
`max_line_bytes` is skipped as it streams by and reported `line_too_long`. A rewrite is told by content.
"""

from __future__ import annotations

import os
import re
import time
import zlib
from dataclasses import dataclass, field
from itertools import accumulate

import orjson

from viewer.core.open_files import OpenFiles
from viewer.core.tuning import Limits, Tuning

from .file_source import FileChanged, FileSource

READ_CHUNK = 1024 * 1024  # each C-level step on a chunk (find, split, copy) holds the GIL about a millisecond
FINGERPRINT_BYTES = 4096  # the bytes before the read offset whose CRC-32 tells a rewrite from an append
# A file whose mtime is this close to the moment it was last read may have been rewritten since, in the same
# tick of the file system's clock, with the same size: its status proves nothing; its bytes are checked.
RACY_NS = 100_000_000
MB = 1024 * 1024
# A last line without its newline is read once its file has not grown for this long (a writer mid-line writes
# again well within it), if it parses as a JSON object; a fragment that does not is reported once the file has
# been idle for Tuning.incomplete_after (it may still be finished: it is kept, and read when its newline comes).
SETTLE_NS = 2_000_000_000


def size_text(n: int) -> str:
    return f"{n / MB:.1f} MB" if n >= MB else f"{n:,} bytes"


@dataclass(slots=True)
class Line:
    number: int  # 1-based line number in the file
    data: bytes  # without the trailing newline
    offset: int = -1  # where `data` starts in the file; -1 when it cannot be read there again (gzip)


@dataclass
class TailResult:
    lines: list[Line] = field(default_factory=list)
    restarted: bool = False  # the file was truncated, replaced or rewritten: lines start from line 1 again
    modified_at: float | None = None  # the file's mtime when read
    error: str | None = None  # the file could not be read to its end (lines before the fault are kept)
    more: bool = False  # stopped at the byte limit: more complete lines wait; read again
    source: FileSource | None = None  # the file the lines' offsets point into (None: keep their bytes)
    problems: list[tuple[str, int | None, str]] = field(default_factory=list)  # (kind, line or None, detail)
    withdrawn: list[tuple[str, int | None, str]] = field(default_factory=list)  # problems reported before, gone now


class LineCutter:
    """Cuts a stream of bytes into lines, with bounded memory whatever the stream holds.

    Only lines ending in ``\\n`` are returned: the bytes of a line still open wait in `partial`
    (not parsed, not read again) until its newline arrives, so a line written in many chunks — even
    one splitting a UTF-8 character — is parsed once, whole. A line that grows past `max_line` is
    dropped at once and its remaining bytes only counted until its newline (`skipping`): never held
    whole, never copied again per chunk; it is reported once, as `line_too_long`. Blank lines are
    counted, not returned. Lines carry their offset in the stream when `offsets` is set.
    """

    __slots__ = ("max_line", "offsets", "number", "start", "position", "partial", "skipping", "taken")

    def __init__(self, max_line: int, offsets: bool) -> None:
        self.max_line = max_line
        self.offsets = offsets
        self.number = 0  # lines ended so far
        self.start = 0  # where the open line starts
        self.position = 0  # the end of the bytes fed so far
        self.partial = bytearray()  # the open line's bytes (empty while skipping it)
        self.skipping = False  # the open line is too long: counted, not kept
        self.taken = False  # the last line was taken without its newline (`take`): a newline next is its own

    def feed(self, chunk: bytes, lines: list[Line], problems: list) -> None:
        if self.taken:
            self.taken = False
            if chunk[:1] == b"\n":  # the newline of the line taken: it ends that line, not a blank one
                self.position += 1
                self.start = self.position
                chunk = chunk[1:]
                if not chunk:
                    return
        at = self.position
        self.position += len(chunk)
        begin = 0
        if self.skipping:
            newline = chunk.find(b"\n")
            if newline < 0:
                return
            self.skipping, self.number, begin = False, self.number + 1, newline + 1
            self.start = at + begin
        end = chunk.rfind(b"\n")
        if end < begin:
            self._hold(memoryview(chunk)[begin:], problems)
            return
        complete = end - begin + len(self.partial)  # bytes of the lines this chunk ends
        if complete > self.max_line or not self._cut(chunk, begin, lines):
            self._cut_carefully(chunk, begin, end, lines, problems)
        self.start = at + end + 1
        self.partial = bytearray()
        self._hold(memoryview(chunk)[end + 1:], problems)

    def _cut(self, chunk: bytes, begin: int, lines: list[Line]) -> bool:
        """The usual case: lines of fitting length from `begin` to the chunk's last newline; False, with nothing
        taken, if one of them is blank, or they are so many that they may be (a scan of the chunk for two newlines
        cost as much as cutting it: blank lines are found in the pieces instead, and a chunk of newlines is never
        made a list of millions of pieces)."""
        data = chunk if begin == 0 else chunk[begin:]
        most = len(data) // _SHORTEST_LINE + 1
        pieces = data.split(b"\n", most)
        if len(pieces) > most:
            return False
        pieces.pop()  # the open line after the last newline: held by the caller
        if self.partial:
            pieces[0] = bytes(self.partial) + pieces[0]
        if b"" in pieces:
            return False
        numbers = range(self.number + 1, self.number + 1 + len(pieces))
        if self.offsets:  # each line starts one byte (its newline) after the one before ends: made in C, not a loop
            starts = accumulate(map(_AND_NEWLINE, map(len, pieces)), initial=self.start)
            lines.extend(map(Line, numbers, pieces, starts))
        else:
            lines.extend(map(Line, numbers, pieces))
        self.number += len(pieces)
        return True

    def _cut_carefully(self, chunk: bytes, begin: int, end: int, lines: list[Line], problems: list) -> None:
        """Lines that may be blank (counted, skipped) or too long (reported, skipped). A run of newlines is
        one match, so a chunk of blank lines costs a scan, not a step per line."""
        data = bytes(self.partial) + chunk[begin:end + 1] if self.partial else chunk[begin:end + 1]
        ended, start = self.number, 0  # lines ended before `start`
        for run in _NEWLINES.finditer(data):
            stop = run.start()
            if stop > start:  # the line [start, stop): not blank
                number = ended + 1
                if stop - start > self.max_line:
                    problems.append(("line_too_long", number, f"a line of {size_text(stop - start)} skipped "
                                                              f"(limit {size_text(self.max_line)}, --max-line-bytes)"))
                elif self.offsets:
                    lines.append(Line(number, data[start:stop], self.start + start))
                else:
                    lines.append(Line(number, data[start:stop]))
            ended += run.end() - stop
            start = run.end()
        self.number = ended

    def _hold(self, rest: memoryview, problems: list) -> None:
        if not rest:
            return
        if len(self.partial) + len(rest) <= self.max_line:
            self.partial += rest
            return
        self.partial = bytearray()
        self.skipping = True
        problems.append(("line_too_long", self.number + 1, f"a line longer than {size_text(self.max_line)} skipped "
                                                           f"(--max-line-bytes); the lines after it are read"))

    def take(self, lines: list[Line]) -> None:
        """The open line is complete though its newline has not come (`FileTailer` judged it): it is read now,
        and its newline, if it comes later, ends it rather than starting a blank line."""
        self.number += 1
        lines.append(Line(self.number, bytes(self.partial), self.start if self.offsets else -1))
        self.start = self.position
        self.partial = bytearray()
        self.taken = True

    def finish(self, lines: list[Line]) -> None:
        """The stream ended: its last line needs no newline (a finished archive)."""
        if self.partial and not self.skipping and bytes(self.partial).strip():
            self.number += 1
            lines.append(Line(self.number, bytes(self.partial), self.start if self.offsets else -1))
        self.partial = bytearray()


_NEWLINES = re.compile(rb"\n+")
_AND_NEWLINE = (1).__add__  # a line's length with its newline
_SHORTEST_LINE = 16  # bytes a line has on average at least, or its chunk is cut carefully (no event is shorter)


class FileTailer:
    """Reads what was appended to a file since the last call.

    Only complete lines are returned (see `LineCutter`). A file that shrank below what was read,
    whose inode changed, or whose bytes just before the read position are no longer those read (a
    CRC-32 of up to FINGERPRINT_BYTES of them, checked whenever the file grew or its mtime moved: a
    rewrite with more bytes is not an append) is read again from the start (`restarted`). An idle
    poll costs one stat; a read that finds new bytes, one more pread of at most FINGERPRINT_BYTES.

    A last line without its newline (many finished files end so) is judged once the file has not grown
    for SETTLE_NS (see `_settle`): read if it parses as a JSON object, else reported `incomplete_last_line`
    once the file has been idle for `incomplete_after` seconds, and kept waiting for the rest of it either way;
    that report is `withdrawn` when the file grows again (the line is read once its newline comes).
    """

    def __init__(self, path: str | os.PathLike, limit: int | None = None, inside: str | None = None,
                 limits: Limits | None = None, incomplete_after: float = Tuning.incomplete_after,
                 files: OpenFiles | None = None):
        self._path = os.fspath(path)
        self.files = files if files is not None else OpenFiles()  # where its sources are held open: its app's
        self.limit = limit  # at most about this many bytes per read (None: all there is)
        self.inside = inside
        self.limits = limits or Limits()
        self._lines = LineCutter(self.limits.max_line_bytes, offsets=True)
        self._source: FileSource | None = None  # the file being read, while it is the file at `path`
        self._mtime_ns = 0
        self._checked_ns = 0  # when the bytes were last read or checked
        self._fingerprint: tuple[int, int] | None = None  # (start, CRC-32) of the bytes up to the read position
        self._unsettled = False  # an open last line not yet judged (read, or reported incomplete)
        self._fragment = False  # ... found not to parse: only its report waits (it is not parsed again)
        self._incomplete_ns = int(incomplete_after * 1_000_000_000)
        self._reported: tuple[str, int, str] | None = None  # the open line's `incomplete_last_line`, once reported

    @property
    def path(self) -> str:
        return self._path

    @path.setter
    def path(self, path: str) -> None:  # renamed: the same file, read (and reopened) at its new name
        self._path = path
        if self._source is not None:
            self._source.path = path

    @property
    def offset(self) -> int:
        """The end of the last complete line read."""
        return self._lines.start

    @property
    def source(self) -> FileSource | None:
        """The file being read (what the index's offsets point into)."""
        return self._source

    @property
    def line_count(self) -> int:
        return self._lines.number

    @property
    def _partial(self) -> bytearray:
        return self._lines.partial

    def state(self) -> dict:
        """How far the file is read, as plain data (kept by the persistent cache; see `resume`)."""
        lines = self._lines
        return {"identity": self._source.identity if self._source is not None else None,
                "number": lines.number, "start": lines.start, "position": lines.position,
                "partial": bytes(lines.partial), "skipping": lines.skipping, "taken": lines.taken,
                "fingerprint": self._fingerprint, "unsettled": self._unsettled, "fragment": self._fragment,
                "reported": self._reported}

    def resume(self, state: dict, source: FileSource | None = None, unchanged: tuple[int, int] | None = None) -> bool:
        """Go on from a `state` of this file kept by an earlier run: its next read takes only what came after,
        with the checks of any read (bytes before the position rewritten, shorter, another inode: read again
        from the start, `restarted`). False, and nothing changed, when the file at `path` is not that file.
        `source`: the file opened already (by the caller's checks), not opened again. `unchanged`: (its modification
        time, when it was known to hold the bytes read), for a file a restart told unchanged by its stat: its next
        read is then an idle poll's one stat while that stat stays (a walk after a restart opens none of them)."""
        source = FileSource(self._path, self.inside, pool=self.files) if source is None else source
        position = state["position"]
        if source.identity != tuple(state["identity"] or ()) or (position and not state["fingerprint"]):
            source.retire()
            return False
        lines = self._lines
        lines.number, lines.start, lines.position = state["number"], state["start"], position
        lines.partial, lines.skipping, lines.taken = bytearray(state["partial"]), state["skipping"], state["taken"]
        self._source = source
        self._unsettled, self._fragment = state["unsettled"], state["fragment"]
        reported = state.get("reported")
        self._reported = tuple(reported) if reported else None
        if position:
            start, crc = self._fingerprint = tuple(state["fingerprint"])
            source.size, source.check = position, (start, position, crc)
        if unchanged is not None:
            self._mtime_ns, self._checked_ns = unchanged
        return True

    def read(self, limit: int | None = None) -> TailResult:
        """The complete lines appended since the last call; with a limit, about that many bytes read at most
        and `more` set when the rest waits for the next call."""
        limit = self.limit if limit is None else limit
        result = TailResult()
        now = time.time_ns()  # before the stat: a write after it has a later mtime (or the same tick: racy)
        try:
            st = os.stat(self._path)
        except FileNotFoundError:
            return result
        result.modified_at = st.st_mtime
        source = self._source
        if (source is not None and not source.changed and source.identity == (st.st_dev, st.st_ino)
                and st.st_size == self._lines.position and st.st_mtime_ns == self._mtime_ns
                and st.st_mtime_ns < self._checked_ns - RACY_NS):
            result.source = source
            if self._unsettled:  # no more than the stat either: the open line is in memory
                self._settle(st, now, result)
            return result  # an idle poll: one stat
        try:
            self._read_new(st, now, limit, result)
        except FileChanged:  # replaced while it was being read: what was read of it is void
            result.lines.clear()
            result.problems.clear()
            result.withdrawn.clear()
            self._start_over(result)
            self._read_new(st, now, limit, result)
        except FileNotFoundError:  # gone meanwhile
            pass
        return result

    def _read_new(self, st: os.stat_result, now: int, limit: int | None, result: TailResult) -> None:
        source = self._source
        window = None
        if source is not None and not source.changed and source.identity == (st.st_dev, st.st_ino):
            window = self._window_if_unchanged()
        if window is None:
            self._start_over(result)
            window = b""
        self._mtime_ns, self._checked_ns = st.st_mtime_ns, now
        result.source = self._source
        before = self._lines.position
        self._remember(self._read_lines(limit, window, result, st.st_size))
        lines = self._lines
        if lines.position != before:  # the open line (if any) is new or grew: judged again
            if self._reported is not None:
                result.withdrawn.append(self._reported)
                self._reported = None
            self._unsettled, self._fragment = bool(lines.partial) and not lines.skipping, False
        # else only the file's time changed (or a run taken from the cache is reading on): judged as it was
        if self._unsettled and not result.more:
            self._settle(st, now, result)

    def _settle(self, st: os.stat_result, now: int, result: TailResult) -> None:
        """Judge the open last line of a file that has not grown for SETTLE_NS: a JSON object is read (a
        finished file's last line); anything else waits, and is reported once after `incomplete_after`."""
        idle = now - st.st_mtime_ns
        if idle < min(SETTLE_NS, self._incomplete_ns):
            return
        lines = self._lines
        if not self._fragment:
            try:
                whole = lines.partial.lstrip()[:1] == b"{" and isinstance(orjson.loads(lines.partial), dict)
            except orjson.JSONDecodeError:
                whole = False
            if whole:
                lines.take(result.lines)
                self._unsettled = False
                return
            self._fragment = True
        if idle >= self._incomplete_ns:
            self._unsettled = False
            self._reported = ("incomplete_last_line", lines.number + 1,
                              f"the file ends in {size_text(len(lines.partial))} that are not a whole line and has "
                              f"not grown for {idle / 1_000_000_000:.0f} s: it is read if the rest of it comes")
            result.problems.append(self._reported)

    def _window_if_unchanged(self) -> bytes | None:
        """The bytes just before the read position if they are still those read (their CRC-32); else None."""
        position = self._lines.position
        if position == 0:
            return b""
        start, crc = self._fingerprint
        try:
            window = self._source.read(start, position - start)
        except FileChanged:
            return None
        return window if len(window) == position - start and zlib.crc32(window) == crc else None

    def _start_over(self, result: TailResult) -> None:
        """Read the file at `path` from its start; a file read before is `restarted`."""
        fresh = FileSource(self._path, self.inside, pool=self.files)
        if self._source is not None:
            self._source.retire()  # events still pointing into it show "changed on disk", never other bytes
            self._lines = LineCutter(self.limits.max_line_bytes, offsets=True)
            self._fingerprint = None
            self._reported = None  # the session is read again from its start: its problems with it
            self._unsettled = self._fragment = False
            result.restarted = True
        self._source = fresh

    def _read_lines(self, limit: int | None, window: bytes, result: TailResult, size: int) -> bytes:
        """Feed what was appended to the line cutter; the last FINGERPRINT_BYTES bytes read (with `window`).

        `size`: the file's size when it was looked at. A read asks for one byte more than is left of that, not a
        whole READ_CHUNK (a buffer of that size for each of thousands of small files), and one that comes back short
        reached the file's end: no read more to find it. A file that grew meanwhile is read on in whole chunks."""
        lines, source, got = self._lines, self._source, 0
        while True:
            want = READ_CHUNK if limit is None else min(READ_CHUNK, limit - got)
            if 0 <= size - lines.position < want:
                want = size - lines.position + 1
            chunk = source.read(lines.position, want)
            if not chunk:
                break
            lines.feed(chunk, result.lines, result.problems)
            window = chunk[-FINGERPRINT_BYTES:] if len(chunk) >= FINGERPRINT_BYTES else (
                window + chunk)[-FINGERPRINT_BYTES:]
            got += len(chunk)
            if limit is not None and got >= limit:
                result.more = True
                break
            if len(chunk) < want:  # the end of the file as it is now
                break
        return window

    def _remember(self, window: bytes) -> None:
        """Fingerprint the bytes before the read position; tell the source what it must still hold if reopened."""
        position = self._lines.position
        if position == 0:
            return
        start, crc = position - len(window), zlib.crc32(window)
        self._fingerprint = (start, crc)
        self._source.size = position
        self._source.check = (start, position, crc)
