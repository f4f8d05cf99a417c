"""The tools about whole sessions: the list (with its filters), a session's agent tree, and its usage and cost.

Each reads what the sessions list, the session page and the agent page read (web.render.session_rows,
reads.queries.tree_rows, reads.costs, index.usage) and words it as compact text. Each runs inside Viewer.run.
"""

from __future__ import annotations

import re
import time

from mcp.server.mcpserver.exceptions import ToolError

from viewer.core import times
from viewer.index import usage as usages
from viewer.reads import costs, queries
from viewer.web.render import session_rows

from .context import Viewer, page
from .text import Answer, cost, more, one_line, when

_AGO = re.compile(r"\s*(\d{1,9})\s*(m|min|h|d|w)\s*", re.IGNORECASE)
_UNIT_SECONDS = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def since_time(text: str | None, now: float | None = None) -> float | None:
    """`changed_since` as a time: "30m", "2h", "3d", "1w" ago, an ISO 8601 date or time (UTC unless it says), or
    seconds since the epoch; a clear error for anything else."""
    if text is None or not text.strip():
        return None
    now = time.time() if now is None else now
    if match := _AGO.fullmatch(text):
        return now - int(match.group(1)) * _UNIT_SECONDS[match.group(2).lower()]
    try:
        return float(text)
    except ValueError:
        pass
    at = times.seconds(text.strip())
    if at is None:
        raise ToolError(f"changed_since takes a time ago (30m, 2h, 3d, 1w), an ISO 8601 date or time "
                        f"(2026-11-27T10:00Z) or seconds since 1970, not {text!r}.")
    return at


def _plain(name: str) -> str:
    """A format's name as a model may spell it: claude_code, claude-code and "Claude Code" are one."""
    return re.sub(r"[\W_]+", "", name).lower()


def list_sessions(viewer: Viewer, format: str | None = None, project: str | None = None,
                  changed_since: str | None = None, failures: bool = False, start: int = 0, limit: int = 50) -> str:
    start, limit = page(start, limit)
    since = since_time(changed_since)
    listed = viewer.library.listing()
    kept = []
    for s, row in zip(listed, session_rows(viewer.library, listed)):
        if format and _plain(format) not in (_plain(row["format"]), _plain(row["format_label"])):
            continue
        if project and project.lower() not in (row["project"] or "").lower():
            continue
        if since is not None and (row["updated_at"] or 0) < since:
            continue
        if failures and not row["problems"] and not row["failures"]:
            continue
        kept.append((s, row))
    kept.sort(key=lambda pair: (-(pair[1]["updated_at"] or 0), pair[1]["path"]))
    window = kept[start:start + limit]
    reading = viewer.library.progress()
    answer = Answer(f"{len(kept):,} sessions match (of {len(listed):,}), most recently changed first; showing "
                    f"{start + 1 if window else 0}-{start + len(window)}. Ids go to the other tools; links are "
                    f"the viewer's pages.",
                    f"(still reading {len(reading):,} files: more sessions may appear)" if reading else "")
    shown = 0
    for s, row in window:
        title = f' "{one_line(row["title"])}"' if row["title"] else ""
        facts = [row["format_label"], f"project {row['project']}" if row["project"] else "",
                 f"{row['events']:,} events, {row['agents']:,} agents, {row['problems']:,} problems",
                 cost(costs.session_cost(s)), f"updated {when(row['updated_at'])}"]
        if not answer.add(f"- {row['id']}{title} · " + " · ".join(f for f in facts if f)
                          + f"\n  file {row['path']} · page {viewer.linked(row['url'])}"):
            break
        shown += 1
    answer.end(more(start + shown, len(kept), "sessions", f"start={start + shown}"))
    return answer.text()


