"""One seam for input formats: each module recognizes its files by content and normalizes them.

A normalizer turns a file's records into native seed-000 events, plus optional keys the pages show (`timestamp`,
`usage`, `model`, `inferred`, `markers`, `thinking`, `images`, `raw`...), so the index, queries, search and pages
work unchanged on every format. Each format is one `Format(...)` declaration here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from . import (
    ai_agent,
    claude_code,
    claude_code_layout,
    codex,
    copilot,
    gemini,
    legacy,
    opencode,
    opencode_storage,
    otlp_json,
    weakincentives,
)
from viewer.core import failures

from .base import NOT_READABLE


@dataclass(frozen=True)
class Format:
    name: str
    label: str
    hides: frozenset = field(default_factory=frozenset)  # controls that do not apply
    # Whether a file's first record is of this format.
    looks_like: Callable[[dict], bool] | None = field(default=None, compare=False, repr=False)
    # A fresh normalizer (a base.Normalizer) for a session's records; None: its files are read line by line.
    normalizer: Callable | None = field(default=None, compare=False, repr=False)
    # For formats whose sessions span several files: which session (and which part of it) a file is.
    member_of: Callable[[str, dict], dict] | None = field(default=None, compare=False, repr=False)
    # Whether its events may carry the keys only the viewer's own normalizers add (an entry's `model`, a
    # creation's `inferred` and "in progress" marker, response parts, spawn links): the index reads them. A
    # native seed-000 writer's keys of those names are not the viewer's, so NATIVE says False.
    adds_keys: bool = True
    # For formats whose members have files describing them (Claude Code's `.meta.json`): the member a changed
    # file describes (its path), or None; its session then looks again (Normalizer.flush), as a whole read would.
    sidecar_of: Callable[[str], str | None] | None = field(default=None, compare=False, repr=False)
    # ... and the other way: where the file describing a member would be (None: such a member has none)
    sidecar_for: Callable[[str], str | None] | None = field(default=None, compare=False, repr=False)
    # For formats whose files each hold many sessions (a database, a folder of documents): the reader of such a
    # file, (path, inside) -> an object whose read(changed path) gives each session's new records
    # (opencode_store.StoreRead); raises opencode_store.NotAStore for one that is not.
    store: Callable | None = field(default=None, compare=False, repr=False)
    # (prefix, failure kind) of the tool results that failed, for a format whose events are read as written and so
    # carry no `failure` or `is_error` a normalizer set (core/failures.py)
    failure_texts: tuple = field(default=(), compare=False, repr=False)
    # Whether a call that created a sub-agent gets its result when that agent ends (Claude Code's Task): until then
    # the agent is running (reads/queries.py: agent_status). Codex answers spawn_agent at once; seed-000 never
    # answers `task`.
    spawns_answered_at_end: bool = False

    @property
    def reads_records(self) -> bool:
        """Whether its files are read as records a normalizer turns into events (not as native lines)."""
        return self.normalizer is not None


# Seed-000's own words for a call that failed or a hook blocked (its example, and the writer's results).
SEED_FAILURES = (("Error: Action blocked by hook", failures.REFUSED), ("Error:", failures.TOOL_ERROR))
NATIVE = Format("native", "agentview events", adds_keys=False, failure_texts=SEED_FAILURES)
# Legacy lines are made native one by one as they are parsed (native.LineParser): no record normalizer.
LEGACY = Format("legacy", "legacy event stream", looks_like=legacy.looks_like, failure_texts=SEED_FAILURES)
# The hook audit reads seed-000 hook interventions (deliveries changed on their way): these logs record none.
NO_HOOKS = frozenset({"hooks"})
CLAUDE_CODE = Format("claude-code", "Claude Code", hides=NO_HOOKS, looks_like=claude_code.looks_like,
                     normalizer=claude_code.ClaudeNormalizer, member_of=claude_code_layout.member_of,
                     sidecar_of=claude_code_layout.sidecar_of, sidecar_for=claude_code_layout.sidecar_for,
                     spawns_answered_at_end=True)
CODEX = Format("codex", "Codex CLI", hides=NO_HOOKS, looks_like=codex.looks_like, normalizer=codex.CodexNormalizer,
               member_of=codex.member_of)
# Gemini CLI chats: a main chat and its sub-agents' chats; an older chat is one `.json` document (detect.classify).
GEMINI = Format("gemini", "Gemini CLI", hides=NO_HOOKS, looks_like=gemini.looks_like,
                normalizer=gemini.GeminiNormalizer, member_of=gemini.member_of, spawns_answered_at_end=True)
COPILOT = Format("copilot", "GitHub Copilot CLI", hides=NO_HOOKS, looks_like=copilot.looks_like,
                 normalizer=copilot.CopilotNormalizer, member_of=copilot.member_of, spawns_answered_at_end=True)
WEAKINCENTIVES = Format("weakincentives", "weakincentives", hides=NO_HOOKS, looks_like=weakincentives.looks_like,
                        normalizer=weakincentives.WeakIncentivesNormalizer)
# Snapshots are re-read whole when replaced (ai_agent.SnapshotReader, chosen by the file name), not tailed
# (a `.json` file of OTLP/JSON requests, one a line, is: the reader tails it once it has seen its first line).
AI_AGENT = Format("ai-agent", "ai-agent snapshot", hides=NO_HOOKS, looks_like=ai_agent.looks_like,
                  normalizer=ai_agent.AiAgentNormalizer)
# OTLP/JSON traces (the Collector's file exporter, agentview's own export): a file is one session.
# Its own exports' events are read back as logged: a seed-000 session's failed results keep their words' meaning.
OTLP_JSON = Format("otlp", "OpenTelemetry traces (OTLP/JSON)", looks_like=otlp_json.looks_like,
                   normalizer=otlp_json.OtlpNormalizer, failure_texts=SEED_FAILURES)
# OpenCode's SQLite database (and its older JSON storage folder): each root session in it (its child sessions as
# sub-agents) is a session.
OPENCODE = Format("opencode", "OpenCode", hides=NO_HOOKS, normalizer=opencode.OpenCodeNormalizer,
                  store=opencode_storage.open_any, spawns_answered_at_end=True)
UNRECOGNIZED = Format("unrecognized", "unrecognized")
# A file the viewer will not or cannot read (a FIFO, a symlink out of the folder, permission denied): listed, never read.
NOT_READ = Format("not-read", "not read")
# Tried in this order on a JSONL file's first record; native is what remains.
LINE_FORMATS = (OTLP_JSON, CLAUDE_CODE, CODEX, GEMINI, COPILOT, WEAKINCENTIVES, LEGACY)
# Tried in this order on a file that may hold many sessions (detect.is_store_name).
STORE_FORMATS = (OPENCODE,)


def sidecar_owner(path: str) -> str | None:
    """The session file a file beside it describes (a Claude Code sub-agent's `.meta.json`), if any format says so."""
    for fmt in LINE_FORMATS:
        if fmt.sidecar_of is not None:
            member = fmt.sidecar_of(path)
            if member is not None:
                return member
    return None


def detect_record(record: object) -> tuple[Format | None, str]:
    """The format a file's first record belongs to, or (None, the reason none fits)."""
    if not isinstance(record, dict):
        return None, f"the first line is a JSON {type(record).__name__}, not an object"
    for fmt in LINE_FORMATS:
        if fmt.looks_like(record):
            return fmt, ""
    if any(k in record for k in ("message_id", "event_type", "agent_id")):
        return NATIVE, ""
    keys = ", ".join(sorted(map(str, record))[:8]) or "none"
    return None, f"the first line has none of the fields a known format starts with (keys: {keys})"
