"""A Claude Code session whose files are no longer written keeps only what its pages read of its normalizer.

While a session is read, its normalizer follows every line's uuid, every tool call and every response: as much
memory again as the index. A session left alone swaps it for this: its title, its rewinds, and 8-byte digests of
the uuids a later file's summary may name. More lines later mean it is read again from its start.
"""

from __future__ import annotations

import hashlib
from array import array
from bisect import bisect_left

from .base import Normalizer
from .claude_code_branches import Branches
from .claude_code_title import Titles


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


class DigestSet:
    """A set of strings kept as sorted 64-bit digests (8 bytes each, not a string and a set slot: ~130): answers
    `in` with a chance of 2^-64 to say yes wrongly, which a title can afford."""

    __slots__ = ("_digests",)

    def __init__(self, strings=(), digests: bytes | None = None) -> None:
        self._digests = array("Q", sorted({_digest(s) for s in strings}))
        if digests is not None:  # as `digests()` gave them (kept between runs)
            self._digests.frombytes(digests)

    def digests(self) -> bytes:
        return self._digests.tobytes()

    def __contains__(self, text: object) -> bool:
        if not isinstance(text, str):
            return False
        digest, digests = _digest(text), self._digests
        at = bisect_left(digests, digest)
        return at < len(digests) and digests[at] == digest

    def __len__(self) -> int:
        return len(self._digests)


class SettledClaude(Normalizer):
    """What pages and the project's notes read of a settled session's normalizer; it reads no more records."""

    settled = True

    def __init__(self, normalizer=None) -> None:
        super().__init__()
        self.titles, self.branches = Titles(), Branches()  # of the branches, only what tells an entry rewound
        if normalizer is None:  # filled by `from_state`
            return
        self.problems = list(normalizer.problems)
        self.summary = normalizer.summary
        titles = self.titles
        titles.title, titles.rank = normalizer.titles.title, normalizer.titles.rank
        titles.summaries, titles.fresh = normalizer.titles.summaries, normalizer.titles.fresh
        titles.uuids = DigestSet(normalizer.titles.uuids)
        self.branches.abandoned, self.branches.rewinds = normalizer.branches.abandoned, normalizer.branches.rewinds
        self.rewinds = self.branches.rewinds

    def state(self) -> dict:
        """All it holds, as plain data (kept by the persistent cache; see `from_state`)."""
        titles = self.titles
        return {"problems": [tuple(p) for p in self.problems], "summary": self.summary, "title": titles.title,
                "rank": titles.rank, "summaries": titles.summaries, "fresh": titles.fresh,
                "uuids": titles.uuids.digests(), "abandoned": self.branches.abandoned, "rewinds": self.rewinds}

    @classmethod
    def from_state(cls, state: dict) -> SettledClaude:
        settled = cls()
        settled.problems, settled.summary = [tuple(p) for p in state["problems"]], state["summary"]
        titles = settled.titles
        titles.title, titles.rank = state["title"], state["rank"]
        titles.summaries, titles.fresh = dict(state["summaries"]), dict(state["fresh"])
        titles.uuids = DigestSet(digests=state["uuids"])
        settled.branches.abandoned, settled.branches.rewinds = dict(state["abandoned"]), list(state["rewinds"])
        settled.rewinds = settled.branches.rewinds
        return settled

    @property
    def title(self) -> str | None:
        return self.titles.title

    def feed(self, record, line, member, source=None):
        raise RuntimeError("a settled session reads no records: it is read again from its start")

    def rewound(self, event) -> str | None:
        return self.branches.fork_of(event.get("raw"))

    def orphans(self) -> dict[str, str]:
        return self.titles.orphans()

    def take(self, notes: dict[str, str]) -> bool:
        return self.titles.take(notes)