def agent_tree(viewer: Viewer, session_id: str, start: int = 0, limit: int = 200) -> str:
    start, limit = page(start, limit)
    s = viewer.session(session_id)
    with s.lock:
        rows = queries.tree_rows(s)
        rolled_up = costs.tree_costs(s)
    window = rows[start:start + limit]
    answer = Answer(f"Session {s.id} ({s.name}): {len(rows):,} agents, parents before children (indent = depth). "
                    f"Session page {viewer.link('pages.session', session_id=s.id)}")
    shown = 0
    for row in window:
        paid = rolled_up.get(row["agent_id"])
        spent = ""  # said only when something was priced
        if paid and paid["subtree"]["cost_usd"] is not None:
            spent = cost(paid["own"])
            if s.agents[row["agent_id"]].children:
                spent += f", {cost(paid['subtree'])} with sub-agents"
        made = row["created_by"]
        facts = [f'"{one_line(row["name"])}"', row["language_model"] or "", f"{row['entries']:,} entries", spent,
                 f"created by {made['tool'] or 'a message'} {one_line(made['summary'], 120)!r} in {made['message_id']}"
                 if made and not made["missing"] else "",
                 "flags " + ", ".join(row["flags"]) if row["flags"] else ""]
        line = ("  " * row["depth"] + f"- {row['agent_id']} · " + " · ".join(f for f in facts if f)
                + f" · {viewer.link('pages.agent', session_id=s.id, agent_id=row['agent_id'])}")
        if not answer.add(line):
            break
        shown += 1
    answer.end(more(start + shown, len(rows), "agents", f"start={start + shown}"))
    return answer.text()


def _tokens(totals: dict) -> str:
    parts = [f"{totals[k]:,} {label}" for k, label in (
        ("input_tokens", "input"), ("output_tokens", "output"), ("cache_creation_input_tokens", "cache writes"),
        ("cache_read_input_tokens", "cache reads")) if totals.get(k)]
    return ", ".join(parts) or "no tokens logged"


def _peak(totals: dict) -> str:
    peak = totals.get("peak_context")
    if not peak:
        return ""
    of = f" of {peak['window']:,} ({peak['percent']:.0f}%)" if peak["window"] else ""
    return f"; peak context {peak['tokens']:,} tokens{of}"


def _priced(s) -> str:
    prices = costs.prices_note(s.host.prices)  # the prices of the app the session is part of
    return f"(prices as of {prices['as_of']}, {prices['source']})"


def totals_lines(s) -> list[str]:
    """A session's tokens, models and cost, as the session page sums them."""
    with s.lock:
        totals = usages.for_session(s)
    return [f"Session {s.id}: {totals['responses']:,} responses, {_tokens(totals)}{_peak(totals)}",
            f"models: {', '.join(totals['models']) or 'none named'}",
            f"cost: {cost({k: totals[k] for k in ('cost_usd', 'unpriced_models')})} {_priced(s)}"]


def session_summary(viewer: Viewer, session_id: str) -> str:
    """The session resource: its totals, then its agent tree."""
    s = viewer.session(session_id)
    return "\n".join(totals_lines(s)) + "\n" + agent_tree(viewer, s.id)


def usage(viewer: Viewer, session_id: str, agent_id: str | None = None, start: int = 0, limit: int = 50) -> str:
    start, limit = page(start, limit)
    s = viewer.session(session_id)
    if agent_id:
        viewer.agent(s, agent_id)
        with s.lock:
            totals, spent = usages.for_agent(s, agent_id), costs.subtree_cost(s, agent_id)
        return Answer(
            f"Agent {agent_id} of session {s.id}: {totals['responses']:,} responses, {_tokens(totals)}{_peak(totals)}",
            f"models: {', '.join(totals['models']) or 'none named'}",
            f"cost: {cost(spent['own'])}; with its sub-agents {cost(spent['subtree'])} {_priced(s)}",
            f"page {viewer.link('pages.agent', session_id=s.id, agent_id=agent_id)}").text()
    with s.lock:
        rolled_up, order = costs.tree_costs(s), [a for a, _, _ in queries.tree_order(s)]
    answer = Answer(*totals_lines(s), f"per agent, in tree order (own cost; with sub-agents), {start + 1}-"
                                      f"{min(len(order), start + limit)} of {len(order):,}:")
    shown = 0
    for agent in order[start:start + limit]:
        paid = rolled_up[agent]
        if not answer.add(f"- {agent}: {cost(paid['own'])}; {cost(paid['subtree'])}"):
            break
        shown += 1
    answer.end(more(start + shown, len(order), "agents", f"start={start + shown}"))
    return answer.text()
