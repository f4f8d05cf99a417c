"""Two runs side by side: which agents match, where each matched pair's transcripts part, and what differs in sum.

A run is a session (or one agent's subtree of it, or a session as of event N). Agents are matched by what they
are, never by id: the roots, then each matched parent's children, are aligned by name and the tool that made
them, and children left between two matched neighbours are paired by place. Each pair's transcripts are aligned
(alignment.py) over entries reduced to their kind, speaker, tools and normalised text, so message ids, times and
spacing that differ between two runs of one script never count as differences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Hashable

from viewer.core import failures, model, times
from viewer.index import failed, usage
from viewer.index.session_index import SessionIndex

from . import queries
from .alignment import align
from .labels import log_text

TEXT_SHOWN = 400  # characters of an entry's text a comparison shows
ENTRIES_SHOWN = 10  # entries of each side of one change listed (the rest counted, a link away)
ENTRIES_LISTED = 1000  # entries of each side listed in all: past them a change gives its bounds only
METRICS = ("entries", "tool_calls", "failures", "agents_spawned", "input_tokens", "output_tokens", "cost_usd",
           "seconds")

# What differs between two runs of the same script without being a difference: ids, times, spacing. Each of these
# holds a digit, so text without one is left as it is (checked first: a scan in C, where the pattern is not).
_NOISE = re.compile(
    r"\b(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"  # uuids
    r"|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"  # ISO times
    r"|(?:toolu|call|msg|req|run)_[A-Za-z0-9]{8,}\b"  # provider ids
    r"|[0-9a-f]{16,}\b)")  # hashes and hex ids
_DIGIT = re.compile(r"\d")


def normalised(text: str) -> str:
    return " ".join((_NOISE.sub("#", text) if _DIGIT.search(text) else text).split())


@dataclass(frozen=True)
class Run:
    """One side of a comparison: a session, from which agents (None: its roots), as of which event (None: now)."""

    session: SessionIndex
    agent_id: str | None = None

    @property
    def roots(self) -> list[str]:
        return list(self.session.roots) if self.agent_id is None else [self.agent_id]


def compare(a: Run, b: Run) -> dict:
    """The comparison's data: both runs, whether they agree, the first divergence, each matched pair of agents
    with its aligned transcript, the agents only one run has, and the differences summed per agent and per run.

    Each run is read under its own session's lock, one after the other (never both held: two comparisons the
    other way round would each wait for the other), then aligned holding neither."""
    side_a, side_b = _read(a), _read(b)
    pairs, only_a, only_b = match_agents(side_a, side_b)
    numbers: dict[Hashable, int] = {}  # each distinct token a number: the alignment compares ints, not tuples
    aligned = [(x, y, depth, how, align([numbers.setdefault(t, len(numbers)) for t in side_a.agents[x].tokens],
                                        [numbers.setdefault(t, len(numbers)) for t in side_b.agents[y].tokens]))
               for x, y, depth, how in pairs]
    with a.session.lock:
        a_refs = _refs(a.session, side_a, [(x, alignment, "a") for x, _, _, _, alignment in aligned])
    with b.session.lock:
        b_refs = _refs(b.session, side_b, [(y, alignment, "b") for _, y, _, _, alignment in aligned])
    compared = []
    for i, (x, y, depth, how, alignment) in enumerate(aligned):
        hunks = [{**a_refs[i][k], **b_refs[i][k]} for k in range(len(alignment.runs))]
        compared.append({"a": side_a.agents[x].ref, "b": side_b.agents[y].ref, "depth": depth, "matched_by": how,
                         "same": all(h["equal"] for h in hunks), "exact": alignment.exact, "hunks": hunks,
                         "metrics": {"a": side_a.agents[x].metrics, "b": side_b.agents[y].metrics}})
    first = _first_divergence(compared)
    if first is None and (only_a or only_b):
        first = {"pair": None, "a": side_a.agents[only_a[0]].ref if only_a else None,
                 "b": side_b.agents[only_b[0]].ref if only_b else None, "a_entry": None, "b_entry": None,
                 "a_index": None, "b_index": None, "agents_differ": True}
    return {
        "a": side_a.summary, "b": side_b.summary,
        "agree": first is None,
        "first_divergence": first,
        "pairs": compared,
        "only_in_a": [side_a.agents[x].ref for x in only_a],
        "only_in_b": [side_b.agents[y].ref for y in only_b],
        "totals": {"a": side_a.totals, "b": side_b.totals},
    }


@dataclass
class _Agent:
    ref: dict
    key: tuple
    children: list[str]
    positions: list[int]
    tokens: list[Hashable]
    metrics: dict


@dataclass
class _Side:
    """What a comparison needs of one run, read under its session's lock."""

    roots: list[str]
    order: list[str]  # its agents in tree order
    agents: dict[str, _Agent]
    summary: dict
    totals: dict


WALK = 4096  # entries read at a time: runs of lines are read together, and never the whole session at once


