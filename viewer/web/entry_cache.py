"""Transcript entries and dialog items rendered once, shared between requests (the pollers of a live page,
a page read again).

An entry's HTML is kept under everything it is made of (the item as marshal bytes, the macro and its indent, and
what the page gives every entry: PAGE_INPUTS, declared once), so a kept one is exactly what rendering it again
would print. Nothing is invalidated in place: what changes makes a new key, and the old one ages out (LRU by bytes).
"""

from __future__ import annotations

import marshal
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import NamedTuple

from flask import request
from markupsafe import Markup

from viewer.core import lockorder
from viewer.core.redact import ACTIVE

from . import asked, shell
from .state import library

MARSHAL_VERSION = 2  # the same bytes for the same values, however many references each has (see above)
BUDGET = 64 * 1024 * 1024  # bytes of keys and HTML kept (app.config["ENTRY_CACHE_BYTES"]; 0: no cache)


class EntryCache:
    """An LRU of rendered entries, bounded by bytes; safe to share between request threads.

    Taking and keeping an entry hold no lock: each is one dict operation, atomic under the GIL. A poll takes
    hundreds of entries, so a lock taken for each, held by a thread that lost the GIL inside it, made every other
    request thread queue behind it (a convoy: most of the soak test's request time was spent waiting for it). The
    bytes kept are counted, and the least recently used evicted, by one thread at a time: whichever finds the lock
    free settles the costs the others queued.
    """

    def __init__(self, budget: int = BUDGET):
        self.budget = budget
        self.size = 0  # bytes kept, as far as settled
        self.hits = self.misses = 0  # counted without a lock: about right under concurrency (statistics)
        self._kept: OrderedDict[tuple, str] = OrderedDict()
        self._unsettled: deque[int] = deque()  # costs of entries kept, not yet added to `size`
        self._lock = lockorder.ordered(threading.Lock(), lockorder.CACHE, "rendered entries")  # size, eviction

    def get(self, key: tuple) -> str | None:
        html = self._kept.get(key)
        if html is None:
            self.misses += 1
            return None
        try:
            self._kept.move_to_end(key)
        except KeyError:  # evicted by another thread since
            pass
        self.hits += 1
        return html

    def put(self, key: tuple, html: str) -> None:
        cost = _cost(key, html)
        if cost > self.budget // 16:  # one huge entry would push out hundreds of others
            return
        if self._kept.setdefault(key, html) is not html:  # kept already (by another thread)
            return
        self._unsettled.append(cost)
        if not self._lock.acquire(blocking=False):
            return  # the thread holding it settles this cost, or the next one that keeps an entry does
        try:
            while self._unsettled:
                self.size += self._unsettled.popleft()
            while self.size > self.budget and self._kept:
                old_key, old_html = self._kept.popitem(last=False)
                self.size -= _cost(old_key, old_html)
        finally:
            self._lock.release()

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._unsettled.clear()
            self.size = 0

    def __len__(self) -> int:
        return len(self._kept)


def _cost(key: tuple, html: str) -> int:
    return len(key[-1]) + len(html) + 200  # the item's bytes, the HTML, and the tuple's own objects


class Page(NamedTuple):
    """How a page prints its entries: the arguments of `entries(...)` in its template."""

    session: dict  # its row (session_row): the id its links print
    s: object  # the session read, live or frozen as of event N
    show_agent: bool = False  # sub-agents shown: each entry says whose it is
    oob: bool = False  # printed out of band (a poll's grown entries replace theirs)
    top: str | None = None  # the page's agent: a sub-agent's entry is indented below it


class Input(NamedTuple):
    name: str
    why: str
    of: Callable[[Page], object]


def _live(page: Page):
    live = library().get(page.session["id"])
    return None if live is None else (live.serial, live.epoch)


