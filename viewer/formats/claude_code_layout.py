"""Where Claude Code keeps the files of one session beside its main file `<project>/<sessionId>.jsonl`: which
session and agent a file is of, where a sub-agent's `.meta.json` sidecar lies, and reading that sidecar.

Sub-agents' files lie in `<project>/<sessionId>/subagents/` (2.1.x), or beside the main file as
`agent-<id>.jsonl` carrying the main file's sessionId (2.0.x).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import orjson

from viewer.files.safe_open import open_regular_file

from .base import NOT_READABLE, as_dict, first_record, refusal

SESSION_SUFFIX = ".jsonl"
MAIN = "main"  # the agent of the main file


def folders_of(main: str) -> list[str]:
    """The folder of the session's sub-agent files (2.1.x), when there is one."""
    folder, stem = os.path.dirname(main), os.path.basename(main).removesuffix(SESSION_SUFFIX)
    subagents = os.path.join(folder, stem, "subagents")
    return [subagents] if os.path.isdir(subagents) else []


def files_beside(main: str, inside: str | None) -> Iterator[str]:
    """The sub-agent files beside the main file that carry its sessionId (2.0.x), in name order; each is
    looked at when asked for. A file that may not or cannot be read is not known to be of this session."""
    folder, stem = os.path.dirname(main), os.path.basename(main).removesuffix(SESSION_SUFFIX)
    for name in sorted(os.listdir(folder)):
        beside = os.path.join(folder, name)
        if name.startswith("agent-") and name.endswith(SESSION_SUFFIX):
            try:
                record, _ = first_record(beside, inside)
            except NOT_READABLE:
                continue
            if isinstance(record, dict) and record.get("sessionId") == stem:
                yield beside


def member_of(path: str, record: dict) -> dict:
    """Which session a file belongs to, and whether it is the main file or a sub-agent's."""
    folder, filename = os.path.split(path)
    stem = filename.removesuffix(".jsonl")
    member = {"kind": MAIN, "agent": MAIN, "meta_path": None}
    if stem.startswith("agent-"):
        member.update(kind="subagent", agent=stem)
        if os.path.basename(folder) == "subagents":  # 2.1.x: <project>/<sessionId>/subagents/agent-<id>.jsonl
            session_folder = os.path.dirname(folder)
            member.update(folder=os.path.dirname(session_folder), session=os.path.basename(session_folder),
                          meta_path=os.path.join(folder, stem + ".meta.json"))
        else:  # 2.0.x: beside the main file, carrying its sessionId
            session = record.get("sessionId") if isinstance(record.get("sessionId"), str) else stem
            member.update(folder=folder, session=session)
        return member
    member.update(folder=folder, session=stem)
    return member


def _sub_agents_place(folder: str, filename: str) -> bool:
    """Whether a file lies where 2.1.x puts a sub-agent's: `<project>/<sessionId>/subagents/agent-<id>.jsonl`."""
    return (filename.startswith("agent-") and filename.endswith(SESSION_SUFFIX)
            and os.path.basename(folder) == "subagents")


_PLACE = os.path.join("subagents", "agent-")  # in the path of every file `_sub_agents_place` accepts


def placed_member(path: str) -> dict | None:
    """What a file is by its place alone: a sub-agent's of the session whose folder holds it (2.1.x), as
    `member_of` tells it (without a record: its place says all); None for a file elsewhere."""
    if _PLACE not in path:  # nearly every file of a folder: told without splitting its path
        return None
    return member_of(path, {}) if _sub_agents_place(*os.path.split(path)) else None


def sidecar_of(path: str) -> str | None:
    """The sub-agent file a `.meta.json` describes (2.1.x: `agent-<id>.meta.json` beside `agent-<id>.jsonl`)."""
    folder, name = os.path.split(path)
    if name.startswith("agent-") and name.endswith(".meta.json") and os.path.basename(folder) == "subagents":
        return os.path.join(folder, name.removesuffix(".meta.json") + ".jsonl")
    return None


def sidecar_for(path: str) -> str | None:
    """Where the `.meta.json` describing a sub-agent file would be (the inverse of `sidecar_of`)."""
    if _PLACE not in path:  # a main file (every group has one): told without splitting its path
        return None
    folder, name = os.path.split(path)
    if _sub_agents_place(folder, name):
        return os.path.join(folder, name.removesuffix(".jsonl") + ".meta.json")
    return None


META_LIMIT = 1024 * 1024  # a sidecar holds a few short fields: more is not one


def read_meta(path: str | None, inside: str | None) -> tuple[dict, tuple[str, str] | None]:
    """A sub-agent's `.meta.json` sidecar, and the problem (kind, detail) when it may not or cannot be read.

    Opened through safe_open: a FIFO, a device or a file outside the folder is never read (nothing of
    it is shown), and at most META_LIMIT bytes are.
    """
    if not path:
        return {}, None
    name = os.path.basename(path)
    try:
        with open_regular_file(path, inside) as f:  # as much as it holds, not a buffer of META_LIMIT for each
            data = f.read(min(os.fstat(f.fileno()).st_size, META_LIMIT) + 1)
    except NOT_READABLE as error:
        kind, detail = refusal(error)
        return {}, (kind, f"{name}: {detail}; the sub-agent's description is not shown")
    except OSError:  # gone, or never written: the sub-agent is shown without it
        return {}, None
    if len(data) > META_LIMIT:
        return {}, ("too_large", f"{name}: over {META_LIMIT // 1024} KB, not read; the sub-agent's description "
                                 "is not shown")
    try:
        return as_dict(orjson.loads(data)), None
    except orjson.JSONDecodeError:
        return {}, None