def _events(s: SessionIndex, positions: list[int]) -> list[dict]:
    """The events at `positions` (ascending): read as runs of lines where they lie close, one by one where not."""
    if positions and positions[-1] - positions[0] < 4 * len(positions):
        walked = s.events.walk(positions[0], positions[-1] + 1)
        return [walked[p - positions[0]] for p in positions]
    return [s.events[p] for p in positions]


def _read(run: Run) -> _Side:
    """Each agent's entries as tokens and its sums, reading the run's events once, in file order."""
    s = run.session
    with s.lock:
        order = [agent_id for agent_id, _, _ in queries.tree_order(s, run.roots)]
        wanted = sorted((p, i) for i, agent_id in enumerate(order) for p in s.agents[agent_id].entries)
        tokens: list[list[Hashable]] = [[] for _ in order]
        counts = [[0, 0] for _ in order]  # tool calls, failures
        logged: list[list] = [[] for _ in order]  # the time of its first entry, then of its latest one
        senders: dict[str, str | None] = {}  # a delivered message's id -> its sender's name (many share one)
        for start in range(0, len(wanted), WALK):
            chunk = wanted[start:start + WALK]
            for (_, i), event in zip(chunk, _events(s, [p for p, _ in chunk])):
                tokens[i].append(_token(s, event, senders))
                counts[i][0] += len(model.tool_calls_of(event))
                counts[i][1] += _failed(s, event)
                logged[i][1:] = [event.get("timestamp")]
        lane = {agent_id: i for i, agent_id in enumerate(order)}
        for position, _ in failed.unanswered(s):  # a call the session ended without answering failed too
            if (i := lane.get(s.events[position]["agent_id"])) is not None:
                counts[i][1] += 1
        agents = {agent_id: _Agent(_agent_ref(s, agent_id), _agent_key(s, agent_id), list(s.agents[agent_id].children),
                                   list(s.agents[agent_id].entries), tokens[i],
                                   _agent_metrics(s, agent_id, *counts[i], _seconds(logged[i])))
                  for i, agent_id in enumerate(order)}
        summary = {"session_id": s.id, "title": s.title or s.name, "path": s.relpath, "agent_id": run.agent_id,
                   "as_of": getattr(s, "as_of", None), "events": s.count}
        # the run's first entry and its last (in file order) are the first and last walked
        ends = [logged[wanted[0][1]][0], logged[wanted[-1][1]][-1]] if wanted else []
        return _Side(list(run.roots), order, agents, summary, _run_metrics(order, agents, _seconds(ends)))


# --- agents ---------------------------------------------------------------------------------------------------

def _agent_key(s: SessionIndex, agent_id: str) -> tuple:
    """What an agent is, for matching: its name (ids in it normalised) and the tool that created it."""
    agent = s.agents[agent_id]
    made_by = queries.created_by(s, agent)
    return normalised(agent.display_name).lower(), (made_by or {}).get("tool")


def _subtree(side: _Side, agent_id: str) -> list[str]:
    out, stack = [], [agent_id]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(reversed(side.agents[current].children))
    return out


def match_agents(a: _Side, b: _Side) -> tuple[list[tuple[str, str, int, str]], list[str], list[str]]:
    """(pairs as (A agent, B agent, depth, matched by "name" or "place"), A's unmatched, B's unmatched), in A's
    tree order. Unmatched agents' descendants are unmatched too."""
    pairs, only_a, only_b = [], [], []
    stack = [(a.roots, b.roots, 0)]
    while stack:
        xs, ys, depth = stack.pop()
        matched = []
        for run in align([a.agents[x].key for x in xs], [b.agents[y].key for y in ys]).runs:
            for offset in range(max(run.a_end - run.a_start, run.b_end - run.b_start)):
                x = xs[run.a_start + offset] if run.a_start + offset < run.a_end else None
                y = ys[run.b_start + offset] if run.b_start + offset < run.b_end else None
                if x is not None and y is not None:
                    matched.append((x, y, "name" if run.equal else "place"))
                elif x is not None:
                    only_a.extend(_subtree(a, x))
                else:
                    only_b.extend(_subtree(b, y))
        pairs.extend((x, y, depth, how) for x, y, how in matched)
        for x, y, _ in reversed(matched):  # the first matched agent's subtree comes out first
            stack.append((a.agents[x].children, b.agents[y].children, depth + 1))
    order = {agent_id: i for i, agent_id in enumerate(a.order)}
    pairs.sort(key=lambda pair: order[pair[0]])
    only_a.sort(key=order.__getitem__)
    return pairs, only_a, only_b


def _agent_ref(s: SessionIndex, agent_id: str) -> dict:
    return {"agent_id": agent_id, "name": s.agents[agent_id].display_name, "ordinal": s.agents[agent_id].ordinal}


# --- one matched pair -----------------------------------------------------------------------------------------

