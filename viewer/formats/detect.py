"""Recognizing a file: whether it is a session file, its format by its content, and the other files of its session.

The Library asks here; it knows no single format by name.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

from viewer.files import database

from . import (
    AI_AGENT,
    CLAUDE_CODE,
    CODEX,
    GEMINI,
    NATIVE,
    OTLP_JSON,
    STORE_FORMATS,
    UNRECOGNIZED,
    Format,
    ai_agent,
    claude_code_layout,
    codex,
    detect_record,
    gemini,
    opencode_storage,
)
from .base import first_record
from .opencode_store import NotAStore

SESSION_SUFFIX = ".jsonl"
GZIP_SUFFIX = ".jsonl.gz"  # read whole, not tailed
STORE_SUFFIX = ".db"  # a database: it may hold many sessions (told by its content: open_store)


def is_session_file(path: str) -> bool:
    """Whether a file is read as a session, by its name (hidden files are not)."""
    return ((path.endswith((SESSION_SUFFIX, GZIP_SUFFIX, STORE_SUFFIX)) or ai_agent.is_snapshot_name(path))
            and not os.path.basename(path).startswith("."))


def is_store_name(path: str) -> bool:
    """Whether a session file is named as a file of many sessions (a database) is."""
    return path.endswith(STORE_SUFFIX)


def store_of(path: str, inside: str | None) -> tuple[Format, object] | None:
    """The format and a reader of a file of many sessions, by its content; None when no format reads it
    (a database of another program). A file that may not or cannot be read raises."""
    for fmt in STORE_FORMATS:
        try:
            return fmt, fmt.store(path, inside)
        except NotAStore:
            continue
    return None


def store_file(path: str) -> str | None:
    """The file of many sessions a changed file belongs to: the database of a side file (`x.db-wal`), the storage
    folder of a document in it, or the file itself when it is named as one; else None."""
    if not path.endswith((".json", STORE_SUFFIX, *database.SIDE_FILES)):  # a file of lines, as nearly every one is
        return None
    main = database.main_file(path) or opencode_storage.storage_of(path) or path
    return main if main != path or is_store_name(path) else None


def is_document(path: str) -> bool:
    """Whether a session file is one JSON document, read whole (an ai-agent snapshot), not a file of lines."""
    return ai_agent.is_snapshot_name(path)


def document_name(path: str) -> str:
    """The name a document's session goes by: its file's name without its suffix (as on disk, not printable)."""
    return os.path.basename(path).removesuffix(".gz").removesuffix(".json")


def classify(path: str, inside: str | None, grouped=None, own: os.stat_result | None = None
             ) -> tuple[Format, str, dict | None]:
    """A file's format by its content, the reason when none fits, and its group when it is one file of several.

    `inside`: the folder the file must lie in (safe_open); a file that may not or cannot be read raises; `own`: the
    file's own stat (not a symlink's), when the caller made one. `grouped(folder, session)`: the format of the group
    already found there, if any: a file the layout of a Claude Code group places in it (a sub-agent's) is of it, told
    without a read (a third of a folder's files), when it is a plain file with lines (else told as any other)."""
    if grouped is not None and (placed := claude_code_layout.placed_member(path)) is not None:
        if grouped(placed["folder"], placed["session"]) is CLAUDE_CODE and _plain_with_lines(path, own):
            return CLAUDE_CODE, "", placed
    if ai_agent.is_snapshot_name(path):
        record, why = ai_agent.read_record(path, inside)
        if isinstance(record, dict) and AI_AGENT.looks_like(record):
            return AI_AGENT, "", None
        if isinstance(record, dict) and OTLP_JSON.looks_like(record):  # a Collector's file exporter output
            return OTLP_JSON, "", None
        if isinstance(record, dict) and GEMINI.looks_like(record):  # a Gemini CLI chat before JSONL chats
            return GEMINI, "", None
        return UNRECOGNIZED, why or "a JSON document without an opTree", None
    if path.endswith(GZIP_SUFFIX):
        return NATIVE, "", None
    record, why = first_record(path, inside, own)
    if record is None:
        if why == "empty":
            return NATIVE, "empty", None
        return UNRECOGNIZED, why, None
    fmt, reason = detect_record(record)
    if fmt is None:
        return UNRECOGNIZED, reason, None
    if fmt.member_of is not None:
        return fmt, "", fmt.member_of(path, record)
    return fmt, "", None


def _plain_with_lines(path: str, own: os.stat_result | None) -> bool:
    """A regular file, not a symlink, not empty (the reader opens it through safe_open all the same)."""
    try:
        st = os.lstat(path) if own is None else own
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size > 0


_LAYOUTS = {CLAUDE_CODE: claude_code_layout, CODEX: codex, GEMINI: gemini}  # formats whose sessions span files laid out beside the main one


def companions(fmt: Format, main: str, inside: str | None) -> tuple[list[str], Iterator[str]]:
    """Where the other files of the multi-file session whose main file is `main` lie: folders to walk, then
    files to read (looked for lazily, once the folders are walked)."""
    layout = _LAYOUTS.get(fmt)
    if layout is None:
        return [], iter(())
    return layout.folders_of(main), layout.files_beside(main, inside)
