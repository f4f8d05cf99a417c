"""Follow one append-only file by byte offset, yielding only complete lines."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

READ_CHUNK = 8 * 1024 * 1024


@dataclass
class Line:
    number: int  # 1-based line number in the file
    data: bytes  # without the trailing newline


@dataclass
class TailResult:
    lines: list[Line] = field(default_factory=list)
    restarted: bool = False  # the file was truncated or replaced: lines start from line 1 again
    modified_at: float | None = None  # the file's mtime when read


class FileTailer:
    """Reads what was appended to a file since the last call.

    Only lines ending in ``\\n`` are returned; a partial last line is kept back
    (its bytes are re-read next time, not buffered) until it is completed, so it is
    never parsed half and never lost. A file that shrank below the read offset or
    whose inode changed is read again from the start.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self.offset = 0
        self.line_count = 0
        self._identity: tuple[int, int] | None = None

    def read(self) -> TailResult:
        result = TailResult()
        try:
            f = open(self.path, "rb")
        except FileNotFoundError:
            return result
        with f:
            st = os.fstat(f.fileno())
            identity = (st.st_dev, st.st_ino)
            result.modified_at = st.st_mtime
            if self._identity is not None and (identity != self._identity or st.st_size < self.offset):
                self.offset = 0
                self.line_count = 0
                result.restarted = True
            self._identity = identity
            if st.st_size == self.offset:
                return result
            f.seek(self.offset)
            carry = b""
            while True:
                chunk = f.read(READ_CHUNK)
                if not chunk:
                    break
                data = carry + chunk
                end = data.rfind(b"\n")
                if end < 0:
                    carry = data
                    continue
                for raw in data[:end].split(b"\n"):
                    self.line_count += 1
                    result.lines.append(Line(self.line_count, raw))
                self.offset += end + 1
                carry = data[end + 1 :]
        return result
