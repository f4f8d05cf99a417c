"""Where the time went: a lane per agent (nested as the tree), each model call, tool call and wait for a person a
bar from its start to its end, failures marked; on the events' own times, else on their order (the axis says).

Read from the index's lists (entries by kind, calls and results by id, each position's time in the facets): no
event is read but the few the longest calls name. A kind's bars closer than a drawing unit are merged (with their
count), so a lane holds at most `width` bars however long the session.
"""

from __future__ import annotations

import math
from itertools import islice

from viewer.core import model
from viewer.index import facets
from viewer.index.session_index import SessionIndex

from . import queries

TIME, ORDER = "time", "order"
MODEL, TOOL, WAIT = "model", "tool", "wait"
WIDTH = 250  # units across the drawn range: about 4 px each on a wide screen
LANES = 40  # lanes a page draws at once (the rest a pager away)
LONGEST = 10  # calls listed as the longest
SPEAKS = (model.DID, model.SAID)  # entries that are a model's response


def _values(s: SessionIndex, times) -> tuple[str, list[float]]:
    """Each position's place on the axis: its time (an event without one takes the one before it), or its order
    when fewer than half of the events have a time."""
    timed = sum(1 for t in times if t == t)  # NaN is not equal to itself
    if not times or timed * 2 < len(times):
        return ORDER, [float(p) for p in range(s.count)]
    values, last = [], next((t for t in times if t == t), 0.0)
    for t in times:
        last = t if t == t else last
        values.append(last)
    return TIME, values


def _bars(s: SessionIndex, agent_id: str, values: list[float], failed: set[int], typed, calls) -> list[tuple]:
    """(kind, start, end, position of the entry it ends at or of the call, failed, call id) of one agent; `typed`: the
    positions of what a person typed to it, `calls`: its (call id, positions of the entries making it)."""
    agent = s.agents[agent_id]
    speaks = set()
    for kind in SPEAKS:
        speaks.update(agent.by_kind.get(kind, ()))
    typed = set(typed)
    bars, previous = [], None
    for p in agent.entries:
        if previous is not None:
            if p in speaks:  # failed when the response is an error the API answered (core/failures.py)
                bars.append((MODEL, values[previous], values[p], p, p in failed, None))
            elif p in typed:
                bars.append((WAIT, values[previous], values[p], p, False, None))
        previous = p
    for call_id, filed in calls:
        for call_position in ((filed,) if type(filed) is int else filed):
            results = s.calls.results_for_call(agent_id, call_id, call_position)
            end = max((values[r] for r in results), default=values[call_position])
            bars.append((TOOL, values[call_position], end, call_position, any(r in failed for r in results), call_id))
    return bars


class Drawn:
    """What every timeline of a session at one reading shares, kept on the session (`timeline_drawn`) under its
    cursor: the axis, the lanes' order, each agent's bars over the whole session, every call's bar longest first,
    and the whole session's longest calls. A session that grew is drawn again whole: a new result or a new time
    moves bars already drawn (their ends, the axis), so nothing of the old one is kept."""

    __slots__ = ("cursor", "axis", "values", "first", "last", "order", "bars", "by_length", "longest")

    def __init__(self, s: SessionIndex) -> None:
        kept = facets.caught_up(s)
        self.cursor = s.cursor
        self.axis, self.values = _values(s, kept.times)
        self.first = min(self.values) if self.values else 0.0
        self.last = max(self.values) if self.values else 0.0
        self.order = queries.tree_order(s)
        failed = set(kept.failed)
        calls: dict[str, list] = {}
        for (owner, call_id), filed in s.calls.call_positions.items():
            calls.setdefault(owner, []).append((call_id, filed))
        self.bars = {agent_id: _bars(s, agent_id, self.values, failed, kept.typed.get(agent_id, ()),
                                     calls.get(agent_id, ())) for agent_id in s.agents}
        every = [(bar, agent_id) for agent_id, bars in self.bars.items() for bar in bars if bar[0] != WAIT]
        every.sort(key=lambda item: item[0][2] - item[0][1], reverse=True)
        self.by_length = every
        self.longest = [_call(s, bar, agent_id, self.axis) for bar, agent_id in every[:LONGEST]]


def drawn(s: SessionIndex) -> Drawn:
    """The session's Drawn, built once per reading (callers hold the lock)."""
    kept = s.timeline_drawn
    if kept is None or kept.cursor != s.cursor:
        kept = s.timeline_drawn = Drawn(s)
    return kept


