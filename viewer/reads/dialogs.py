"""The dialog: the distinct messages among chosen agents, each once (the dialog page, its polls and exports).

Pure reads over a SessionIndex, like queries.py; each takes the session's lock itself.
"""

from __future__ import annotations

from bisect import insort

from viewer.core import model
from viewer.core.positions import window
from viewer.index.session_index import SessionIndex

from .live_updates import POLL_ENTRIES


def _group_members(s: SessionIndex, key: str, selected: set[str]) -> list[int]:
    """Positions of the selected agents' dialog entries whose substance key is `key`."""
    members = []
    own = s.by_id.get(key)
    if own is not None:
        event = s.events[own]
        if event["agent_id"] in selected and model.is_dialog_entry(event) and not model.is_delivery(event):
            members.append(own)
    for p in s.references.get(key, ()):
        event = s.events[p]
        if event["agent_id"] in selected and model.is_dialog_entry(event):
            members.append(p)
    members.sort()
    return members


def _dialog_item(s: SessionIndex, key: str, members: list[int]) -> dict:
    own = s.by_id.get(key)
    original = s.events[own] if own is not None else None
    shown = original if original is not None else s.events[members[0]]
    speaker = s.agents.get(original["agent_id"]) if original is not None else None
    deliveries, recipients = [], []
    for p in members:
        event = s.events[p]
        if not model.is_delivery(event):
            continue
        modified = model.is_modified(event, original)
        deliveries.append({"message_id": event["message_id"], "agent_id": event["agent_id"],
                           "name": s.agents[event["agent_id"]].display_name,
                           "content": model.content_of(event), "modified": modified})
        if (quoted := model.quoted_original(event)) is not None:  # the part of the original it carries
            deliveries[-1]["quoted"] = quoted
        if event["agent_id"] not in recipients:
            recipients.append(event["agent_id"])
    return {
        "key": key,
        "position": own if own is not None else members[0],
        "message_id": shown["message_id"],
        "event": shown,
        "content": model.content_of(shown),
        "event_type": shown.get("event_type"),
        "speaker": speaker.agent_id if speaker else None,
        "speaker_name": speaker.display_name if speaker else None,
        "recipients": recipients,
        "recipient_names": [s.agents[a].display_name for a in recipients],
        "modified": any(d["modified"] for d in deliveries),
        "deliveries": deliveries,
        "original_missing": original is None,
    }


def dialog(s: SessionIndex, agent_ids: list[str], start: int = 0, limit: int | None = None) -> dict:
    """The distinct messages among the chosen agents, each once, by the original's position."""
    with s.lock:
        selected = set(agent_ids)
        kept = _dialog_order(s, agent_ids)
        total = len(kept.order)
        start = max(0, min(start, total))
        end = total if limit is None else min(total, start + limit)
        keys = [kept.key(s, item) for item in kept.order[start:end]]
        items = [_dialog_item(s, key, _group_members(s, key, selected)) for key in keys]
        return {"items": items, "start": start, "end": end, "total": total}


DIALOG_ORDERS_KEPT = 8  # selections whose order a session keeps (each costs about 100 bytes per item)


class _DialogOrder:
    """The dialog's items of some agents, sorted by the position of the message each represents, and how far it
    has read: `order` holds (that position, "") for an item whose original is logged (its key is that message's
    id) and (its first member's position, key) for one whose original is not (yet).

    Extended from where it stopped on each request (O(new entries), and reading none of them back from the file
    when the index knew their original as it read them: `AgentNode.dialog_originals`); built again only when a
    key it placed by its first member gets its original later (a link that was dangling).
    """

    def __init__(self, agent_ids: tuple[str, ...]):
        self.agent_ids = agent_ids
        self.read = {a: 0 for a in agent_ids}  # agent -> how many of its dialog entries were read
        self.placed: set[int] = set()  # the originals' positions of the items placed by them
        self.unplaced: set[str] = set()  # keys without an original (yet): placed by their first member
        self.order: list[tuple[int, str]] = []

    def extend(self, s: SessionIndex) -> None:
        new = []
        for a in self.agent_ids:
            agent, read = s.agents[a], self.read[a]
            new.extend(zip(agent.dialog_entries[read:], agent.dialog_originals[read:]))
            self.read[a] = len(agent.dialog_entries)
        new.sort()
        for p, original in new:
            if original < 0:  # unknown when the entry was read: it may be logged by now
                key = model.substance_key(s.events[p])
                original = s.by_id.get(key, -1)
                if original < 0:
                    if key not in self.unplaced:
                        self.unplaced.add(key)
                        insort(self.order, (p, key))
                    continue
            if original not in self.placed:
                self.placed.add(original)
                insort(self.order, (original, ""))

    def key(self, s: SessionIndex, item: tuple[int, str]) -> str:
        """The substance key of an item of `order`."""
        position, key = item
        return key or s.events[position]["message_id"]


def _dialog_order(s: SessionIndex, agent_ids: list[str]) -> _DialogOrder:
    """The chosen agents' dialog order, extended to now (the caller holds the lock)."""
    chosen = tuple(dict.fromkeys(agent_ids))
    kept = s.dialog_orders.pop(chosen, None)
    if kept is not None and any(key in s.by_id for key in kept.unplaced):
        kept = None  # an original arrived after a delivery of it: its item moves
    if kept is None:
        kept = _DialogOrder(chosen)
    kept.extend(s)
    s.dialog_orders[chosen] = kept  # most recently used last
    while len(s.dialog_orders) > DIALOG_ORDERS_KEPT:
        del s.dialog_orders[next(iter(s.dialog_orders))]
    return kept


def dialog_updates(s: SessionIndex, agent_ids: list[str], after: int, limit: int = POLL_ENTRIES) -> dict:
    """New dialog items, and items that gained recipients, since position `after` (reads only the
    chosen agents' new dialog entries, up to `limit` of them; `stop` is the next poll's position)."""
    with s.lock:
        selected = set(agent_ids)
        new, changed = {}, {}
        lists = [s.agents[a].dialog_entries for a in selected if a in s.agents]
        positions, stop = window(lists, after, limit, s.count)
        for p in positions:
            key = model.substance_key(s.events[p])
            if key in new or key in changed:
                continue
            members = [m for m in _group_members(s, key, selected) if m < stop]
            target = changed if members and members[0] < after else new
            target[key] = members
        items = sorted((_dialog_item(s, k, m) for k, m in new.items()), key=lambda i: i["position"])
        updated = [_dialog_item(s, k, m) for k, m in changed.items()]
        return {"items": items, "updated": updated, "stop": stop}
