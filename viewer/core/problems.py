"""What is wrong with a line, a link, a file or a folder: one record for every kind, and the excerpt it quotes."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import redact

EXCERPT_CHARS = 120


@dataclass
class Problem:
    kind: str
    line: int | None
    detail: str
    message_id: str | None = None
    # found reading the line itself (parse, shape), not by linking it to others: an as-of snapshot keeps it
    of_line: bool = field(default=False, compare=False, repr=False)
    path: str | None = None  # a problem of the folder (Library.problems): the folder or file, relative to DIR

    def state(self) -> tuple:
        """What the persistent cache keeps of it (plain data; `Problem(*state)` makes it again)."""
        return self.kind, self.line, self.detail, self.message_id, self.of_line, self.path

    def as_dict(self) -> dict:
        data = {"kind": self.kind, "line": self.line, "detail": self.detail}
        if self.message_id is not None:
            data["message_id"] = self.message_id
        if self.path is not None:
            data["path"] = self.path
        return data


def excerpt(data: bytes) -> str:
    """The start of a line a problem is about, at most EXCERPT_CHARS characters.

    Never ends inside a secret: the secrets are found in the whole window first, and the text is cut
    before one the cut would split, so the masking of whatever shows the excerpt masks what it holds
    whole (and "Show secrets" still shows it) while no part of a secret is ever shown masked or not.
    """
    window = data[: EXCERPT_CHARS * 4]
    text = window.decode("utf-8", errors="replace")
    if len(text) <= EXCERPT_CHARS and len(window) == len(data):
        return text
    cut = min(EXCERPT_CHARS, len(text))
    for start, end in redact.secret_spans(text):
        if start < cut < end or (start < cut and end == len(text) and len(window) < len(data)):
            cut = start  # split by the cut (or by the window: it may go on past it)
            break
    return text[:cut] + "…"
