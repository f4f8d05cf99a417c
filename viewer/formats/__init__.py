"""One seam for input formats: each module recognizes its files by content and normalizes them.

A normalizer turns the records of a file into native seed-000 events (dicts with message_id,
event_type, agent_id, role, content, tool_calls, tool_call_id, substance, cause, name,
language_model), plus optional keys the pages show: `timestamp`, `usage`, `model`, `source`,
`inferred` (which links were inferred, and how), `markers`, `thinking`, `images` and `raw`
(the original record). The index, queries, search and pages then work unchanged on every format.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson


@dataclass(frozen=True)
class Format:
    name: str
    label: str
    tailable: bool = True  # appended to line by line (else re-read whole on change)
    hides: frozenset = field(default_factory=frozenset)  # controls that do not apply

    def as_dict(self) -> dict:
        return {"name": self.name, "label": self.label, "tailable": self.tailable}


NATIVE = Format("native", "agentview events")
LEGACY = Format("legacy", "legacy event stream")
# The hook audit reads seed-000 hook interventions (deliveries changed on their way): these logs record none.
NO_HOOKS = frozenset({"hooks"})
CLAUDE_CODE = Format("claude-code", "Claude Code", hides=NO_HOOKS)
WEAKINCENTIVES = Format("weakincentives", "weakincentives", hides=NO_HOOKS)
AI_AGENT = Format("ai-agent", "ai-agent snapshot", tailable=False, hides=NO_HOOKS)
UNRECOGNIZED = Format("unrecognized", "unrecognized")

FIRST_LINE_LIMIT = 4 * 1024 * 1024  # enough for a first line that carries an image


def first_record(path: str) -> tuple[object | None, str]:
    """The first of a file's first lines that parses as JSON, or (None, why there is none)."""
    try:
        with open(path, "rb") as f:
            data = f.read(FIRST_LINE_LIMIT)
    except OSError as exc:
        return None, f"unreadable: {exc.strerror}"
    if data.startswith(b"\x1f\x8b"):
        return None, "compressed"
    *complete, _partial = data.split(b"\n")
    tried = 0
    for raw in complete:
        if not raw.strip():
            continue
        tried += 1
        try:
            return orjson.loads(raw), ""
        except orjson.JSONDecodeError:
            if tried >= 20:
                break
    if tried:
        return None, "none of the first lines is JSON"
    return None, "empty"


def detect_record(record: object) -> tuple[Format | None, str]:
    """The format a file's first record belongs to, or (None, the reason none fits)."""
    from . import claude_code, legacy, weakincentives

    if not isinstance(record, dict):
        return None, f"the first line is a JSON {type(record).__name__}, not an object"
    if claude_code.looks_like(record):
        return CLAUDE_CODE, ""
    if weakincentives.looks_like(record):
        return WEAKINCENTIVES, ""
    if legacy.looks_like(record):
        return LEGACY, ""
    if any(k in record for k in ("message_id", "event_type", "agent_id")):
        return NATIVE, ""
    keys = ", ".join(sorted(map(str, record))[:8]) or "none"
    return None, f"the first line has none of the fields a known format starts with (keys: {keys})"
