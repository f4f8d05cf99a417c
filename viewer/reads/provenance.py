"""Provenance: what a delivery changed in its original (a word diff), and the per-session hook audit.

Pure reads over a SessionIndex. Every piece of log text these views print goes through
`log_text`, the one place where secret masking applies to them.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from viewer.core import model
from viewer.index import facets
from viewer.index.session_index import SessionIndex

from . import queries
from .labels import log_text  # one place where masking applies to printed log text

# Past this many words on either side, diff lines instead (SequenceMatcher is quadratic at worst).
WORD_LIMIT = 4000
TOKEN = re.compile(r"\s+|\w+|[^\w\s]")


def _tokens(text: str, by_line: bool) -> list[str]:
    return text.splitlines(keepends=True) if by_line else TOKEN.findall(text)


def word_diff(original: str, delivered: str) -> list[dict]:
    """The delivered text as runs of {"op": "equal"|"delete"|"insert", "text"}: what was kept,
    removed from the original and added to it. Whitespace belongs to the runs, so joining the
    equal+delete runs gives the original back and equal+insert the delivered text."""
    original, delivered = log_text(original), log_text(delivered)
    by_line = max(len(original), len(delivered)) > WORD_LIMIT * 6
    a, b = _tokens(original, by_line), _tokens(delivered, by_line)
    runs: list[dict] = []

    def add(op: str, text: str) -> None:
        if not text:
            return
        if runs and runs[-1]["op"] == op:
            runs[-1]["text"] += text
        else:
            runs.append({"op": op, "text": text})

    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            add("equal", "".join(a[i1:i2]))
        else:
            add("delete", "".join(a[i1:i2]))
            add("insert", "".join(b[j1:j2]))
    return runs


def diff_counts(runs: list[dict]) -> dict:
    """How many words the delivery removed and added."""
    counts = {"deleted": 0, "inserted": 0}
    for run in runs:
        if run["op"] != "equal":
            counts["deleted" if run["op"] == "delete" else "inserted"] += len(re.findall(r"\w+", run["text"]))
    return counts


def delivery_provenance(s: SessionIndex, position: int) -> dict | None:
    """A delivery beside its original, with the word diff; None when the entry is not a delivery.

    The original's text, its sender and the modified flag are the dialog's (queries.delivery_of), so the
    diff compares what `modified` compares (for some formats only the quoted part of the original)."""
    with s.lock:
        event = s.events[position]
        delivery = queries.delivery_of(s, event)
        if delivery is None:
            return None
        receiver = s.agents.get(event["agent_id"])
        original = delivery["original_content"] if delivery["original_found"] else None
        delivered = model.content_of(event)
        data = {
            "message_id": event["message_id"],
            "position": position,
            "agent_id": event["agent_id"],
            "agent_name": receiver.display_name if receiver else event["agent_id"],
            "original_id": delivery["original_id"],
            "original_found": delivery["original_found"],
            "from_agent_id": delivery["from_agent_id"],
            "from_name": delivery["from_name"],
            "delivered": log_text(delivered),
            "original": log_text(original) if original is not None else None,
            "modified": delivery["modified"],
            "diff": None,
        }
    if original is not None:
        data["diff"] = word_diff(original, delivered)  # it masks both itself
        data["counts"] = diff_counts(data["diff"])
    return data


def message_provenance(s: SessionIndex, message_id: str) -> dict:
    """For a message page: the message as a delivery (vs its original), and its own deliveries."""
    with s.lock:
        position = s.by_id[message_id]
        deliveries = list(s.references.get(message_id, ()))
    return {
        "as_delivery": delivery_provenance(s, position),
        "deliveries": [delivery_provenance(s, p) for p in deliveries],
    }


def hook_audit(s: SessionIndex, agent_id: str | None = None, start: int = 0, limit: int = 20,
               first_group: int = 0, group_limit: int | None = None) -> dict:
    """Every modified delivery, grouped by the agent that received it, with counts.

    `agents` counts every receiving agent; `groups` shows the diffs of a window of them (`first_group`,
    `group_limit`), each a window of its deliveries (`start`, `limit`): a session where hundreds of agents
    received modified deliveries never renders thousands of diffs at once.
    """
    with s.lock:
        kept = facets.caught_up(s)  # the modified deliveries per agent, kept as events arrive
        by_agent, deliveries = kept.modified, kept.deliveries
        agents = [{"agent_id": a, "name": s.agents[a].display_name, "count": len(by_agent[a]),
                   "received": kept.received[a]} for a in s.agent_order if by_agent.get(a)]
        chosen = [row for row in agents if agent_id is None or row["agent_id"] == agent_id]
        first_group = max(0, min(first_group, len(chosen)))
        window = chosen[first_group:] if group_limit is None else chosen[first_group:first_group + group_limit]
        shown_of = {row["agent_id"]: list(by_agent[row["agent_id"]][start:start + limit]) for row in window}
    groups = []
    for row in window:
        shown = shown_of[row["agent_id"]]
        groups.append({**row, "start": start, "end": start + len(shown),
                       "deliveries": [delivery_provenance(s, p) for p in shown]})
    return {"deliveries": deliveries, "modified": sum(row["count"] for row in agents), "agents": agents,
            "agent_id": agent_id, "start": start, "limit": limit, "groups": groups,
            "first_group": first_group, "group_limit": group_limit, "groups_total": len(chosen)}
