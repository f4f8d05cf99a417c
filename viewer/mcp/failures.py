"""What went wrong in a session, as far as the index knows: tool results marked as errors (the entries the agent
page badges "error"), sub-agents whose creating call was answered by one, and the problems met reading the files.

The error results are found among the agents' tool results (kept per agent at ingest), read with their small fields
only; each session's list is kept and extended with what arrived since, so asking again costs what is new.
"""

from __future__ import annotations

import weakref

from viewer.core import model
from viewer.reads import queries

from .context import Viewer, page
from .text import Answer, more, one_line

PROBLEMS_LISTED = 20  # the problems page lists them all; a call names the first few, and counts them by kind


class _Errors:
    def __init__(self, epoch):
        self.epoch = epoch
        self.read: dict[str, int] = {}  # agent id -> how many of its tool results were looked at
        self.positions: list[int] = []


_kept: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def tool_errors(s) -> list[int]:
    """Positions of the session's tool results marked as errors (`is_error`), in file order."""
    with s.lock:
        kept = _kept.get(s)
        if kept is None or kept.epoch != s.epoch:
            kept = _kept[s] = _Errors(s.epoch)
        found = []
        for agent_id, agent in s.agents.items():
            results = agent.by_kind.get(model.RECEIVED, ())
            for p in results[kept.read.get(agent_id, 0):]:
                if s.events.small(p).get("is_error") is True:
                    found.append(p)
            kept.read[agent_id] = len(results)
        if found:
            kept.positions = sorted(kept.positions + found)
        return list(kept.positions)


def failed_agents(s, errors: list[int]) -> list[tuple[str, int]]:
    """(agent id, the error result) of each sub-agent whose creating call was answered by an error."""
    erred = set(errors)
    out = []
    with s.lock:
        for agent_id in s.agent_order:
            agent = s.agents[agent_id]
            made = queries.created_by(s, agent)
            if not made or made["missing"] or not made["call_id"]:
                continue
            answers = s.result_positions_for_call(s.by_id[made["message_id"]], made["call_id"])
            bad = next((p for p in answers if p in erred), None)
            if bad is not None:
                out.append((agent_id, bad))
    return out


def _tool_of(s, position: int) -> str:
    call_position = s.call_position_for_result(position)
    if call_position is None:
        return "a tool"
    call_id = s.events[position].get("tool_call_id")
    return next((c.name for c in model.tool_calls(s.events[call_position]) if c.id == call_id), "a tool")


def failures(viewer: Viewer, session_id: str, start: int = 0, limit: int = 50) -> str:
    start, limit = page(start, limit)
    s = viewer.session(session_id)
    errors = tool_errors(s)
    failed = failed_agents(s, errors)
    report = queries.problems(s)
    counts = ", ".join(f"{n:,} {kind}" for kind, n in report["counts"].items()) or "none"
    answer = Answer(f"Failures in session {s.id} ({s.name}): {len(errors):,} tool results marked as errors, "
                    f"{len(failed):,} failed sub-agents, {len(report['problems']):,} problems reading it ({counts}).")
    if failed:
        answer.add("Sub-agents whose creating call was answered by an error:")
        with s.lock:
            for agent_id, bad in failed[:PROBLEMS_LISTED]:
                answer.add(f"- {agent_id} \"{one_line(s.agents[agent_id].display_name)}\": "
                           f"{one_line(model.content_of(s.events[bad]), 300)} "
                           f"({s.events[bad]['message_id']})")
    if report["problems"]:
        answer.add(f"Problems (the first {min(PROBLEMS_LISTED, len(report['problems']))}; all on "
                   f"{viewer.link('pages.problems', session_id=s.id)}):")
        for problem in report["problems"][:PROBLEMS_LISTED]:
            line = f" line {problem['line']}" if problem["line"] is not None else ""
            answer.add(f"- {problem['kind']}{line}: {one_line(problem['detail'], 300)}")
    window = errors[start:start + limit]
    if window:
        answer.add(f"Tool results marked as errors, {start + 1}-{start + len(window)} (message ids go to "
                   f"`message`):")
    shown = 0
    with s.lock:
        for p in window:
            event = s.events[p]
            agent = s.agents.get(event["agent_id"])
            name = agent.display_name if agent else event["agent_id"]
            if not answer.add(f"- {event['message_id']} · {event['agent_id']} \"{one_line(name)}\" · "
                              f"{_tool_of(s, p)}: {one_line(model.content_of(event), 300)}"):
                break
            shown += 1
    answer.end(more(start + shown, len(errors), "error results", f"start={start + shown}"))
    return answer.text()
