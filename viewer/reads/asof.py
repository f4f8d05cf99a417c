""""As of event N": a session as it was right after its N-th event (?at=N on any page or JSON twin).

The index is append-only and every rule reads positions in file order, so the state after N events is an index
fed the first N events: `snapshot` builds one (from the nearest earlier one the app keeps) and every view reads it.
"""

from __future__ import annotations

from viewer.core.bounded_map import BoundedMap
from viewer.core.tuning import Tuning
from viewer.index.session_index import SessionIndex

CACHE_SIZE = 16


def snapshots(most_events: int = Tuning.asof_cache_events) -> BoundedMap:
    """The snapshots kept for the next request (one per running app): at most CACHE_SIZE, holding about
    `most_events` events in all (each is an index of its own)."""
    return BoundedMap("as-of copies", CACHE_SIZE, weigh=lambda key: key[2], most_weight=most_events)


class Snapshot(SessionIndex):
    """A session frozen right after its first `as_of` events (of `live_count` read when it was made)."""

    def __init__(self, live: SessionIndex, as_of: int = 0, live_count: int = 0) -> None:
        super().__init__(live.id, live.path, live.relpath, live.format, live.format_reason, live.name, live.host)
        self.project, self.title, self.format_summary, self.members = (live.project, live.title,
                                                                       live.format_summary, live.members)
        self.as_of = as_of
        self.live_count = live_count


def snapshot(s: SessionIndex, n: int, kept: BoundedMap | None = None) -> Snapshot:
    """The session right after its first n events (n is clamped to what has been read).

    Built from the nearest snapshot kept in `kept` before n when there is one (copied, then fed the events
    between), so stepping through a big session replays a few events, not all n again.
    """
    kept = kept if kept is not None else snapshots()
    with s.lock:
        n = min(n, s.count)
        key = (s.serial, s.epoch, n)
        found = kept.get(key)
        if found is not None:
            return found
        earlier = [k for k in kept.keys() if k[:2] == key[:2] and k[2] < n]
        base = kept.get(max(earlier, key=lambda k: k[2])) if earlier else None
        stored, lines = s.events.prefix(n), s.line_numbers[:n]
        last_line = lines[-1] if lines else 0
        # problems of the lines themselves are not found again by replaying events: kept for the lines covered
        parse_problems = [p for p in s.problems if p.of_line and p.line <= last_line]
        epoch, updated_at, total = s.epoch, s.updated_at, s.count
    with s.host.gc.batch() as counter:  # an index of its own: as many objects as the session's, kept as long
        if base is not None:
            frozen, start = base.copy(), base.as_of
        else:
            frozen, start = Snapshot(s), 0
        frozen.epoch, frozen.updated_at = epoch, updated_at
        for position in range(start, n):  # the same rules as the live ingest, event by event
            frozen.add(stored.load(position), lines[position])
        frozen.events.share(stored, start)  # lines kept as the live session keeps them, not as parsed copies
        frozen.problems = parse_problems + [p for p in frozen.problems if not p.of_line]
        counter["added"] = n - start  # a copy adds a few big containers; only a replay adds objects by the million
    frozen.as_of, frozen.live_count = n, total
    kept.put(key, frozen)
    return frozen
