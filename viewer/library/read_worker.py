"""A worker process of the read pool (read_pool): it reads whole sessions of several files as the ingest thread would
(a Library of its own over the same folder, the same checked opens, the same tuning), and answers with what a
restart would take from the cache: the entry's sections, encoded, and the row that lists the session asleep. A
group it cannot read cleanly (a file refused, one that will not settle, an error) it leaves to the server.
"""

from __future__ import annotations

import gc
import marshal
import os
from multiprocessing.connection import Connection

from viewer.core import genai_rates
from viewer.core.genai_rates import Catalog
from viewer.core.host import Host
from viewer.core.pricing import Prices
from viewer.search.worker import below_the_server
from viewer.store import group_cache, index_state
from viewer.store.cache_store import Raw
from viewer.store.kept_rates import KeptRates

from .library import Library


def main(fd: int) -> None:
    """Serve the server at the other end of the socket `fd`: a group a message, until told to stop (None). It runs
    below the server's priority, as the search workers do: a page asked for meanwhile takes the core first (at the
    server's priority a page's p95 went from 10 to 25 ms while the folder was read on two cores)."""
    below_the_server()
    connection = Connection(fd)
    try:
        # What it reads as the server does, told first: (root, follow_symlinks, tuning, prices, the prices' table)
        root, follow_symlinks, tuning, (theirs, as_of, over, source), rates = connection.recv()
        try:
            kept = None if rates is None else KeptRates(*rates)
        except OSError:  # the table's folder cannot be used: models are worked out here
            kept = None
        host = Host(tuning, Prices(theirs, as_of, over, Catalog(kept, source)))
        if kept is None or not kept.holds_models():
            # Nothing kept yet (a first run): the prices' database the first group's costs would wait for (a quarter
            # of a second) is built while the server still walks the folder
            genai_rates.prepare()
        gc.freeze()  # what the imports made is put out of the collector's way
        while True:
            job = connection.recv()
            if job is None:
                break
            number, paths = job
            try:
                answer = (number, read_group(root, follow_symlinks, host, paths), None)
            except Exception as error:  # the group is read in-process instead
                answer = (number, None, f"{type(error).__name__}: {error}")
            connection.send(answer)
    except (EOFError, OSError, KeyboardInterrupt):
        pass
    os._exit(0)  # nothing to flush: the heap is not torn down object by object (about 30 ms of CPU at a stop)


class _Encoded:
    """Stands for the cache store that group_cache.save writes to: it keeps the entry's sections encoded, to be
    signed and kept by the server (CacheStore.put with `encoded`)."""

    def __init__(self) -> None:
        self.key, self.sections = None, []

    def put(self, key: str, sections, pack: bool = False) -> int:
        self.key = key
        self.sections = [section if type(section) is Raw else marshal.dumps(section) for section in sections]
        return sum(map(len, self.sections))


def read_group(root: str, follow_symlinks: bool, host: Host, paths: list[str]) -> tuple | str:
    """The group of the files at `paths` read and kept as the ingest thread keeps it (Groups.read, settle, keep):
    (entry key, its sections encoded, its files, its sidecars, its summary, its normalizer's state, its words joined
    by spaces); or, when it is not one the server could take asleep so, why (then the server reads it).

    Its library and sessions hold cycles: what it read would wait for the collector, and each young collection at
    the end of a read (Groups.read) walked the whole group, a tenth of the worker's CPU. So no collection runs while
    it is read and handed over, and its library and sessions are emptied after, each object freed as it goes."""
    with host.gc.batch():
        library = Library(root, follow_symlinks=follow_symlinks, host=host, hands_over=True)  # its own: nothing stays
        try:
            return _read(library, paths)
        finally:
            for session in library.sessions.values():
                session.__dict__.clear()
            library.__dict__.clear()


def _read(library: Library, paths: list[str]) -> tuple | str:
    with library.groups.read_after():
        for path in paths:
            library.refresh(path)
    groups = library.groups.all()
    if len(groups) != 1 or len(library.sessions) != 1 or library.unfinished:
        return "not one group read whole"
    session = groups[0]
    if set(session.members) != set(paths) or session.asleep is not None:
        return "not the group asked for"
    readers = {path: reader for path, _, reader in library.groups.files()}
    encoded = _Encoded()
    with session.lock:
        if not index_state.cacheable(session):
            return "not settled"
        summary = session.summary()
        kept = group_cache.save(encoded, session, readers, library.inside, pack=True, summary=summary)
        if kept is None:
            return "not kept"
        key, files, sidecars = kept
        state = session.normalizer.state()
    # its words as one text (no word holds a space): one string to pickle, not one per word. Nothing here filed them
    # (Groups.settle): read from its first event in this library, its index noted every word it posts
    return key, encoded.sections, files, sidecars, summary, state, " ".join(session.search.noted)
