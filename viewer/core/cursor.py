"""A live feed's cursor: which reading of a file (its epoch) and how many of its events a reader has seen.

Written `epoch-count` in URLs and JSON. One type, so the index, the search poll and the request
helpers agree on its text and on what a stale one means.
"""

from __future__ import annotations

import re
from typing import NamedTuple

MAX_DIGITS = 15  # every number a query string carries has at most this many digits (see web.asked)
PATTERN = re.compile(rf"[0-9]{{1,{MAX_DIGITS}}}-[0-9]{{1,{MAX_DIGITS}}}")


class Cursor(NamedTuple):
    epoch: int
    count: int

    def __str__(self) -> str:
        return f"{self.epoch}-{self.count}"

    @classmethod
    def parse(cls, text: str | None) -> Cursor | None:
        """The cursor a text gives back; None when it is not one (a stale or foreign text reads from the start)."""
        epoch, _, count = (text or "").partition("-")
        try:
            return cls(int(epoch), int(count))
        except ValueError:
            return None
