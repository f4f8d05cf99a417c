"""Reading session files: the reader for each kind of file, and the lines of the files of a multi-file session."""

from __future__ import annotations

import os
from collections.abc import Iterator

from viewer.core.open_files import OpenFiles
from viewer.core.tuning import Limits, Tuning
from viewer.files.tailer import FileTailer, Line
from viewer.files.whole_file import GzipReader
from viewer.formats import ai_agent
from viewer.formats.detect import GZIP_SUFFIX


def reader_for(path: str, limit: int | None = None, inside: str | None = None,
               limits: Limits | None = None, tuning: Tuning | None = None,
               files: OpenFiles | None = None) -> FileTailer | GzipReader:
    """The reader of a session file, within `limits`; a plain file (or a `.json` one of OTLP/JSON requests) is
    tailed `limit` bytes at a time at most, its open last line reported after `tuning.incomplete_after`.

    `inside`: the real path of the folder the file opened must lie in (None: anywhere); the reader
    raises RefusedFile or PermissionError for a file that may not or cannot be read. `files`: the app's open files
    (Host.files) its tailer keeps its file in; None: a pool of its own."""
    if ai_agent.is_snapshot_name(path):
        return ai_agent.SnapshotReader(path, inside=inside, limits=limits, limit=limit, files=files)
    if path.endswith(GZIP_SUFFIX):
        return GzipReader(path, inside=inside, limits=limits)
    return FileTailer(path, limit, inside=inside, limits=limits,
                      incomplete_after=(tuning or Tuning).incomplete_after, files=files)


def read_some(reader, batch: int = Tuning.group_batch_bytes):
    """The next read of one file of a multi-file session: `batch` bytes of a tailed file (Tuning.group_batch_bytes),
    a whole file whole."""
    return reader.read(batch) if isinstance(reader, FileTailer) else reader.read()


def lines_from(reader, first, replaced: list, problems: list | None = None,
               batch: int = Tuning.group_batch_bytes) -> Iterator[Line]:
    """The lines of a first read, then the rest of the file read as they are used; a file replaced
    meanwhile stops here and is noted in `replaced`; the problems of the later reads go to `problems`."""
    result = first
    while True:
        yield from result.lines
        if not result.more:
            return
        result = read_some(reader, batch)
        if problems is not None:
            problems.extend(result.problems)
        if result.restarted:
            replaced.append(reader.path)
            return


def read_so_far(path: str, reader) -> dict | None:
    """{"read", "size"} of a file a tailer reads part way (None: read whole, as gzip and snapshots are, or gone)."""
    reader = getattr(reader, "tail", None) or reader  # a .json file of OTLP/JSON requests: its tailer
    if not isinstance(reader, FileTailer):
        return None
    try:
        size = os.stat(path).st_size
    except OSError:
        return None
    return {"read": min(reader.offset, size), "size": size}


def not_read_yet(paths) -> dict:
    """{"read": 0, "size"} of files listed before they are read (the files of a multi-file session found by a
    scan wait for it to end)."""
    size = 0
    for path in paths:
        try:
            size += os.stat(path).st_size
        except OSError:
            pass
    return {"read": 0, "size": size}
