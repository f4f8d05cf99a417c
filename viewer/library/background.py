"""What the ingest thread does while no file waits to be read: search indexes and facets catch up, a slice at a
time, then sessions that changed are kept in the cache. Each step is short, so a file that changes meanwhile
waits at most one step."""

from __future__ import annotations

import time

from viewer.index import sleeping


def index_step(library, budget: int = 128, words=None) -> bool:
    """Extend one session's search index, else one session's facets, by up to `budget` events (a short hold of
    its lock: a poll waits at most that long); False when all are complete.

    Every search index is completed before the facets are caught up on their own: a search is what a person asks
    for first, while the facets serve filters, the hooks audit and the chart, which catch them up themselves when
    asked (web.asked.with_facets). A session's facets go along with its search index from the same read of its
    events while both stand at the same place (reading is most of the cost for entries read back from files).
    `words` (a search_worker.WordWorker) builds the words of big native sessions in other processes: while they
    build a session's next run, the facets catch up meanwhile if a core is left for it (else the search first)."""
    version = library.version  # read first: a change meanwhile is looked at on the next step
    if version == library.searched_at == library.faceted_at:  # all complete, nothing read since: no listing made
        return False
    sessions = library.sessions_now()  # no order needed: every session is caught up in turn
    # From where work was found last, and the search indexes only when something was read since they were all
    # complete: a folder of thousands of sessions is not walked whole at every step
    start = library.indexing_from if library.indexing_from < len(sessions) else 0
    sessions = sessions[start:] + sessions[:start]
    waiting = False
    for at, session in enumerate(sessions if version != library.searched_at else ()):
        if _behind(session, "search"):
            library.indexing_from = (start + at) % len(sessions)
            done = words.step(session) if words is not None else False
            if done is None:  # its next run is being built
                waiting = True
                continue
            if not done:  # the facets too while they stand where the search index does: one read of the events
                session.search.catch_up(session.count, budget, along=session.facets)
            _tell_words(library, session)
            _forget_cached(session)
            _pack_if_settled(session)
            _keep_if_whole(library, session)
            return True
    if not waiting:
        library.searched_at = version
    # While workers build the words, the facets go along only on a core they leave: else the search first.
    faceting = not waiting or words.spares_a_core
    for at, session in enumerate(sessions if faceting and version != library.faceted_at else ()):
        if _behind(session, "facets"):
            library.indexing_from = (start + at) % len(sessions)
            session.facets.catch_up(session.count, budget)
            _forget_cached(session)
            _keep_if_whole(library, session)
            return True
    if not waiting:
        library.faceted_at = version
    if waiting:
        words.wait(0.005)
    return waiting


def merge_words(library, words, most: int = 32) -> None:
    """Between two slices of a file being read: merge up to `most` runs of words the worker has built (see
    search_worker) and hand it the next, so that the words of a big file are built while it is read, on the
    other core, not after."""
    if words is None:
        return
    for session in library.sessions_now():
        if session.asleep is None and sleeping.built_to(session, "search") < session.count and words.wants(session):
            for _ in range(most):
                if words.step(session) is not True:
                    break


def _behind(session, built: str) -> bool:
    """Whether a session's search index (`built` "search") or facets lack events. A sleeping session kept before
    they were built (Groups.keep) is woken to build them; one kept whole has nothing to build."""
    asleep = session.asleep
    if asleep is not None:
        if asleep["complete"]:
            return False
        session.wake(seen=False)
    return sleeping.built_to(session, built) < session.count


def _keep_if_whole(library, session) -> None:
    """A settled session of several files whose search index and facets are now complete is kept again, whole,
    and goes back to sleep unless someone reads it (Groups.keep)."""
    normalizer = session.normalizer
    if normalizer is not None and normalizer.settled and session.indexed_whole:
        library.keep(session)


def _pack_if_settled(session) -> None:
    """A session whose files are left alone (its normalizer settled) packs its search index once complete: a
    folder of thousands of them holds a fraction of the memory (see search_packed)."""
    normalizer = session.normalizer
    if normalizer is not None and normalizer.settled and session.search.complete:
        with session.lock:
            session.search.pack()


def _tell_words(library, session) -> None:
    """The folder's words learn the words its search index has found since (FolderWords.take)."""
    with session.lock:
        library.folder_words.take(session)


def _forget_cached(session) -> None:
    with session.lock:
        session.events.forget_cached()  # kept for pages, not for the whole walk


def save_step(library) -> bool:
    """Keep one session that changed in the cache (SessionCache.due says which); False when none needs it."""
    return library.cache is not None and library.cache.save_one(library.settled_files, library.inside)


def check_step(library) -> bool:
    """Check the bytes of a few sessions a restart took by their files' stat alone (SessionCache.check_step)."""
    return library.cache is not None and library.cache.check_step()


LOOK_AGAIN_S = 5.0  # an idle server looks for sessions to settle, save or put to sleep this often: not at every step...
LOOK_SHARE = 0.01  # ... or as seldom as keeps those looks to this share of a core (20,000 sessions: 0.5 s a look)...
LOOK_AT_MOST = 60.0  # ... but never more seldom than this


def spaced(cpu: float, least: float, share: float, most: float) -> float:
    """Seconds to wait before work that took `cpu` seconds is done again: `least`, or long enough that it takes at
    most `share` of a core, but never more than `most` (a walk of a big folder costs more than a small one's)."""
    return min(most, max(least, cpu / share))


def step(library, words=None) -> bool:
    """One step of background work; False when there is none left.

    Settling, saving and sleeping look at every session (thousands in a big folder): while they find nothing, they are
    looked at again after LOOK_AGAIN_S, or later as their look costs more (`spaced`), so an idle server costs nearly
    nothing."""
    if index_step(library, words=words) or check_step(library):
        return True
    now = time.monotonic()
    if now < library.look_after:
        return False
    started = time.thread_time()
    if library.settle_quiet() or save_step(library) or library.sleep_quiet() or library.keep_folder():
        return True
    library.look_after = now + spaced(time.thread_time() - started, LOOK_AGAIN_S, LOOK_SHARE, LOOK_AT_MOST)
    return False
