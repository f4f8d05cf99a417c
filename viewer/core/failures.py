"""What counts as a failure: one rule over native events, the same for every format.

A transcript entry failed when its format marked it so: a `failure` key naming what went wrong (normalizers set it
from their records: an exit code, a refusal, an API error, an interrupted turn), or `is_error: true`. A format whose
events are read as written (seed-000) declares instead the words its failed results start with (`Format.failure
_texts`). A result that merely mentions an error is no failure. Calls left unanswered when a session ended are
found by the index (they are no event of their own).
"""

from __future__ import annotations

from . import model

TOOL_ERROR = "tool error"  # a tool ran and failed (an error result, a non-zero exit code)
REFUSED = "refused"  # the call never ran: a hook blocked it, a permission was denied, the user declined it
API_ERROR = "api error"  # the model's API answered an error (a retry, an overload, a refusal to answer)
INTERRUPTED = "interrupted"  # a turn was stopped before it ended
SUBAGENT_FAILED = "sub-agent failed"  # a sub-agent ended with an error (its creating call failed, or it said so)
UNANSWERED = "unanswered"  # a call with no result when the session ended
ERROR = "error"  # the log marks it an error and says no more
KINDS = (TOOL_ERROR, REFUSED, API_ERROR, INTERRUPTED, SUBAGENT_FAILED, UNANSWERED, ERROR)

FIRST_LINE_CHARS = 200  # of an error's first line, shown under its call and in the list


def kind_of(event: model.Event, texts: tuple[tuple[str, str], ...] = ()) -> str | None:
    """What failed in an event by its own marks (one of KINDS), or None. `texts`: (prefix, kind) its format's
    failed results start with, tried in order on a tool result its format did not mark either way."""
    if event.get("event_type") != model.TRANSCRIPT_ENTRY:
        return None
    failure = event.get("failure")
    if type(failure) is str:
        return failure if failure in KINDS else ERROR
    if event.get("is_error") is True:
        return TOOL_ERROR if model.is_tool_result(event) else ERROR
    if texts and "is_error" not in event and model.is_tool_result(event):
        content = event.get("content")
        if type(content) is str:
            for prefix, kind in texts:
                if content.startswith(prefix):
                    return kind
    return None


def first_line(text: str, limit: int = FIRST_LINE_CHARS) -> str:
    """The first line of an error's text that says something, cut to `limit` characters."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[:limit - 1] + "…"
    return ""