def _token(s: SessionIndex, event: dict, senders: dict[str, str | None]) -> Hashable:
    """An entry as a comparison sees it: kind, who it came from, the calls it made, its normalised text."""
    kind = model.perspective_kind(event)
    speaker = event.get("role") if isinstance(event.get("role"), str) else None
    if model.is_delivery(event):
        substance = event["substance"]
        if substance not in senders:
            original = s.event(substance)
            sender = s.agents.get(original["agent_id"]) if original else None
            senders[substance] = normalised(sender.display_name) if sender else None
        speaker = f"from {senders[substance]}" if senders[substance] else speaker
    calls = tuple((call.name, normalised(call.arguments_raw if isinstance(call.arguments_raw, str)
                                         else repr(call.arguments_raw)))
                  for call in model.tool_calls(event))
    return kind, speaker, calls, normalised(model.content_of(event))


def _entry_ref(s: SessionIndex, agent_id: str, index: int, position: int) -> dict:
    event = s.events[position]
    calls = model.tool_calls(event)
    text = model.content_of(event) or " ".join(call.summary(TEXT_SHOWN) for call in calls)
    shown = log_text(text)  # masked whole, then cut
    return {"index": index, "position": position, "message_id": event["message_id"], "agent_id": agent_id,
            "kind": model.perspective_kind(event), "role": event.get("role") if isinstance(event.get("role"), str)
            else None, "tools": [call.name for call in calls], "failed": _failed(s, event),
            "text": shown if len(shown) <= TEXT_SHOWN else shown[:TEXT_SHOWN - 1] + "…"}


def _failed(s: SessionIndex, event: dict) -> bool:
    """Whether an entry failed, by the rule every page counts failures with (core/failures.py)."""
    return failures.kind_of(event, s.format.failure_texts) is not None


def _refs(s: SessionIndex, side: _Side, aligned: list) -> list[list[dict]]:
    """Each alignment's runs, as one side of the hunks a comparison shows: where they are, and the entries of a
    change (at most ENTRIES_SHOWN, and ENTRIES_LISTED in all) or the first entry of an equal run (its link)."""
    out, budget = [], ENTRIES_LISTED
    for agent_id, alignment, name in aligned:
        positions, hunks = side.agents[agent_id].positions, []
        for run in alignment.runs:
            start, end = (run.a_start, run.a_end) if name == "a" else (run.b_start, run.b_end)
            hunk = {"equal": run.equal, f"{name}_start": start, f"{name}_end": end}
            if run.equal:
                hunk[f"{name}_first"] = _entry_ref(s, agent_id, start, positions[start])
            else:
                shown = min(end - start, ENTRIES_SHOWN, budget)
                budget -= shown
                hunk[name] = [_entry_ref(s, agent_id, i, positions[i]) for i in range(start, start + shown)]
            hunks.append(hunk)
        out.append(hunks)
    return out


def _first_divergence(pairs: list[dict]) -> dict | None:
    """The earliest change in run A's order of events (an insertion sits just after the entry before it)."""
    best, best_key = None, None
    for i, pair in enumerate(pairs):
        hunk = next((h for h in pair["hunks"] if not h["equal"]), None)
        if hunk is None:
            continue
        if hunk["a"]:
            key = (hunk["a"][0]["position"], 0)
        else:
            before = [h for h in pair["hunks"] if h["equal"] and h["a_end"] == hunk["a_start"]]
            key = ((before[0]["a_first"]["position"] + hunk["a_start"] - before[0]["a_start"]) if before else -1, 1)
        if best_key is None or key < best_key:
            best_key = key
            best = {"pair": i, "a": pair["a"], "b": pair["b"], "a_entry": hunk["a"][0] if hunk["a"] else None,
                    "b_entry": hunk["b"][0] if hunk["b"] else None, "a_index": hunk["a_start"],
                    "b_index": hunk["b_start"], "agents_differ": False}
    return best


# --- sums -----------------------------------------------------------------------------------------------------

def _seconds(logged: list) -> float | None:
    """From the first logged time of a list to its last (None unless both read as times)."""
    ends = [times.seconds(logged[0]), times.seconds(logged[-1])] if logged else []
    if len(ends) == 2 and None not in ends:
        return max(0.0, ends[1] - ends[0])
    return None


def _agent_metrics(s: SessionIndex, agent_id: str, tool_calls: int, failures: int, seconds: float | None) -> dict:
    agent = s.agents[agent_id]
    used = usage.for_agent(s, agent_id)
    return {"entries": len(agent.entries), "tool_calls": tool_calls, "failures": failures,
            "agents_spawned": len(agent.children), "input_tokens": used["input_tokens"],
            "output_tokens": used["output_tokens"], "cost_usd": used["cost_usd"], "seconds": seconds}


def _run_metrics(order: list[str], agents: dict[str, _Agent], seconds: float | None) -> dict:
    sums = {name: sum(agents[agent_id].metrics[name] for agent_id in order)
            for name in METRICS if name not in ("cost_usd", "seconds")}
    costs = [agents[agent_id].metrics["cost_usd"] for agent_id in order
             if agents[agent_id].metrics["cost_usd"] is not None]
    return {**sums, "agents": len(order), "cost_usd": sum(costs) if costs else None, "seconds": seconds}
