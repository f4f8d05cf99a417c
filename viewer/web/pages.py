"""The HTML pages and the live fragments their htmx pollers fetch (a session's, agent's, dialog's and message's
pages are their views in resource_views.py)."""

from __future__ import annotations

import time
from bisect import bisect_left

from flask import Blueprint, Response, render_template, request, url_for

from viewer.reads import costs, dialogs, failures, folder_status, live_updates, queries
from viewer.reads.filters import EntryFilter

from . import resource_views, shapes, tree_outline
from .asked import agent_list_arg, agent_or_404, ended, ended_since, flag_arg, int_arg, session_or_404
from .polling import answered_on, poll_session
from .render import agent_urls, folder_problems, page_or_twin, path_urls, session_row, session_rows
from .resource_views import agent_poll_url, dialog_poll_url, mark_rewound
from .state import library, state, watched_library

bp = Blueprint("pages", __name__)
answered_on(bp)


def _rewound_since(s, after: int) -> bool:
    """Whether a rewind was read since `after`: entries already on the page are on its abandoned branch now."""
    normalizer = getattr(s, "normalizer", None)
    return normalizer is not None and any(s.by_id.get(m, -1) >= after for m in normalizer.rewinds)


def _poll_cursor(s, stop: int) -> tuple[str, bool]:
    """The next poll's cursor, and whether it should come at once (this answer stopped at its window)."""
    return s.cursor_at(stop), stop < s.count


# --- sessions --------------------------------------------------------------------------------

def _sessions_context(limit: int) -> dict:
    """The sessions list: at most `limit` rows shown (a folder of 20,000 is not drawn whole at each poll), each
    priced; `more`: how many of those listed (and matching the filter) are left out."""
    library = watched_library()
    version = library.version  # read first: a change during the listing shows up on the next poll
    watcher = state().watcher
    wanted = request.args.get("filter", "").strip()
    listed = library.listing()
    sort = request.args.get("sort") if request.args.get("sort") in SORTS else "recent"
    rows = list(zip(session_rows(library, listed), listed))
    if sort == "cost":  # sorted by what every session cost: each priced
        rows = [({**row, "cost": costs.session_cost(s)}, s) for row, s in rows]
    shown = [pair for pair in rows if _matches(pair[0], wanted)] if wanted else rows
    shown = newest_first(shown)
    if sort != "recent":
        shown = sorted(shown, key=lambda pair: SORTS[sort][1](pair[0]))
    page = [row if "cost" in row else {**row, "cost": costs.session_cost(s)} for row, s in shown[:limit]]
    return dict(sessions=page, matched=len(shown), more=len(shown) - len(page), shown=limit,
                shown_at_first=SESSIONS_SHOWN, listed=len(rows),
                filter=wanted, now=time.time(), sort=sort,
                sorts={key: label for key, (label, _) in SORTS.items()},
                version=version, root=library.root,
                folder_problems=folder_problems(library), reading=library.progress(),
                folder_read=folder_status.reading(listed),
                scanning=watcher is not None and not watcher.ready.is_set())


SWITCHER_ROWS = 100  # sessions a rail's switcher lists (the rest on /)
SESSIONS_SHOWN = 500  # rows the sessions list shows at first (?shown=N: more)


def last_active(row: dict) -> float:
    """When a session was last active: its latest event's time, else (events without times) its file's change."""
    return row["active_at"] or row["updated_at"] or 0


# The orders of the sessions list (?sort=): its label, and the key of a row ("recent" keeps projects together).
SORTS = {"recent": ("Recent", None),
         "cost": ("Cost", lambda r: (-((r["cost"] or {}).get("cost_usd") or 0), -last_active(r))),
         "size": ("Size", lambda r: (-r["events"], -last_active(r)))}


def newest_first(rows: list[tuple[dict, object]]) -> list[tuple[dict, object]]:
    """(row, session) pairs by last activity, newest first; a project's sessions stay together, the project placed
    by its newest session."""
    newest: dict[str | None, float] = {}
    for r, _ in rows:
        newest[r["project"]] = max(newest.get(r["project"], 0), last_active(r))
    return sorted(rows, key=lambda pair: (-newest[pair[0]["project"]], pair[0]["project"] or "",
                                          -last_active(pair[0]), pair[0]["path"]))


def _matches(row: dict, wanted: str) -> bool:
    """Whether the sessions list's filter box keeps a row: its words are in the name, path, title or project."""
    text = " ".join(str(row[k] or "") for k in ("name", "path", "title", "project", "format_label")).lower()
    return all(word in text for word in wanted.lower().split())


