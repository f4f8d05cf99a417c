"""What the ingest thread does while no file waits to be read: search indexes and facets catch up, a slice at a
time, then sessions that changed are kept in the cache. Each step is short, so a file that changes meanwhile
waits at most one step."""

from __future__ import annotations


def index_step(library, budget: int = 512) -> bool:
    """Extend one session's facets and search index by up to `budget` events (a short hold of its lock: a poll
    waits at most that long); False when all are complete."""
    for session in library.sessions_now():  # no order needed: every session is caught up in turn
        if session.facets.indexed < session.count or session.search.indexed < session.count:
            session.facets.catch_up(budget)
            session.search.catch_up(budget)  # reads the events the facets just read: from the cache
            with session.lock:
                session.events.forget_cached()  # kept for pages, not for the whole walk
            return True
    return False


def save_step(library) -> bool:
    """Keep one session that changed in the cache (SessionCache.due says which); False when none needs it."""
    return library.cache is not None and library.cache.save_one(library.settled_files())


def step(library) -> bool:
    """One step of background work; False when there is none left."""
    return index_step(library) or save_step(library)
