"""What the ingest thread does while no file waits to be read: search indexes and facets catch up, a slice at a
time, then sessions that changed are kept in the cache. Each step is short, so a file that changes meanwhile
waits at most one step."""

from __future__ import annotations


def index_step(library, budget: int = 128) -> bool:
    """Extend one session's search index, else one session's facets, by up to `budget` events (a short hold of
    its lock: a poll waits at most that long); False when all are complete.

    Every search index is completed before any facets: a search is what a person asks for first, while the
    facets serve filters, the hooks audit and the chart, which catch them up themselves when asked
    (web.lookup.with_facets)."""
    sessions = library.sessions_now()  # no order needed: every session is caught up in turn
    for part in ("search", "facets"):
        for session in sessions:
            built = getattr(session, part)
            if built.indexed < session.count:
                built.catch_up(budget)
                with session.lock:
                    session.events.forget_cached()  # kept for pages, not for the whole walk
                return True
    return False


def save_step(library) -> bool:
    """Keep one session that changed in the cache (SessionCache.due says which); False when none needs it."""
    return library.cache is not None and library.cache.save_one(library.settled_files(), library.inside)


def step(library) -> bool:
    """One step of background work; False when there is none left."""
    return index_step(library) or save_step(library)