@bp.get("/")
def index():
    return render_template("index.html", **_sessions_context(int_arg("shown", SESSIONS_SHOWN, minimum=1)))


@bp.get("/switcher")
def switcher():
    """The sessions switcher of a session page's rail (its list, newest first)."""
    return render_template("_switcher.html", **_sessions_context(SWITCHER_ROWS), current=request.args.get("current"),
                           limit=SWITCHER_ROWS)


@bp.get("/poll/sessions")
def poll_sessions():
    if request.args.get("v") == str(library().version):
        return Response(status=204)
    return render_template("_sessions.html", **_sessions_context(int_arg("shown", SESSIONS_SHOWN, minimum=1)))


# --- a session, an agent, a dialog, a message: their pages (resource_views.py) and live fragments --------

resource_views.route(bp, resource_views.PAGE_RULES)


@bp.get("/s/<session_id>/poll/tree")
def poll_tree(session_id):
    s, after = poll_session(session_id)
    with s.lock:
        if flag_arg("empty"):  # the page said "no readable events": it has none of the parts to grow, so it reloads
            return Response(status=200, headers={"HX-Refresh": "true"})
        updates = live_updates.tree_updates(s, after)
        # their responses, or their sub-agents', were priced; or the session ended
        _, sums = tree_outline.changed_sums(s, updates["counts"], after, ended_since(s))
        drawn = updates["appeared"] + updates["moved"]
        if drawn:
            summed = tree_outline.sums(s)
            for row in drawn + [r for row in drawn for r in row.get("subtree") or ()]:  # with their cost, failures
                row["cost"], row["failures"] = summed.costs.get(row["agent_id"]), summed.failures.get(row["agent_id"])
        context = dict(session=session_row(s), updates=updates, problems=len(s.problems), **sums,
                       poll=url_for("pages.poll_tree", session_id=s.id, after=s.cursor, problems=len(s.problems),
                                    ended=ended(s)))
    context["reading"] = library().progress_of(s.path)  # outside the session's lock, as above
    return render_template("_tree_poll.html", **context)


@bp.get("/s/<session_id>/poll/agent")
def poll_agent(session_id):
    s, after = poll_session(session_id)
    agent_id = request.args.get("agent", "")
    if agent_id not in s.agents:
        return Response(status=204)
    include_subagents = flag_arg("sub")
    filters = EntryFilter.from_args(request.args)
    with s.lock:
        if _rewound_since(s, after):  # the page folds what the rewind left behind when it is drawn again
            return Response(status=200, headers={"HX-Refresh": "true"})
        shown = queries.subtree(s, agent_id) if include_subagents else [agent_id]
        changed = live_updates.count_updates(s, after)  # the rail's counts
        summed, sums = tree_outline.changed_sums(s, changed["counts"], after, ended_since(s))  # the rail's sums
        header = _failures_header(s, agent_id) if agent_id in summed else {}  # its sub-agents' count in its header
        if _nothing_new_for(s, shown + s.agents[agent_id].children, after):  # its calls show their agents' facts
            # Other agents wrote: the page moves its cursor on and its rail counts them; nothing else is built.
            poll = agent_poll_url(s, agent_id, include_subagents, filters, s.cursor, flag_arg("paged"))
            return render_template("_poller_only.html", poll=poll, changed=changed, session={"id": s.id},  # its links
                                   agent_id=agent_id, **sums, **header)
        updates = live_updates.perspective_updates(s, agent_id, include_subagents, after, filters)
        mark_rewound(s, updates["items"] + (updates.get("grown") or []))
        redrawn = live_updates.calls_to_redraw(s, shown, after, updates["stop"], updates["results"])
        updates["calls"] = list(redrawn.values())  # their agents drawn anew: none is added to them beside
        updates["spawned"] = [a for a in updates["spawned"] if (a["call_position"], a["call_index"]) not in redrawn]
        cursor, more = _poll_cursor(s, updates["stop"])
        paged = flag_arg("paged")  # the page has pagers: their numbers follow (a poll without them counts nothing)
        total = queries.perspective_total(s, shown, filters) if paged else None
        context = dict(session=session_row(s), source=s, agent_id=agent_id, include_subagents=include_subagents,
                       updates=updates, filters=filters, more=more, total=total,
                       agent=queries.agent_summary(s, s.agents[agent_id]),
                       children=[queries.agent_summary(s, s.agents[c]) for c in s.agents[agent_id].children],
                       changed=changed, agent_tree=_rail_redrawn(s, agent_id, after), **sums, **header,
                       poll=agent_poll_url(s, agent_id, include_subagents, filters, cursor, paged))
    return render_template("_agent_poll.html", **context)


