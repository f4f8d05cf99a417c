"""A session, an agent, a dialog and a message: each one view that builds one data object and answers it, at the
end, as its page or as JSON (its URL under /api/), as Datasette's views do. pages.py and api.py route here.

The object is built once, under the session's lock, by the *_data functions (the MCP server reads with them too);
its shape is declared in shapes.py (checked in debug and test runs) and documented in docs/api.md. What only a page
shows (costs, pictures, poll URLs) is gathered after it, under the same lock; the page renders outside it.
"""

from __future__ import annotations

from flask import current_app, request

from viewer.core import model, times
from viewer.index import failed, usage
from viewer.reads import causality, costs, dialogs, pictures, provenance, queries
from viewer.reads.filters import KINDS, EntryFilter, tool_choices

from ..formats import ai_agent
from . import shapes, tree_outline
from .asked import (agent_or_404, chosen_agents, ended, flag_arg, int_arg, message_or_404, session_or_404,
                    with_facets)
from .render import agent_urls, answer, built, session_row, wants_json
from .state import library, state
from .url_cache import url_for

API_LIMIT = 1000  # entries or messages a JSON answer holds unless ?limit= says otherwise (a page: its page size)


# --- the data objects (callers hold the session's lock) -------------------------------------------

def session_data(s) -> dict:
    """shapes.Session: the session's row (its failures counted with every event read so far), its cursor, its
    agents (with their pages' URLs), problems and usage."""
    agents, url_of = queries.agents(s), agent_urls(s.id)
    for agent in agents:
        agent["url"] = url_of(agent["agent_id"])
    return {**session_row(s), "failures": failed.total(s), "cursor": s.cursor, "agents": agents,
            "problems": [p.as_dict() for p in s.problems],
            "usage": usage.for_session(s), "format_summary": s.format_summary}


def agent_data(s, agent_id: str) -> dict:
    """What an agent's page says of the agent above its transcript (shapes.Agent less the transcript window):
    its summary, the agents it descends from, its sub-agents and its token usage."""
    agent = s.agents[agent_id]
    return {**queries.agent_summary(s, agent), "lineage": queries.lineage(s, agent_id),
            "children": [queries.agent_summary(s, s.agents[c]) for c in agent.children],
            "usage": usage.for_agent(s, agent_id)}


def agent_window(s, agent_id: str, positions, start: int, limit: int, url_args: dict) -> dict:
    """shapes.Agent: agent_data, and the events at `positions` (its entries, as its page chose them) from `start`;
    `url_args` (filters, sub-agents) make its page's URL and the next window's."""
    window = positions[start:start + limit]
    end = start + len(window)
    return {**agent_data(s, agent_id), "transcript": [s.events[p] for p in window], "start": start,
            "total": len(positions), "url": url_for("pages.agent", session_id=s.id, agent_id=agent_id, **url_args),
            "next": url_for("api.agent", session_id=s.id, agent_id=agent_id, start=end, limit=limit, **url_args)
            if end < len(positions) else None}


def dialog_data(s, chosen: list[str], view: dict) -> dict:
    """shapes.Dialog: the dialog's window (dialogs.dialog), each message its event and who said it to whom."""
    messages = [{**item["event"], "speaker": item["speaker"], "recipients": item["recipients"],
                 "modified": item["modified"]} for item in view["items"]]
    return {"agents": chosen, "messages": messages, "start": view["start"], "total": view["total"],
            "url": url_for("pages.dialog", session_id=s.id, agents=",".join(chosen))}


def message_data(s, message_id: str, position: int) -> dict:
    """shapes.Message: the event, its causality chain, what represents it, where it came from, its page's URL."""
    return {"event": s.events[position], "flow": causality.causality_chain(s, message_id),
            "references": causality.references(s, message_id),
            "provenance": provenance.message_provenance(s, message_id),
            "url": url_for("pages.message", session_id=s.id, message_id=message_id)}


# --- the views ----------------------------------------------------------------------------------------

