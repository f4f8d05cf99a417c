"""Where Claude Code keeps the files of one session beside its main file `<project>/<sessionId>.jsonl`.

Sub-agents' files lie in `<project>/<sessionId>/subagents/` (2.1.x), or beside the main file as
`agent-<id>.jsonl` carrying the main file's sessionId (2.0.x).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from .base import NOT_READABLE, first_record

SESSION_SUFFIX = ".jsonl"


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
