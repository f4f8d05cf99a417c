"""Session ids and names: what a session file is called in URLs and on pages.

An id is made from the file's path below DIR, safe as one URL path segment; distinct paths get distinct ids.
"""

from __future__ import annotations

import re
from pathlib import Path

from viewer.formats import ai_agent
from viewer.formats.detect import GZIP_SUFFIX, SESSION_SUFFIX

# Session files not named *.jsonl keep their suffix in their id (it ends ".gz" or ".json"), so the id of a
# *.jsonl file whose stem ends so has that stem's last dot escaped: `x.json.jsonl` is `x~2Ejson`, `x.json` is `x.json`.
_KEPT_SUFFIXES = (GZIP_SUFFIX, *ai_agent.SUFFIXES)


def _escaped(name: str) -> str:
    """A name in id characters: [A-Za-z0-9._-] as they are, any other byte of the name on disk as ~XX.

    A name that is not UTF-8 (os.fsdecode gave surrogates) is escaped byte for byte, as it is on disk,
    so distinct names stay distinct."""
    if _ID_CHARS.fullmatch(name):  # the usual name: nothing to escape (a folder of thousands is named at once)
        return name
    out = []
    for ch in name:
        if ch.isascii() and (ch.isalnum() or ch in "._-"):
            out.append(ch)
        else:
            out.extend(f"~{b:02X}" for b in ch.encode("utf-8", "surrogateescape"))
    return "".join(out)


_ID_CHARS = re.compile(r"[A-Za-z0-9._-]*")


def _file_id(filename: str) -> str:
    """A session file's name in an id: without its `.jsonl` (which the other session suffixes keep)."""
    if not filename.endswith(SESSION_SUFFIX):
        return _escaped(filename)
    stem = filename[: -len(SESSION_SUFFIX)]
    if not stem.endswith(_KEPT_SUFFIXES):
        return _escaped(stem)
    head, _, suffix = stem.rpartition(".")
    return f"{_escaped(head)}~2E{_escaped(suffix)}"


def _joined_id(folders: list[str], filename: str) -> str:
    sid = ":".join([*map(_escaped, folders), _file_id(filename)])
    if sid in ("", ".", ".."):  # browsers rewrite these path segments
        sid = "".join(f"~{ord(c):02X}" for c in sid) or "~"
    return sid


def session_id_for(relpath: str) -> str:
    """A stable id, safe as one URL path segment, made from a path relative to DIR.

    Folders are joined with ':'; any character outside [A-Za-z0-9._-] (':' and '~'
    included) is written as ~XX per byte of its name on disk, so distinct paths get distinct ids
    (see `_file_id` for the one suffix left out). An id of ordinary names is the path without
    `.jsonl`: `team/a.jsonl` is `team:a`.
    """
    *folders, filename = relpath.split("/")
    return _joined_id(folders, filename)


def group_id_for(folder_relpath: str, session: str) -> str:
    """The id of a multi-file session (Claude Code: a folder and a sessionId): its main file's id,
    `session` escaped whole (a sessionId is text from the file: a '/' in it is not a folder)."""
    folders = [] if folder_relpath == "." else folder_relpath.split("/")
    return _joined_id(folders, session + SESSION_SUFFIX)


GROUP_MARK = "~group"  # ends the id of a group whose main file's path holds another session (no id has "~g")


def shown(name: str) -> str:
    """A name as it may be printed: a byte of it that is not UTF-8 becomes `\\xNN` (a str with surrogates
    cannot be encoded: not in a page, not in JSON)."""
    if name.isascii():  # nearly every name: nothing to escape (a folder of thousands shows every path)
        return name
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def session_name(relpath: str) -> str:
    """The name a session is shown under: its file's name without the session suffix, printable."""
    return shown(Path(relpath).name.removesuffix(GZIP_SUFFIX).removesuffix(SESSION_SUFFIX))