def session(session_id):
    s = session_or_404(session_id)
    with s.lock:
        data = built(shapes.Session, session_data(s))
        page = None if wants_json() else _session_page(s, data)
    if page is not None:  # outside the session's lock: the library's is taken before a session's, never after
        page["reading"] = library().progress_of(s.path)
    return answer(data, "session.html", page)


def _session_page(s, data: dict) -> dict:
    summaries = {agent["agent_id"]: agent for agent in data["agents"]}  # with their URLs: made once, in the data
    summed = tree_outline.sums(s, summaries)
    tree = [{**row, "cost": summed.costs.get(row["agent_id"]), "failures": summed.failures.get(row["agent_id"])}
            for row in queries.tree_rows(s, summaries=summaries)]
    return dict(data=data, session=session_row(s), tree=tree, agents=data["agents"], problems=len(data["problems"]),
                failures=data["failures"],
                usage=data["usage"], summary=data["format_summary"], outline=_outline(data["format_summary"]),
                poll=url_for("pages.poll_tree", session_id=s.id, after=data["cursor"],
                             problems=len(data["problems"]), ended=ended(s), empty=1 if not s.count else None))


def _outline(summary: dict | None) -> list[dict] | None:
    """The rows of a snapshot's own tree (ai-agent), if its format records one."""
    outline = (summary or {}).get("outline")
    return ai_agent.outline_rows(outline) if outline else None


def agent(session_id, agent_id):
    """The agent, and a window of its entries (with ?sub=1 its sub-agents' too; ?kind=&tool=&modified= filter)."""
    s = session_or_404(session_id)
    agent_or_404(s, agent_id)
    include_subagents, start, size = flag_arg("sub"), int_arg("start"), page_size("AGENT_PAGE_SIZE")
    filters = EntryFilter.from_args(request.args)
    if filters.tool or filters.modified:
        with_facets(s)
    url_args = {**filters.args(), **({"sub": 1} if include_subagents else {})}
    with s.lock:
        shown = queries.subtree(s, agent_id) if include_subagents else [agent_id]
        positions = queries.filtered_positions(s, shown, filters)
        data = agent_window(s, agent_id, positions, start, size, url_args)
        if flag_arg("perspective"):
            data["perspective"] = queries.perspective_text(s, agent_id, include_subagents)
        built(shapes.Agent, data)
        page = None if wants_json() else _agent_page(s, data, positions, filters, include_subagents, size)
    return answer(data, "agent.html", page)


def _agent_page(s, data: dict, positions, filters: EntryFilter, include_subagents: bool, size: int) -> dict:
    agent_id = data["agent_id"]
    view = queries.perspective(s, agent_id, include_subagents, data["start"], size, filters, positions)
    mark_rewound(s, view["items"])
    summed = tree_outline.sums(s)
    return dict(
        data=data, session=session_row(s), source=s, agent_id=agent_id, agent=data,
        lineage=data["lineage"], crumbs=pictures.breadcrumbs(s, agent_id), children=data["children"],
        agent_tree=tree_outline.sidebar(s, s.id, agent_id, state().drawings),
        view=view, include_subagents=include_subagents, size=size, live=view["end"] == view["total"],
        filters=filters, kinds=KINDS, tools=tool_choices(s),
        neighbours=[(a, s.agents[a].display_name) if a else None for a in queries.agent_neighbours(s, agent_id)],
        usage=data["usage"], subtree_cost=costs.subtree_cost(s, agent_id) if data["children"] else None,
        agent_failures=summed.failures.get(agent_id), own_failures=summed.own_failures.get(agent_id),
        poll=agent_poll_url(s, agent_id, include_subagents, filters, s.cursor, paged=view["total"] > size),
    )


def agent_poll_url(s, agent_id: str, include_subagents: bool, filters: EntryFilter, cursor: str, paged: bool) -> str:
    """The agent page's live fragment after `cursor`. `paged`: the page shows pagers, whose numbers it updates."""
    return url_for("pages.poll_agent", session_id=s.id, agent=agent_id, sub=1 if include_subagents else None,
                   after=cursor, paged=1 if paged else None, ended=ended(s), **filters.args())


