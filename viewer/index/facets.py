"""Per-agent lists that filters, the chart, the exports and the hook audit would otherwise find by reading
every event: each tool's entries, the deliveries a hook modified, the events that are not transcript entries,
each event's time (the timeline), and the entries that failed (core/failures.py: counted on the tree and `/`,
listed by the Failures view, `is:error`, coloured on the timeline).

Built after ingest and caught up before every read (like the search index), each by the rule the pages apply to
one event, so a filtered page shows exactly what a walk over the transcript would.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left

from viewer.core import failures, model, times
from viewer.core.kept import array_from, array_state
from viewer.core.incremental import Incremental
from viewer.search import index as search_index


def seconds_of(value) -> float:
    """An event's `timestamp` in seconds since the epoch (core/times.py); NaN when it has none that reads as a time
    (the times are kept in an array of floats)."""
    moment = times.seconds(value)
    return math.nan if moment is None else moment


def _add_to(lists: dict, key: str, position: int) -> None:
    positions = lists.get(key)
    if positions is None:
        positions = lists[key] = array("q")
    if not positions or positions[-1] < position:
        positions.append(position)
        return
    i = bisect_left(positions, position)  # a late fact about an earlier event (a grown message, a late original)
    if positions[i] != position:
        positions.insert(i, position)


class Facets(Incremental):
    def __init__(self, session) -> None:
        super().__init__(session)  # events 0 .. indexed-1 are in the lists
        self.tools: dict[str, dict[str, array]] = {}  # agent -> lowercased tool name -> entry positions (tools_of)
        self._tools_kept: dict[str, dict[str, tuple]] = {}  # agent -> its tools' as kept: made arrays when first read
        self.modified: dict[str, array] = {}  # receiving agent -> positions of its deliveries a hook modified
        self.received: dict[str, int] = {}  # receiving agent -> how many deliveries it has
        self.deliveries = 0
        self.others: dict[str, array] = {}  # agent -> positions of its events that are not transcript entries
        self.pieces: dict[str, array] = {}  # agent -> positions of its pieces of text
        self.originals: dict[str, array] = {}  # agent -> positions of the originals its deliveries name (unsorted)
        self._awaited: dict[str, list[int]] = {}  # message id not seen yet -> deliveries naming it
        self.times = array("d")  # per position: its event's time (seconds_of), NaN without one
        self.failed = array("q")  # positions of the entries that failed (failures.kind_of), ascending
        self.failures: dict[str, array] = {}  # agent -> positions of its entries that failed
        self.typed: dict[str, array] = {}  # agent -> positions of what a person typed to it (no delivery, no result)

    # What it holds: each kept by `state`, or the session it reads (made again)
    HOLDS = frozenset({"indexed", "_session", "tools", "_tools_kept", "modified", "received", "deliveries", "others", "pieces",
                       "originals", "_awaited", "times", "failed", "failures", "typed"})
    _ARRAY_MAPS = ("modified", "others", "pieces", "originals", "typed", "failures")

    def state(self):
        """(name, plain value) of what it keeps (see the persistent cache: store.index_state)."""
        yield "indexed", self.indexed
        yield "received", self.received
        yield "deliveries", self.deliveries
        yield "awaited", self._awaited
        yield "times", array_state(self.times)
        yield "failed", array_state(self.failed)
        yield "tools", {**{agent: {k: array_state(v) for k, v in tools.items()} for agent, tools in self.tools.items()},
                        **self._tools_kept}
        for name in self._ARRAY_MAPS:
            yield name, {k: array_state(v) for k, v in getattr(self, name).items()}

    def restore(self, name: str, value) -> None:
        """Take back one part `state` gave."""
        if name in ("indexed", "received", "deliveries"):
            setattr(self, name, value)
        elif name == "awaited":
            self._awaited = value
        elif name in ("times", "failed"):
            setattr(self, name, array_from(value))
        elif name == "tools":  # thousands of arrays (an agent's for each tool): made for an agent when first read
            self.tools, self._tools_kept = {}, value
        elif name in self._ARRAY_MAPS:
            setattr(self, name, {k: array_from(v) for k, v in value.items()})
        else:
            raise ValueError(f"facets keep no {name!r}")

    def _extend(self, s, start: int, stop: int, events: list | None = None) -> None:
        if events is None:
            events = s.events.walk(start, stop)  # read together, not cached
        texts = s.format.failure_texts
        for position, event in zip(range(start, stop), events):
            self._add(s, position, event, (start, events), texts)
            self.times.append(seconds_of(event.get("timestamp")))
            self.indexed = position + 1

    def _add(self, s, position: int, event: dict, read: tuple[int, list] | None = None, texts: tuple = ()) -> None:
        agent_id, kind = event["agent_id"], event["event_type"]
        if kind == model.TRANSCRIPT_ENTRY:
            if failures.kind_of(event, texts):
                self.failed.append(position)
                _add_to(self.failures, agent_id, position)
            if search_index.touches_tools(event):
                self._tools_of(s, position, agent_id, event, read)
            if model.is_delivery(event):
                self._delivery(s, position, event, read)
            if not model.is_tool_result(event) and event.get("role") == "user" and not model.is_delivery(event):
                _add_to(self.typed, agent_id, position)
        else:
            _add_to(self.others, agent_id, position)
            if kind == model.PIECE_OF_TEXT:
                _add_to(self.pieces, agent_id, position)
            elif kind == model.RESPONSE_PART and event.get("grows") in s.by_id:
                grown = s.by_id[event["grows"]]
                if grown < position:  # it may call more tools now
                    self._tools_of(s, grown, s.events[grown]["agent_id"])
        if self._awaited and s.by_id.get(event["message_id"]) == position:
            for delivery in self._awaited.pop(event["message_id"], ()):  # its deliveries came first
                self._judge(s, delivery, s.events[delivery], event)

    def tools_of(self, agent_id: str) -> dict[str, array] | None:
        """The agent's entries by the tools they call or answer (lowercased tool name -> positions), if any."""
        kept = self._tools_kept.pop(agent_id, None)
        if kept is not None:
            self.tools[agent_id] = {name: array(*positions) for name, positions in kept.items()}
        return self.tools.get(agent_id)

    def _tools_of(self, s, position: int, agent_id: str, event: dict | None = None, read=None) -> None:
        names = search_index.tool_names(s, position, event, read)
        if names:
            lists = self.tools_of(agent_id)
            if lists is None:
                lists = self.tools[agent_id] = {}
            for name in names:
                _add_to(lists, name, position)

    def _delivery(self, s, position: int, event: dict, read: tuple[int, list] | None = None) -> None:
        """A delivery, judged against its original once that is ingested (`read`: as search_index.event_at; the
        original is mostly a few events before, read in the same walk: reading its line again was a third of
        building the facets of a big file)."""
        agent_id = event["agent_id"]
        self.deliveries += 1
        self.received[agent_id] = self.received.get(agent_id, 0) + 1
        original_position = s.by_id.get(event["substance"])
        if original_position is None or original_position > position:
            self._awaited.setdefault(event["substance"], []).append(position)
            return
        self._judge(s, position, event, search_index.event_at(s, original_position, read))

    def _judge(self, s, position: int, event: dict, original: dict) -> None:
        agent_id = event["agent_id"]
        self.originals.setdefault(agent_id, array("q")).append(s.by_id[event["substance"]])
        if model.is_modified(event, original):
            _add_to(self.modified, agent_id, position)


def caught_up(s) -> Facets:
    """The session's facets with every event ingested so far in them (the caller holds the lock)."""
    s.facets.catch_up(s.count)
    return s.facets

