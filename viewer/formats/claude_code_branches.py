"""Rewinds in a Claude Code conversation: the branch a person left by going back to an earlier message.

Only a prompt a person typed starts a branch: one whose parent is not the agent's latest line, where the first
conversation line written after that parent was a typed prompt too (the one it replaces). Other forks of the
parentUuid graph (parallel tool results, records beside a response, a compaction's new root) are not rewinds.
"""

from __future__ import annotations

from .base import as_dict

CONVERSATION = ("user", "assistant")
OTHER, TALK, PROMPT = 0, 1, 2  # what a line is, for telling a rewind: a record, conversation, a typed prompt


def typed_prompt(record: dict) -> bool:
    """A user line holding only what a person typed (no tool result; not a meta or compaction line)."""
    if record.get("type") != "user" or record.get("isMeta") or record.get("isCompactSummary"):
        return False
    content = as_dict(record.get("message")).get("content")
    if isinstance(content, str):
        return bool(content)
    return isinstance(content, list) and bool(content) and all(
        isinstance(b, dict) and b.get("type") in ("text", "image") for b in content)


class Branches:
    """Each agent's lines in file order, enough to tell a rewind and which lines it left behind."""

    def __init__(self) -> None:
        self.order: dict[str, list[str]] = {}  # agent -> the uuids of its lines, in file order
        self.talk: dict[str, bytearray] = {}  # agent -> OTHER, TALK or PROMPT for each of those lines
        self.where: dict[str, int] = {}  # uuid -> its place in its agent's order
        self.abandoned: dict[str, str] = {}  # uuid of a line left behind by a rewind -> the uuid it forked at
        self.rewinds: list[str] = []  # uuids of the prompts that began a new branch

    def feed(self, agent: str, record: dict) -> str | None:
        """Note a line; the uuid it forks at when it begins a new branch (the lines after that are abandoned)."""
        uuid = record.get("uuid")
        if not isinstance(uuid, str):
            return None
        lines, talk = self.order.get(agent), self.talk.get(agent)
        if lines is None:  # not setdefault: that would make an empty list and bytearray for every line
            lines, talk = self.order[agent], self.talk[agent] = [], bytearray()
        kind = record.get("type")
        prompt = kind == "user" and typed_prompt(record)  # most lines are the assistant's: no call for them
        parent, forked = record.get("parentUuid"), None
        if prompt and isinstance(parent, str) and lines and lines[-1] != parent:
            at = self.where.get(parent)
            replaced = next((kind for kind in talk[at + 1:] if kind), OTHER) if at is not None else OTHER
            if replaced == PROMPT and at < len(lines) and lines[at] == parent:
                for left in lines[at + 1:]:
                    self.abandoned.setdefault(left, parent)  # an earlier rewind's fork point stays
                self.rewinds.append(uuid)
                forked = parent
        self.where[uuid] = len(lines)
        lines.append(uuid)
        talk.append(PROMPT if prompt else TALK if kind in CONVERSATION else OTHER)
        return forked

    def fork_of(self, raw) -> str | None:
        """The fork point of an entry made of these records, if one of its lines was left behind."""
        for record in raw if isinstance(raw, list) else [raw]:
            if isinstance(record, dict) and record.get("uuid") in self.abandoned:
                return self.abandoned[record["uuid"]]
        return None
