"""Sessions of several files (Claude Code: a main file and its sub-agents' files) kept between runs.

A group is kept once it has settled; it is used again only if its files are the same (identities, sizes, times,
first and last bytes) and so are its sidecars. Any change is a miss: the group is read from its start. A file
whose times were older than when its facts were taken by more than RACY_NS is told the same by its stat alone
(`racy`).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import time

from isal import isal_zlib

from viewer.files.file_source import FileChanged, FileSource, file_ends
from viewer.files.safe_open import folder_inside
from viewer.files.tailer import FileTailer
from viewer.index.session_index import SessionIndex

from . import index_state
from .cache_store import CacheStore, CorruptEntry

log = logging.getLogger(__name__)

ENDS = 4096  # bytes read at each end of a file for its print
# How much older than the moment its facts were taken a file's times must be for its stat alone to vouch for its
# bytes (`racy`). A later write stamps a time at least the clock's then, less what stamping loses: Linux stamps by
# a clock a tick behind (up to 10 ms), FAT and some file servers keep whole seconds (FAT's times 2 s), and a file
# server stamps by its own clock, which may lag ours. A minute covers all of these many times over, and costs
# nothing: a group is kept once its files have been left alone for Tuning.settle_after (an hour).
RACY_NS = 60 * 1_000_000_000


def _facts(source: FileSource) -> dict:
    """What tells a file is still as it was: identity, size, modification time, a CRC of its first and last bytes
    (read on its open source: opened as every read is, never outside DIR), and when they were taken."""
    taken = time.time_ns()  # before its stat: a write after it is stamped later (see `racy`)
    facts = _facts_of(*source.ends(ENDS))
    facts["taken"] = taken
    return facts


def _facts_of(st, first: bytes, last: bytes) -> dict:
    """A file's facts (see `_facts`, but when they were taken) from its stat and its first and last bytes."""
    crc32 = isal_zlib.crc32  # zlib's CRC-32, four times as fast: a restart checks the ends of every file it kept
    printed = crc32(last, crc32(first)) if last else crc32(first)
    return {"identity": (st.st_dev, st.st_ino), "size": st.st_size, "mtime": st.st_mtime_ns, "print": printed,
            "ctime": st.st_ctime_ns}


def racy(was: dict) -> bool:
    """Whether a kept file was changed so shortly before its facts were taken (within RACY_NS) that a write after
    them might bear the same times: then only its bytes tell it is as it was (git's "racily clean" files). Any
    write, chmod or rename stamps the status-change time, which nobody can set back; so a file whose times were
    older than that, and whose stat is the same now (`stat_unchanged`), holds the bytes it held when its facts
    were taken."""
    taken = was.get("taken")
    return taken is None or max(was["mtime"], was["ctime"]) >= taken - RACY_NS


def _same(was: dict, facts: dict) -> bool:
    """Whether a file's facts now are those kept (its status-change time aside: a file made readable again, or
    renamed back, holds the same bytes)."""
    return (tuple(was["identity"]), was["size"], was["mtime"], was["print"]) == (
        tuple(facts["identity"]), facts["size"], facts["mtime"], facts["print"])


def stat_unchanged(path: str, was: dict, st: os.stat_result | None = None) -> bool:
    """Whether the file at `path` (not followed if a symlink: a symlink is never the file kept) has the identity,
    size, modification and status-change times kept: a restart tells an unchanged file by them, without opening
    it (its bytes are checked before anything reads it unless it is not `racy`: see `wake`, `same_files`). A
    chmod, a rename or a write moves the status-change time. `st`: its lstat taken just now (a walk's), else it is
    taken here."""
    try:
        st = os.lstat(path) if st is None else st
    except OSError:
        return False
    return ((st.st_dev, st.st_ino), st.st_size, st.st_mtime_ns, st.st_ctime_ns) == (
        tuple(was["identity"]), was["size"], was["mtime"], was.get("ctime"))


def same_files(files: dict, inside: str | None, folders: dict[str, str] | None = None) -> bool:
    """Whether every file of a kept group still holds what it held when kept: told by its stat when it is not
    `racy` and its folder lies in DIR, else by its ends (opened as every read is: never one outside DIR; one at a
    time, closed at once: its tailer has its own descriptor). `folders`: the folders' real paths found just now
    (safe_open.folder_inside), shared by the groups checked together."""
    folders = {} if folders is None else folders
    for path, was in files.items():
        if not racy(was) and stat_unchanged(path, was) and folder_inside(os.path.dirname(path), inside, folders):
            continue
        try:
            if not _same(was, _facts_of(*file_ends(path, inside, ENDS))):
                return False
        except OSError:
            return False
    return True


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


def save(store: CacheStore, session: SessionIndex, tailers: dict, inside: str | None,
         pack: bool = False, summary: dict | None = None) -> tuple[str, dict, dict] | None:
    """Keep a settled group read to the end of every file: (its key, what its files were, its sidecars), what a
    session put to sleep wakes from (see `wake`); None (nothing written) when it is not one. `pack`: a small one
    goes in a pack (CacheStore.put); `summary`: the session's summary() when the caller took it already."""
    if not index_state.cacheable(session):
        return None
    files = {}
    for path in session.members:
        tailer = tailers.get(path)
        if not isinstance(tailer, FileTailer):
            return None
        state = tailer.state()
        try:  # on the source its tailer reads: the file is not opened again
            facts = _facts(tailer.source if tailer.source is not None else FileSource(path, inside, pool=session.host.files))
        except FileChanged:
            return None  # replaced or rewritten since it was read: it is read again first
        if tuple(state["identity"] or ()) != facts["identity"] or state["position"] != facts["size"]:
            return None  # written since it was read: it is read again first
        files[path] = {**facts, "tailer": state}
    sidecars = _sidecars(session)

    def sections():
        yield "files", files
        yield "sidecars", sidecars
        yield from index_state.sections(session, summary=summary)

    key = _key(files)
    store.put(key, sections(), pack=pack)
    return key, files, sidecars


