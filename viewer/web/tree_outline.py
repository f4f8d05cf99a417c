"""The compact agent tree beside an agent's transcript: names and ordinals only, written as HTML here.

Every agent page carries it, so it is leaner than queries.tree_rows and kept per session version; the current
agent is marked as the page is served. Every printed value goes through security.printed (masked).
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup, escape

from viewer.core.bounded_map import BoundedMap
from viewer.core.redact import ACTIVE
from viewer.index.session_index import SessionIndex
from viewer.reads import queries

from .colours import colour_class
from .render import SLOT, agent_urls
from .security import printed

KEPT = 64  # trees kept (a session, its links' ?at=N and masking each make one): most recently served first
MARK = ' aria-current="page"'


def outline(s: SessionIndex) -> list[dict]:
    """Every agent in reading order, parents first, with its `depth` and `closes` (queries.tree_order). The
    caller holds the session's lock."""
    agents = s.agents
    return [{"agent_id": agent_id, "name": agents[agent_id].display_name, "ordinal": agents[agent_id].ordinal,
             "entries": len(agents[agent_id].entries), "depth": depth, "closes": closes}
            for agent_id, depth, closes in queries.tree_order(s)]


@dataclass(frozen=True)
class Drawn:
    """A session's side tree as drawn at one version, with where each agent's link takes the current mark."""

    version: tuple[int, int]  # the session's (epoch, count) when drawn: what events change
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
    version = (s.epoch, s.count)
    drawn = kept.get(key)
    if drawn is None or drawn.version != version:
        drawn = draw(s, url_of, version)
        kept.put(key, drawn)
    at = drawn.marks.get(current)
    return Markup(drawn.html if at is None else drawn.html[:at] + MARK + drawn.html[at:])


def draw(s: SessionIndex, url_of, version: tuple[int, int]) -> Drawn:
    """The side tree's HTML with no agent marked, and where each agent's mark goes."""
    parts, marks, length = ['<ul class="agent-tree">'], {}, len('<ul class="agent-tree">')
    for row in outline(s):
        href = escape(printed(url_of(row["agent_id"])))
        head = f'<li class="{colour_class(row["ordinal"])}"><a class="agent-name" href="{href}"'
        tail = (f'>{escape(printed(row["name"]))}</a> <span class="rail-count" id="av-count-{row["ordinal"]}" '
                f'title="entries">{row["entries"]}</span><ul>' + "</ul></li>" * row["closes"])
        marks[row["agent_id"]] = length + len(head)
        parts += (head, tail)
        length += len(head) + len(tail)
    parts.append("</ul>")
    return Drawn(version, "".join(parts), marks)
