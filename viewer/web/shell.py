"""What every page's frame prints: a session's name as people say it, times and durations, icons, the folder, and
each agent's colour.

A session is named by its title (a custom or AI title, a summary, the first prompt), its file's name only when it
has none. A time is a <time> holding the exact moment, which static/agentview-time.js rewrites in the reader's zone.
An agent has one colour on every page, chosen by its order of appearance, as a CSS class `agent-cN` (no inline
styles: CSP); an interleaved transcript indents each entry by its agent's depth below the page's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import datetime, timezone

from flask import request
from markupsafe import Markup, escape

from viewer.core.bounded_map import ClearedPast

from . import url_cache
from .security import printed
from .state import library, state

ICONS_CACHED = 256  # icons drawn and cached at most (the templates name a few dozen)
TITLE_CHARS = 90  # a heading or a list row shows this much of a long first prompt used as a title


def named(session) -> str:
    """A session's name as people say it: its title, else its file's name (a row dict or a SessionIndex)."""
    title = session.get("title") if isinstance(session, dict) else getattr(session, "title", None)
    name = session.get("name") if isinstance(session, dict) else session.name
    if not title:
        return name
    title = " ".join(printed(title).split())  # masked whole before it is cut: no cut leaves part of a secret
    return title if len(title) <= TITLE_CHARS else title[:TITLE_CHARS - 1].rstrip() + "…"


def session_title(session_id: str) -> str | None:
    """The title of a session of the library by its id (a search hit names only the id), without waking it."""
    s = state().library.sessions.get(session_id)
    return named(s) if s is not None else None


def ago(t: float, now: float) -> str:
    """How long before `now` a time was, as people say it: "just now", "3 min ago", "2 h ago", "5 days ago"."""
    seconds = max(0, now - t)
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if unit == 'day' and n != 1 else ''} ago"
    return "just now"


MONTHS = ("", "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")  # strftime's %b
TWO_DIGITS = tuple(f"{n:02d}" for n in range(100))


def when(epoch: float | None, now: float | None = None) -> Markup:
    """A <time> of a moment (seconds since the epoch): the exact UTC time in its attributes; its text, until the
    script says it in the reader's zone, how long ago within a day, else the UTC date and time."""
    if epoch is None:
        return Markup("")
    now = time.time() if now is None else now
    m = datetime.fromtimestamp(epoch, timezone.utc)  # its fields written out: strftime took 7 us a time
    year, two = str(m.year), TWO_DIGITS
    day, clock = f"{two[m.month]}-{two[m.day]}", f"{two[m.hour]}:{two[m.minute]}"
    iso = f"{year.zfill(4)}-{day}T{clock}:{two[m.second]}Z"  # isoformat's, to the second
    exact = f"{year}-{day} {clock}:{two[m.second]} UTC"  # strftime's %Y pads no year
    text = (ago(epoch, now) if 0 <= now - epoch < 86400
            else f"{MONTHS[m.month]} {two[m.day]} {year}, {clock} UTC")
    # The epoch the script says it by is the second written above (rounded, a moment 179.6 s ago read "2 min ago")
    return Markup(f'<time datetime="{iso}" title="{exact}" data-epoch="{epoch // 1:.0f}">{escape(text)}</time>')


def duration(seconds: float | None) -> str:
    """A span of time as people say it: "5.9 s", "12 min", "1 h 12 min", "3 days"."""
    if seconds is None or seconds < 0:
        return ""
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{hours // 24} days"


def icons(url_for: Callable[..., str]) -> Callable[..., Markup]:
    """icon(name, label=None): a Lucide icon of static/lucide-sprite.svg; decorative unless it has a `label`.
    Each is drawn once for the path the app is served under and cached: every page prints a score of them."""
    made = ClearedPast(ICONS_CACHED)

    def icon(name: str, label: str | None = None) -> Markup:
        key = (request.root_path, name, label)  # the sprite's URL depends on nothing else of the request
        drawn = made.get(key)
        if drawn is None:
            sprite = url_for("static", filename="lucide-sprite.svg")
            said = f' role="img" aria-label="{escape(label)}"' if label else ' aria-hidden="true"'
            drawn = made.put(key, Markup(f'<svg class="icon icon-{escape(name)}"{said} focusable="false">'
                                         f'<use href="{escape(sprite + "#" + name)}"></use></svg>'))
        return drawn
    return icon


def folder() -> dict:
    """The folder served: its last part (the header shows it) and its whole path (its tooltip)."""
    root = str(state().library.root)
    return {"name": os.path.basename(root.rstrip(os.sep)) or root, "path": root}


PALETTE_SIZE = 10  # --agent-0 ... --agent-9 in static/agentview.css


def colour_class(ordinal: int | None) -> str:
    """The class of the agent with this ordinal ("" when it is not known)."""
    return "" if ordinal is None else f"agent-c{ordinal % PALETTE_SIZE}"


def agent_colour(session_id: str, agent_id: str) -> str:
    """The class of an agent named by its session and id, for templates that have only the ids."""
    s = library().get(session_id)
    agent = s.agents.get(agent_id) if s is not None else None
    return colour_class(agent.ordinal if agent is not None else None)


MAX_INDENT = 6  # depth-1 ... depth-6 in static/agentview.css; deeper agents indent as far as the sixth


def indent_class(session_id: str, agent_id: str, top: str | None) -> str:
    """`depth-N`: how many levels below `top` (the page's agent) `agent_id` sits ("" at the top or unknown)."""
    s = library().get(session_id)
    if s is None or top is None:
        return ""
    depth, current = 0, s.agents.get(agent_id)
    while current is not None and current.agent_id != top and depth <= len(s.agents):
        depth += 1
        current = s.agents.get(current.parent_id) if current.parent_id is not None else None
    return f"depth-{min(depth, MAX_INDENT)}" if current is not None and depth else ""


def install(app) -> None:
    url_for = url_cache.install(app)
    app.jinja_env.filters.update(named=named, when=when, duration=duration, colour_class=colour_class)
    app.jinja_env.globals.update(icon=icons(url_for), session_title=session_title, folder=folder,
                                 agent_colour=agent_colour, indent_class=indent_class)
