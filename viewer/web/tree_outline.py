"""The compact agent tree beside an agent's transcript: each agent's name, entries, status, cost and failures.

Every agent page carries it, so it is written as HTML here (the badges by the session tree's macros), leaner than
queries.tree_rows and cached per session version; the current agent is marked as the page is served. Every printed
value goes through security.printed (masked).
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app
from markupsafe import Markup

from viewer.core.bounded_map import BoundedMap
from viewer.core.redact import ACTIVE
from viewer.index import failed
from viewer.index.session_index import SessionIndex
from viewer.reads import costs, queries

from .shell import colour_class
from .render import SLOT, agent_urls
from .security import printed_html
from .state import state

KEPT = 64  # trees kept (a session, its links' ?at=N and masking each make one): most recently served first
MARK = ' aria-current="page"'
BLANK = "\x00"  # the ordinal in the badges of an agent with none to show, replaced by each one's


@dataclass(frozen=True)
class Sums:
    """Each agent's cost and failures, its sub-agents' with them, as a session's trees show them at one version."""

    version: tuple  # `version`'s answer when summed
    costs: dict[str, dict]  # costs.tree_costs of the agents that have one to show (a response priced or not)
    failures: dict[str, int]  # failed.rolled_up: its and its sub-agents'
    own_failures: dict[str, int]  # failed.own_counts
    statuses: dict[str, str]  # queries.agent_statuses: running, done, failed, stopped


def version(s: SessionIndex) -> tuple:
    """What a tree's sums depend on: the session's events, and whether it has ended (its unanswered calls count)."""
    return s.epoch, s.count, failed.finished(s)


def sums(s: SessionIndex, summaries=None) -> Sums:
    """The session's Sums, cached until it changes: the session page, its poll, every agent page and their polls
    read the same ones. `summaries`: every agent's queries.agent_summary, made under the same lock (their statuses
    are not found again). The caller holds the lock."""
    now, kept = version(s), state().sums
    cached = kept.get(s)
    if cached is None or cached.version != now:
        own = failed.own_counts(s)
        shown = {a: c for a, c in costs.tree_costs(s).items()  # a subtree's cost holds its agent's own
                 if c["subtree"]["cost_usd"] is not None or c["subtree"]["unpriced_models"]}
        statuses = None if summaries is None else {  # in agent_statuses' order
            a: summaries[a]["status"] for a in s.agents if summaries[a]["status"] is not None}
        # The session may have ended since they were made (an end comes with time, no event): then none running
        if statuses is None or (now[2] and queries.RUNNING in statuses.values()):
            statuses = queries.agent_statuses(s)
        cached = kept[s] = Sums(now, shown, failed.rolled_up(s, own), own, statuses)
    return cached


def changed_sums(s: SessionIndex, touched, after: int, ended: bool = False) -> tuple[list[str], dict]:
    """The agents whose sums may have changed since the `touched` agents logged entries at or after `after` (they
    and every agent above them), and their costs and failures as a rail's poll swaps them in (_tree_counts.html),
    with the statuses of the sub-agents whose creating call was answered meanwhile. `ended`: the session ended
    since the page was drawn (polling.ended_since), which may change every agent's failures and status. The caller
    holds the lock."""
    changed = list(s.agent_order) if ended else costs.with_ancestors(s, touched)
    if not changed:
        return changed, {"costs": [], "failures": [], "statuses": []}
    now, agents = sums(s), s.agents
    statuses = ([(agents[a].ordinal, status) for a, status in now.statuses.items()] if ended
                else queries.statuses_answered_since(s, touched, after))
    return changed, {"costs": [(agents[a].ordinal, now.costs[a]) for a in changed if a in now.costs],
                     "failures": [(agents[a].ordinal, a, now.failures.get(a)) for a in changed],
                     "statuses": statuses}


def outline(s: SessionIndex) -> list[dict]:
    """Every agent in reading order, parents first, with its `depth` and `closes` (queries.tree_order), its flags,
    cost and failures. The caller holds the session's lock."""
    agents, now = s.agents, sums(s)
    return [{"agent_id": agent_id, "name": agents[agent_id].display_name, "ordinal": agents[agent_id].ordinal,
             "entries": len(agents[agent_id].entries), "flags": agents[agent_id].flags,
             "cost": now.costs.get(agent_id), "failures": now.failures.get(agent_id),
             "status": now.statuses.get(agent_id), "depth": depth, "closes": closes}
            for agent_id, depth, closes in queries.tree_order(s)]


@dataclass(frozen=True)
class Drawn:
    """A session's side tree as drawn at one version, with where each agent's link takes the current mark."""

    version: tuple  # `version`'s answer when drawn
    html: str
    marks: dict[str, int]  # agent id -> the offset in `html` of its link's mark


def drawings() -> BoundedMap:
    """The trees kept between requests (one per running app)."""
    return BoundedMap("tree outlines", KEPT)


def sidebar(s: SessionIndex, session_id: str, current: str, kept: BoundedMap) -> Markup:
    """The nested list of links, the current agent marked (aria-current), drawn again only when the tree kept in
    `kept` is not of the session's version. The caller holds the lock."""
    url_of = agent_urls(session_id)
    # The links' URLs (session id, ?at=N), the masking and the session object decide the HTML; its version
    # says whether it is still the session's.
    key = (s.serial, url_of(SLOT), ACTIVE.get())
    now = version(s)
    drawn = kept.get(key)
    if drawn is None or drawn.version != now:
        drawn = draw(s, session_id, url_of, now)
        kept.put(key, drawn)
    at = drawn.marks.get(current)
    return Markup(drawn.html if at is None else drawn.html[:at] + MARK + drawn.html[at:])


def draw(s: SessionIndex, session_id: str, url_of, drawn_at: tuple) -> Drawn:
    """The side tree's HTML with no agent marked, and where each agent's mark goes."""
    parts, marks, length = ['<ul class="agent-tree">'], {}, len('<ul class="agent-tree">')
    badges, session = current_app.jinja_env.get_template("_macros.html").module.rail_badges, {"id": session_id}
    # Most agents have no status, cost or failure to show: their badges differ by the ordinal alone, printed once.
    blank = str(badges(session, {"ordinal": BLANK, "agent_id": "", "flags": (), "cost": None, "failures": None,
                                 "status": None}))
    for row in outline(s):
        href = printed_html(url_of(row["agent_id"]))
        shown = (badges(session, row) if row["flags"] or row["cost"] or row["failures"] or row["status"]
                 else blank.replace(BLANK, str(row["ordinal"])))
        head = f'<li class="{colour_class(row["ordinal"])}"><a class="agent-name" href="{href}"'
        tail = (f'>{printed_html(row["name"])}</a> <span class="rail-count" id="av-count-{row["ordinal"]}" '
                f'title="entries">{row["entries"]}</span> {shown}<ul>' + "</ul></li>" * row["closes"])
        marks[row["agent_id"]] = length + len(head)
        parts += (head, tail)
        length += len(head) + len(tail)
    parts.append("</ul>")
    return Drawn(drawn_at, "".join(parts), marks)