def timeline(s: SessionIndex, start: float | None = None, end: float | None = None, width: int = WIDTH,
             first_lane: int = 0, lanes_shown: int = LANES) -> dict:
    """The lanes `first_lane` .. + `lanes_shown` (in tree order) of the range [start, end] (the whole session by
    default), merged to `width` units; the longest calls of every lane."""
    with s.lock:
        kept = drawn(s)
        axis, values = kept.axis, kept.values
        order = kept.order
        first_lane = min(max(first_lane, 0), max(len(order) - 1, 0))
        lanes, first, last = [], kept.first, kept.last
        low = first if start is None else max(first, start)
        high = last if end is None else min(last, end)
        span = max(high - low, 1e-9)
        for agent_id, depth, _ in order[first_lane:first_lane + lanes_shown]:
            agent = s.agents[agent_id]
            bars = [bar for bar in kept.bars[agent_id] if bar[2] >= low and bar[1] <= high]
            spawned_at = s.by_id.get(agent.cause) if agent.cause else None
            lanes.append({
                "agent_id": agent_id, "name": agent.display_name, "depth": depth, "ordinal": agent.ordinal,
                "entries": len(agent.entries),
                "failures": sum(1 for bar in bars if bar[4]),
                "spawned_at": _unit(values[spawned_at], low, span, width) if spawned_at is not None
                and low <= values[spawned_at] <= high else None,
                "bars": _merged(bars, low, span, width),
            })
        if low <= first and high >= last:
            longest = kept.longest
        else:  # the longest calls overlapping the range: the first found, longest first
            within = (item for item in kept.by_length if item[0][2] >= low and item[0][1] <= high)
            longest = [_call(s, bar, agent_id, axis) for bar, agent_id in islice(within, LONGEST)]
        return {"axis": axis, "first": first, "last": last, "start": low, "end": high, "width": width,
                "first_lane": first_lane, "lanes_total": len(order), "lanes": lanes, "longest": list(longest),
                "ticks": _ticks(low, high, width), "events": s.count}


def _unit(value: float, low: float, span: float, width: int) -> float:
    return round((value - low) / span * width, 2)


def _merged(bars: list[tuple], low: float, span: float, width: int) -> list[dict]:
    """The lane's bars in drawing units, each kind's bars closer than a unit merged into one (with their count)."""
    out: list[dict] = []
    scale, high = width / span, low + span
    for kind in (WAIT, MODEL, TOOL):
        current, reach = None, -2.0  # the bar being merged into, and where it ends
        for _, start, end, position, failed, _ in sorted((b for b in bars if b[0] == kind), key=lambda b: b[1:4]):
            x0 = ((start if start > low else low) - low) * scale
            x1 = ((end if end < high else high) - low) * scale
            if x0 <= reach + 1:
                reach = max(reach, x1)
                current["count"] += 1
                current["failed"] += failed
                if end - start > current["longest"]:
                    current["longest"], current["position"] = end - start, position
                current["w"] = round(reach - current["x"], 2)
                continue
            reach = x1
            current = {"kind": kind, "x": round(x0, 2), "w": round(max(x1 - x0, 0.0), 2), "count": 1,
                       "failed": int(failed), "longest": end - start, "position": position}
            out.append(current)
    return out


def _call(s: SessionIndex, bar: tuple, agent_id: str, axis: str) -> dict:
    kind, start, end, position, failed, call_id = bar
    event = s.events[position]
    calls = [call.name for call in model.tool_calls(event) if call.id == call_id]
    name = (calls[0] if calls else "tool call") if kind == TOOL else (event.get("model") or "model")
    return {"kind": kind, "agent_id": agent_id, "name": name if isinstance(name, str) else "model",
            "agent_name": s.agents[agent_id].display_name, "position": position,
            "message_id": event["message_id"], "start": start, "end": end, "length": end - start, "failed": failed,
            "unit": "s" if axis == TIME else "events"}


def _ticks(low: float, high: float, width: int, count: int = 6) -> list[dict]:
    """About `count` round values across the range, each with its place in drawing units."""
    span = high - low
    if span <= 0:
        return [{"x": 0.0, "value": low}]
    raw = span / count
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 5, 10) if step * m >= raw)
    first = math.ceil(low / step) * step
    return [{"x": _unit(first + i * step, low, span, width), "value": first + i * step}
            for i in range(int((high - first) / step) + 1)]