# Everything outside an item that its printed HTML depends on. The rendered-entry key is made of these (plus the
# macro, the indent and the item's bytes): an input of the entry macro left out here would serve one page's HTML
# on another.
PAGE_INPUTS: tuple[Input, ...] = (
    Input("session id", "the id its links print", lambda p: p.session["id"]),
    Input("reading", "the session read: its serial (unique in the process) and epoch (a file truncated or replaced "
          "starts a new one)", lambda p: (p.s.serial, p.s.epoch)),
    Input("live session", "agents' colours are looked up in the library's session, also for a page as of event N",
          _live),
    Input("sub-agents shown", "each entry then says whose it is", lambda p: bool(p.show_agent)),
    Input("out of band", "a grown entry replaces the one on the page", lambda p: bool(p.oob)),
    Input("top agent", "sub-agents' entries are indented below it", lambda p: p.top),
    Input("masking", "secrets masked or revealed (the reveal cookie)", lambda p: ACTIVE.get()),
    Input("as of", "?at=N: every link keeps it", lambda p: asked.requested()),
    Input("root path", "every link starts with the app's root path", lambda p: request.script_root),
)


def page_key(page: Page) -> tuple:
    """What every entry of one page shares in its key: the value of each of PAGE_INPUTS."""
    return tuple(given.of(page) for given in PAGE_INPUTS)


def render(cache: EntryCache | None, macro, session: dict, s, items, show_agent: bool = False,
           oob: bool = False, top: str | None = None) -> Markup:
    """`{% for item in items %}{{ entry(session, item, show_agent, oob=oob, top=top) }}{% endfor %}`, each
    entry taken from the cache when it holds it."""
    indent = (lambda item: shell.indent_class(session["id"], item["agent_id"], top)) if show_agent else None
    return _rendered(cache, lambda: (macro, page_key(Page(session, s, show_agent, oob, top))), items,
                     lambda item: macro(session, item, show_agent, oob=oob, top=top), indent)


def render_dialog(cache: EntryCache | None, macro, session: dict, s, items) -> Markup:
    """`{% for item in items %}{{ dialog_item(session, item) }}{% endfor %}`, each item taken from the cache when
    it holds it (a dialog item is keyed by all it shows: its deliveries and recipients too)."""
    return _rendered(cache, lambda: (macro, page_key(Page(session, s))), items,
                     lambda item: macro(session, item), None)


def _rendered(cache: EntryCache | None, shared, items, draw, indent) -> Markup:
    """Each item drawn by `draw`, or taken from the cache under (`shared()`, its indent, the item's bytes)."""
    if cache is None or cache.budget <= 0:
        return Markup("".join(map(draw, items)))
    # The macro itself is in `shared` too: templates reloaded after an edit (Flask's TEMPLATES_AUTO_RELOAD) make a
    # new one.
    shared = shared()
    out = []
    for item in items:
        try:
            made_of = marshal.dumps(item, MARSHAL_VERSION)
        except ValueError:  # holds a value marshal cannot write: no exact key, so never kept
            out.append(draw(item))
            continue
        key = (shared, None if indent is None else indent(item), made_of)
        html = cache.get(key)
        if html is None:
            html = draw(item)
            # Pages render outside the session's lock: kept only if the item did not change meanwhile (an
            # ingest filling in a field of an event), so a key never holds HTML of another state of its item.
            if marshal.dumps(item, MARSHAL_VERSION) == made_of:
                cache.put(key, html)
        out.append(html)
    return Markup("".join(out))


def install(app) -> None:
    """The `entries` and `dialog_items` globals of the app's templates, with one cache for the app."""
    budget = app.config.setdefault("ENTRY_CACHE_BYTES", BUDGET)
    cache = app.extensions["agentview_entries"] = EntryCache(budget)

    def active() -> EntryCache | None:  # read at each use: a test may turn the cache off after the app is made
        return cache if app.config["ENTRY_CACHE_BYTES"] > 0 else None

    def entries(session, s, items, show_agent=False, oob=False, top=None):
        macro = app.jinja_env.get_template("_entry.html").module.entry
        return render(active(), macro, session, s, items, show_agent, oob, top)

    def dialog_items(session, s, items):
        macro = app.jinja_env.get_template("_dialog_item.html").module.dialog_item
        return render_dialog(active(), macro, session, s, items)

    app.jinja_env.globals["entries"] = entries
    app.jinja_env.globals["dialog_items"] = dialog_items