def _failures_header(s, agent_id: str) -> dict:
    """What an agent page's header says of its failures (_agent_failures.html). The caller holds the lock."""
    summed = tree_outline.sums(s)
    return {"agent_failures": summed.failures.get(agent_id), "own_failures": summed.own_failures.get(agent_id)}


def _rail_redrawn(s, agent_id: str, after: int):
    """An agent page's rail drawn anew when an agent appeared or moved in the tree since `after` (else None: its
    counts follow). The caller holds the lock."""
    if bisect_left(s.tree_changes, (after, "")) == len(s.tree_changes):
        return None
    return tree_outline.sidebar(s, s.id, agent_id, state().drawings)


def _nothing_new_for(s, agent_ids: list[str], after: int) -> bool:
    """Whether an agent page drawn before `after` stays as it is: none of its agents logged an entry since, no
    message grew and no agent appeared or moved in the tree (its sub-agents, calls that spawned one). Looks at
    each agent's last entry and two kept lists' ends, never at the events: an agent page open beside busy
    others costs the same whatever they write. The caller holds the lock."""
    agents = s.agents
    return (all(not agents[a].entries or agents[a].entries[-1] < after for a in agent_ids)
            and bisect_left(s.growth_positions, after) == len(s.growth_positions)
            and bisect_left(s.tree_changes, (after, "")) == len(s.tree_changes))


@bp.get("/s/<session_id>/poll/dialog")
def poll_dialog(session_id):
    s, after = poll_session(session_id)
    with s.lock:
        chosen = [a for a in agent_list_arg() if a in s.agents]
        updates = dialogs.dialog_updates(s, chosen, after)
        mark_rewound(s, updates["items"])
        cursor, more = _poll_cursor(s, updates["stop"])
        paged = flag_arg("paged")
        context = dict(session=session_row(s), source=s, chosen=chosen, updates=updates, more=more,
                       problems=len(s.problems),
                       messages=dialogs.dialog(s, chosen, 0, 0)["total"],  # counted on the kept order: no item built
                       paged=paged, poll=dialog_poll_url(s, chosen, cursor, paged))
    return render_template("_dialog_poll.html", **context)


# --- the integrity report ------------------------------------------------------------------------------

@bp.get("/s/<session_id>/problems")
@bp.get("/api/sessions/<session_id>/problems", endpoint="problems_json")
def problems(session_id):
    s = session_or_404(session_id)
    report = queries.problems(s)
    with s.lock:  # link only messages that exist (a problem may name one that does not)
        linkable = {p["message_id"] for p in report["problems"] if p.get("message_id") in s.by_id}
    return page_or_twin(s, report, shapes.Problems, template="problems.html", name="report", page="pages.problems",
                        context=dict(linkable=linkable))



# --- what failed ------------------------------------------------------------------------------------------------

FAILURES_PAGE = 200  # failures a page lists (?start= pages on; the JSON twin takes ?limit=)


@bp.get("/s/<session_id>/failures", endpoint="failures")
@bp.get("/api/sessions/<session_id>/failures", endpoint="failures_json")
def failure_list(session_id):
    """Every failure of the session (core/failures.py), a window of them, each linked to its entry."""
    s = session_or_404(session_id)
    start, limit = int_arg("start"), min(int_arg("limit", FAILURES_PAGE, minimum=1), 1000)
    agent_id = request.args.get("agent") or None  # that agent's and its sub-agents' only
    if agent_id is not None:
        agent_or_404(s, agent_id)
    listed = failures.listing(s, start, limit, agent_id)
    message_url, agent_url = path_urls("pages.message", s.id, "message_id"), agent_urls(s.id)
    for item in listed["failures"]:
        item["url"], item["agent_url"] = message_url(item["message_id"]), agent_url(item["agent_id"])
        item["call_url"] = message_url(item["call_message_id"]) if item["call_message_id"] else None
    end = start + len(listed["failures"])
    listed["next"] = url_for("pages.failures_json", session_id=s.id, start=end, limit=limit, agent=agent_id) \
        if end < listed["total"] else None
    listed["agent"] = agent_id
    return page_or_twin(s, listed, shapes.Failures, template="failures.html", name="report", page="pages.failures",
                        url_args={"agent": agent_id}, context=dict(limit=limit, end=end))