def restore(store: CacheStore, session: SessionIndex, tailers: dict, inside: str | None,
            lost, spoiled=None) -> tuple[str, dict, dict] | None:
    """The group `session` (listed, not read yet) as kept, asleep (sleeping: its index is read from the entry when
    something reads it), its `tailers` set to go on from the end of each file: (the entry's key, what its files
    were, its sidecars). None on any miss (then some tailers may have been moved: the caller makes new ones).
    `spoiled(session)`: see `wake`."""
    try:  # each file opened once: for its facts, then kept open by its tailer (FileTailer.resume)
        sources = {path: FileSource(path, inside, pool=session.host.files) for path in session.members}
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
    files, sidecars, asleep = restored
    _sleep(session, asleep, functools.partial(wake, store, key, files, spoiled=spoiled), lost)
    return key, files, sidecars


def restore_listed(store: CacheStore, session: SessionIndex, tailers: dict, inside: str | None, lost,
                   listed: tuple, checked: bool = False, unchanged=stat_unchanged,
                   spoiled=None) -> tuple[str, dict, dict] | None:
    """The group `session` asleep from its row in the folder's entry (folder_cache: `listed` is (key, files,
    sidecars, summary, normalizer state)), its files only lstat'ed (`stat_unchanged`), none opened: its tailers
    open them when they next read, and it wakes only once its files are found to hold what they held (`wake` with
    `checked` False; background work checks them soon after: SessionCache.check_step). `checked`: the row was made
    just now from the files read (read_pool); `unchanged(path, was)`: what tells a file as it was (the folder's
    entry's own: folder_cache.Listed); `spoiled(session)`: see `wake`. None on any miss."""
    key, files, sidecars, summary, state = listed
    if files.keys() != session.members.keys() or not all(unchanged(p, was) for p, was in files.items()):
        return None
    if {p: v and tuple(v) for p, v in sidecars.items()} != _sidecars(session):
        return None
    asleep = index_state.asleep_from(session.format, summary, state)
    if asleep is None:
        return None
    for path, was in files.items():
        tailer = tailers.get(path)
        source = FileSource(path, inside, identity=was["identity"], pool=session.host.files)  # not opened: see FileSource
        unchanged = None if racy(was) else (was["mtime"], was["taken"])  # its bytes as read, told by its stat
        if not isinstance(tailer, FileTailer) or not tailer.resume(was["tailer"], source, unchanged):
            return None
    _sleep(session, asleep, functools.partial(wake, store, key, files, checked=checked, inside=inside,
                                              spoiled=spoiled), lost)
    return key, files, sidecars


def _sleep(session: SessionIndex, asleep: tuple[dict, object], wake, lost) -> None:
    """A restored session asleep: its settled normalizer set, what the list shows taken from its summary."""
    summary, normalizer = asleep
    with session.lock:
        session.normalizer = normalizer
        session.sleep(wake, lost, summary)


def _restore(kept, session: SessionIndex, now: dict, tailers: dict, sources: dict) -> tuple[dict, tuple] | None:
    name, files = next(kept)
    if name != "files" or set(files) != set(now):
        return None
    if not all(_same(files[path], facts) for path, facts in now.items()):
        return None
    name, sidecars = next(kept)
    sidecars = {p: v and tuple(v) for p, v in sidecars.items()} if name == "sidecars" else None
    if sidecars != _sidecars(session):
        return None
    asleep = index_state.asleep(kept, session.format)
    if asleep is None:
        return None
    for path in session.members:
        tailer = tailers.get(path)
        if not isinstance(tailer, FileTailer) or not tailer.resume(files[path]["tailer"], sources[path]):
            return None
    return files, sidecars, asleep


def wake(store: CacheStore, key: str, files: dict, session: SessionIndex, search_only: bool = False, *,
         checked: bool = True, inside: str | None = None, spoiled=None):
    """The index of a sleeping session (a SessionIndex; with `search_only`, its SearchIndex alone), read from its
    entry; None when the entry is gone or is not the one it slept with (evicted, or written again by another server
    after its files changed), or, for a session whose files were not `checked` yet (restored by their stat alone:
    `restore_listed`), when they no longer hold what they held. Its events, search index and message ids are read
    from the entry and checked when first needed (cache_store.Later: its first page reads none of them); one that
    cannot be read then tells `spoiled(session)`, which has it read again from its files."""
    # The collector paused from the first read on (its files' checks and sections make thousands of objects, enough
    # to set off a full collection of the whole heap, 15 ms at a first view after a restart), and the index made
    # all kept: not walked for garbage while made, nor after
    with session.host.gc.batch(kept=True) as made:
        if not checked and not same_files(files, inside):
            return None
        kept = store.sections(key, later=not search_only)
        if kept is None:
            return None
        try:
            name, was = next(kept)
            if name != "files" or was != files:
                return None
            next(kept)  # its sidecars: looked at when it was restored or saved
            if search_only:
                return index_state.search_of(kept, session)
            restored = index_state.restore(kept, session.id, session.path, session.relpath, session.format,
                                           session.host, spoiled and functools.partial(spoiled, session))
            made["added"] = restored.count if restored is not None else 0
            return restored
        except (CorruptEntry, KeyError, TypeError, ValueError, IndexError, StopIteration, OSError) as error:
            log.info("cache entry of %s not used: %s", session.relpath, error)
            return None
        finally:
            kept.close()