def dialog(session_id):
    """What the chosen agents (?agents=a,b) said to each other, a window of it."""
    s = session_or_404(session_id)
    chosen = chosen_agents(s)
    size = page_size("DIALOG_PAGE_SIZE")
    with s.lock:
        view = dialogs.dialog(s, chosen, int_arg("start"), size)
        data = built(shapes.Dialog, dialog_data(s, chosen, view))
        page = None
        if not wants_json():
            mark_rewound(s, view["items"])
            page = dict(data=data, session=session_row(s), source=s, chosen=chosen, agents=queries.agents(s),
                        names=queries.agent_names(s),
                        view=view, size=size, live=view["end"] == view["total"], problems=len(s.problems),
                        poll=dialog_poll_url(s, chosen, s.cursor, paged=view["total"] > size))
    return answer(data, "dialog.html", page)


def dialog_poll_url(s, chosen: list[str], cursor: str, paged: bool) -> str:
    """The dialog's live fragment after `cursor`; it also answers when the session's problem count changes.
    `paged`: the page shows pagers, whose numbers the fragment updates."""
    return url_for("pages.poll_dialog", session_id=s.id, agents=",".join(chosen), after=cursor,
                   problems=len(s.problems), paged=1 if paged else None)


def message(session_id, message_id):
    """One message: its fields, its causality chain, what represents it, where it came from."""
    s = session_or_404(session_id)
    with s.lock:
        position = message_or_404(s, message_id)
        data = built(shapes.Message, message_data(s, message_id, position))
        page = None if wants_json() else dict(
            data, data=data, session=session_row(s), position=position, source=s, item=_entry(s, position, data),
            line=s.line_numbers[position], as_written=_line_text(s, position),
            names=queries.agent_names(s), parent=causality.parent_of(s, position),
            at=times.seconds(s.events[position].get("timestamp")),
            snippets={e["message_id"]: _snippet(e) for e in data["flow"] + data["references"]},
        )
    return answer(data, "message.html", page)


def _entry(s, position: int, data: dict) -> dict:
    """The message as its agent's transcript shows it; a delivery changed on its way shows the text delivered,
    its page comparing the two below (Original and delivered text)."""
    item = queries.entry(s, position)
    if data["provenance"]["as_delivery"] and item["delivery"]:
        item["delivery"] = {**item["delivery"], "modified": False}
    return item


def _snippet(event) -> str:
    """What a step of a causality chain says, on one line: its text, then the calls it made."""
    return " · ".join(filter(None, [model.content_of(event), *(c.summary() for c in model.tool_calls(event))]))


def _line_text(s, position: int) -> str | None:
    """The text of the line an event was read from, exactly as written (None: not a line of its own, e.g.
    a record a format normalized, or no longer where it was read)."""
    if s.reads_records:
        return None
    data = s.events.line(position)
    return None if data is None else data.decode("utf-8", errors="replace")


def mark_rewound(s, items: list[dict]) -> list[dict]:
    """Entries on a branch the conversation was rewound from (the format says which): shown folded."""
    normalizer = getattr(s, "normalizer", None)
    for item in items if normalizer is not None else ():
        item["rewound"] = normalizer.rewound(item["event"])
    return items


def page_size(key: str) -> int:
    """?limit=, else a page's size (app.config[key]) or, for JSON, API_LIMIT."""
    return int_arg("limit", API_LIMIT if wants_json() else current_app.config[key], minimum=1)


# The URL of each resource's page and of its JSON (under /api/), each answered by its view above.
PAGE_RULES = (("/s/<session_id>", session), ("/s/<session_id>/agents/<path:agent_id>", agent),
              ("/s/<session_id>/dialog", dialog), ("/s/<session_id>/messages/<path:message_id>", message))
API_RULES = (("/sessions/<session_id>", session), ("/sessions/<session_id>/agents/<path:agent_id>", agent),
             ("/sessions/<session_id>/dialog", dialog), ("/sessions/<session_id>/messages/<path:message_id>", message))


def route(bp, rules) -> None:
    for rule, view in rules:
        bp.add_url_rule(rule, view_func=view, methods=["GET"])
