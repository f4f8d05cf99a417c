"""Short names for long search cursors, so that an answer's size grows with its hits, not its sessions.

A cursor longer than INLINE is kept here under a name (`~`, a digest of it, its length: its weight) that the
answer carries instead; a poll gives the name back. One cursor, one name: pages of an unchanged folder share an
entry. The least recently used go first; a name no longer kept is unknown, and its page searches again.
"""

from __future__ import annotations

import hashlib
import re

from viewer.core.bounded_map import BoundedMap

INLINE = 400  # characters: a cursor of a few sessions stays as it is, readable in the URL
MOST = 256  # names kept
MOST_CHARACTERS = 16 << 20  # characters of the cursors kept, in all
NAME = re.compile(r"~[0-9a-f]{20}\.[0-9]{1,9}")


def _weight(name: str) -> int:
    return int(name.rpartition(".")[2])


class CursorNames:
    def __init__(self, most: int = MOST, most_characters: int = MOST_CHARACTERS) -> None:
        self.kept = BoundedMap("search cursor names", most, weigh=_weight, most_weight=most_characters)
        self._last: tuple[str, str] | None = None  # the last cursor named, and its name

    def _named(self, cursor: str) -> str:
        """Its name: the last one's when it is the last cursor named (compared, not digested: a page polled, or
        searched again, names the same cursor of thousands of sessions again and again)."""
        last = self._last
        if last is not None and last[0] == cursor:
            return last[1]
        name = f"~{hashlib.blake2b(cursor.encode(), digest_size=10).hexdigest()}.{len(cursor)}"
        self._last = (cursor, name)
        return name

    def name(self, cursor: str) -> str:
        """What an answer carries for `cursor`: itself when short, else a name kept for it."""
        if len(cursor) <= INLINE:
            return cursor
        name = self._named(cursor)
        self.kept.put(name, cursor)  # kept again, as the most recently used
        return name

    def cursor(self, given: str) -> str | None:
        """The cursor an answer's `given` stands for; None for a name not (or no longer) kept."""
        if not given.startswith("~"):
            return given
        return self.kept.get(given)
