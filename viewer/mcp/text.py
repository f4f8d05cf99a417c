"""Compact text for a model to read: log text masked then cut, times in UTC, and answers of bounded size.

Every piece of log text is masked whole before it is cut (as the pages' `(text|shown)[:n]`), so no cut leaves part
of a secret; an answer stops adding lines at MAX_ANSWER characters and says where to go on from.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from viewer.core.redact import shown_value
from viewer.reads import costs

ENTRY_CHARS = 1500  # of one entry in a list (a perspective, a dialog, a failure)
MESSAGE_CHARS = 20_000  # of the one message a call asks for
LINE_CHARS = 200  # of a one-line summary (a call's arguments, a title)
MAX_ANSWER = 100_000  # characters of one answer, whatever its page size: a call never returns a gigabyte

_BLANKS = re.compile(r"\s+")


def clip(value, limit: int = ENTRY_CHARS) -> str:
    """Log text (or any logged value, printed as JSON) masked, then cut to `limit` characters."""
    text = shown_value(value) if value is not None else ""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def one_line(value, limit: int = LINE_CHARS) -> str:
    """Log text on one line: its blanks made single spaces, masked, cut."""
    return clip(_BLANKS.sub(" ", shown_value(value) if value is not None else "").strip(), limit)


def indented(text: str, prefix: str = "    ") -> str:
    return prefix + text.replace("\n", "\n" + prefix) if text else ""


def when(t: float | None) -> str:
    if t is None:
        return "never"
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def cost(value: dict | None) -> str:
    """A cost as the pages word it ({"cost_usd", "unpriced_models"})."""
    if not value:
        return "no price"
    said = costs.usd(value["cost_usd"])
    if value["unpriced_models"]:
        said += f" (no price for {', '.join(value['unpriced_models'])})"
    return said


class Answer:
    """Lines of an answer, up to MAX_ANSWER characters: `add` says False once the next line would not fit."""

    def __init__(self, *head: str, limit: int = MAX_ANSWER):
        self.lines = [line for line in head if line]
        self.size = sum(len(line) + 1 for line in self.lines)
        self.limit = limit
        self.full = False

    def add(self, line: str) -> bool:
        if self.full or self.size + len(line) + 1 > self.limit:
            self.full = True
            return False
        self.lines.append(line)
        self.size += len(line) + 1
        return True

    def end(self, line: str) -> None:
        """The last line, added whatever the size (MAX_ANSWER leaves room for it): where to read on."""
        self.lines.append(line)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def more(shown_to: int, total: int, what: str, again: str) -> str:
    """The last line of a windowed answer: how many there are, and the call that reads on."""
    if shown_to >= total:
        return f"(end: {total:,} {what} in all)"
    return f"(more: {total - shown_to:,} of {total:,} {what} follow; call again with {again})"
