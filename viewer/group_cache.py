"""Sessions of several files (Claude Code: a main file and its sub-agents' files) kept between runs.

A group is kept once its normalizer has settled (its files left alone for a while, see Library.settle): then its
whole index is plain data (index_state). It is used again only if nothing about its files changed: the same files
(the entry's key is made of their identities: device and inode), each still of the size it was read to, with the
same modification time and the same bytes at its start and its end, and the same files beside them that describe
them (sidecars: their sizes and times). Any change is a miss: the group is read from its start, as without a cache.
A settled group that grows is read again from its start anyway, so the entry needs no more than that.

A folder of 5,000 finished sessions is thus taken back from 5,000 entries, each checked by a few system calls
and 8 KB read per file, instead of gigabytes read and parsed again.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import zlib

from . import index_state
from .cache_store import CacheStore, CorruptEntry
from .file_source import FileChanged, FileSource
from .index import SessionIndex
from .tailer import FileTailer

log = logging.getLogger(__name__)

ENDS = 4096  # bytes read at each end of a file for its print


def _facts(source: FileSource) -> dict:
    """What tells a file is still as it was: identity, size, modification time, a CRC of its first and last bytes
    (read on its open source: opened as every read is, never outside DIR)."""
    st, first, last = source.ends(ENDS)
    printed = zlib.crc32(last, zlib.crc32(first)) if last else zlib.crc32(first)
    return {"identity": (st.st_dev, st.st_ino), "size": st.st_size, "mtime": st.st_mtime_ns, "print": printed}


def _sidecars(session: SessionIndex) -> dict[str, tuple[int, int] | None]:
    """The files beside the group's files that describe them (Format.sidecar_for): path -> (size, mtime), or
    None where there is none (one written later changes the group as much as one rewritten)."""
    sidecar_for = session.format.sidecar_for
    found = {}
    for member in sorted(session.members) if sidecar_for is not None else ():
        path = sidecar_for(member)
        if path is None:
            continue
        try:
            st = os.lstat(path)
        except OSError:
            found[path] = None
            continue
        found[path] = (st.st_size, st.st_mtime_ns)
    return found


def _key(facts: dict[str, dict]) -> str:
    identities = sorted(tuple(f["identity"]) for f in facts.values())
    return "group " + hashlib.blake2b(repr(identities).encode(), digest_size=16).hexdigest()


def save(store: CacheStore, session: SessionIndex, tailers: dict, inside: str | None) -> tuple[str, dict] | None:
    """Keep a settled group read to the end of every file: (its key, what its files were), what a session put to
    sleep wakes from (see `wake`); None (nothing written) when it is not one."""
    if not index_state.cacheable(session):
        return None
    files = {}
    for path in session.members:
        tailer = tailers.get(path)
        if not isinstance(tailer, FileTailer):
            return None
        state = tailer.state()
        try:  # on the source its tailer reads: the file is not opened again
            facts = _facts(tailer.source if tailer.source is not None else FileSource(path, inside))
        except FileChanged:
            return None  # replaced or rewritten since it was read: it is read again first
        if tuple(state["identity"] or ()) != facts["identity"] or state["position"] != facts["size"]:
            return None  # written since it was read: it is read again first
        files[path] = {**facts, "tailer": state}
    sidecars = _sidecars(session)

    def sections():
        yield "files", files
        yield "sidecars", sidecars
        yield from index_state.sections(session)

    key = _key(files)
    store.put(key, sections())
    return key, files


def restore(store: CacheStore, session: SessionIndex, tailers: dict, inside: str | None,
            lost) -> tuple[str, dict] | None:
    """The group `session` (listed, not read yet) as kept, asleep (sleeping: its index is read from the entry when
    something reads it), its `tailers` set to go on from the end of each file: (the entry's key, what its files
    were). None on any miss (then some tailers may have been moved: the caller makes new ones)."""
    try:  # each file opened once: for its facts, then kept open by its tailer (FileTailer.resume)
        sources = {path: FileSource(path, inside) for path in session.members}
        now = {path: _facts(source) for path, source in sources.items()}
    except OSError:
        return None
    key = _key(now)
    kept = store.sections(key)
    if kept is None:
        return None
    try:
        restored = _restore(kept, session, now, tailers, sources)
    except (CorruptEntry, KeyError, TypeError, ValueError, IndexError, OSError, StopIteration) as error:
        log.info("cache entry of %s not used: %s", session.relpath, error)
        restored = None
    finally:
        kept.close()
    if restored is None:
        store.drop(key)
        return None
    files, (summary, normalizer) = restored
    with session.lock:
        session.normalizer = normalizer
        session.sleep(functools.partial(wake, store, key, files), lost, summary)
    return key, files


def _restore(kept, session: SessionIndex, now: dict, tailers: dict, sources: dict) -> tuple[dict, tuple] | None:
    name, files = next(kept)
    if name != "files" or set(files) != set(now):
        return None
    for path, facts in now.items():
        was = files[path]
        if (tuple(was["identity"]), was["size"], was["mtime"], was["print"]) != (
                facts["identity"], facts["size"], facts["mtime"], facts["print"]):
            return None
    name, sidecars = next(kept)
    if name != "sidecars" or {p: v and tuple(v) for p, v in sidecars.items()} != _sidecars(session):
        return None
    asleep = index_state.asleep(kept, session.format)
    if asleep is None:
        return None
    for path in session.members:
        tailer = tailers.get(path)
        if not isinstance(tailer, FileTailer) or not tailer.resume(files[path]["tailer"], sources[path]):
            return None
    return files, asleep


def wake(store: CacheStore, key: str, files: dict, session: SessionIndex, search_only: bool = False):
    """The index of a sleeping session (a SessionIndex; with `search_only`, its SearchIndex alone), read from its
    entry; None when the entry is gone or is not the one it slept with (evicted, or written again by another server
    after its files changed)."""
    kept = store.sections(key)
    if kept is None:
        return None
    try:
        name, was = next(kept)
        if name != "files" or was != files:
            return None
        next(kept)  # its sidecars: looked at when it was restored or saved
        if search_only:
            return index_state.search_of(kept, session)
        return index_state.restore(kept, session.id, session.path, session.relpath, session.format)
    except (CorruptEntry, KeyError, TypeError, ValueError, IndexError, StopIteration, OSError) as error:
        log.info("cache entry of %s not used: %s", session.relpath, error)
        return None
    finally:
        kept.close()
