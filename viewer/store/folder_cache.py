"""One cache entry per served folder: what a restart needs to list every kept session of several files at once.

It holds each kept group's entry key, files, sidecars, summary and settled normalizer, so a restart `lstat`s the
files instead of opening them; their bytes are checked before a wake and by background work soon after. Anything
that does not match is read as without it. Beside it, in an entry of their own, the folder's words
(search.folder_words), so that a restart's first search of a rare word reads the postings of the sessions holding
it, not those of every session.
"""

from __future__ import annotations

import logging
import marshal

from viewer import formats
from viewer.search.folder_words import FolderWords

from .cache_store import CacheStore, CorruptEntry
from .group_cache import stat_unchanged

log = logging.getLogger(__name__)

ROWS = 250  # groups per section: each encodes in a few milliseconds
WORDS = 5000  # words (or sessions) per section of the folder's words
_JOINED = frozenset({"rel", "path", "inside"})  # what Groups.join adds to what a format's member_of told
_BY_NAME = {fmt.name: fmt for fmt in formats.LINE_FORMATS if fmt.member_of is not None}


def key_of(root: str, follow_symlinks: bool) -> str:
    """The entry's key: the folder served (its real path), and whether symlinks are followed in it."""
    return f"folder {root}" + (" following symlinks" if follow_symlinks else "")


class Listed:
    """What the last run kept of a folder's groups (see the module)."""

    def __init__(self, rows: list[tuple]):
        self._groups: dict[str, tuple] = {}  # main path -> (key, files, sidecars, summary, normalizer state)
        self._files: dict[str, tuple] = {}  # path -> (format, member, what the file was)
        self._unchanged: set[str] = set()  # the files `classified` found as they were
        for main, fmt_name, key, files, sidecars, members, summary, state in rows:
            fmt = _BY_NAME.get(fmt_name)
            if fmt is None or set(members) != set(files):
                continue
            self._groups[main] = (key, files, sidecars, summary, state)
            for path, member in members.items():
                self._files[path] = (fmt, member, files[path])

    def __len__(self) -> int:
        return len(self._groups)

    def classified(self, path: str, st=None) -> tuple[formats.Format, str, dict] | None:
        """A file's (format, reason, group) as detect.classify gives it, when it is a kept file whose stat is as it
        was (group_cache.stat_unchanged; `st`: its lstat, as the walk took it); else None (classify it)."""
        known = self._files.get(path)
        if known is None or not stat_unchanged(path, known[2], st):
            return None
        self._unchanged.add(path)
        fmt, member, _ = known
        return fmt, "", dict(member)

    def unchanged(self, path: str, was: dict) -> bool:
        """Whether a kept group's file is as `was` says (group_cache.stat_unchanged): found so by `classified` as
        the walk listed it, else lstat'ed now."""
        return path in self._unchanged or stat_unchanged(path, was)

    def group(self, main: str) -> tuple | None:
        """The row of the group whose main file is `main` (what group_cache.restore_listed takes), or None."""
        return self._groups.get(main)


def row(session, key: str, files: dict, sidecars: dict) -> tuple:
    """A kept group's row (callers hold its lock): it is asleep or awake, kept as it is now."""
    members = {path: {k: v for k, v in member.items() if k not in _JOINED} for path, member in session.members.items()}
    summary = session.summary()
    if type(summary["usage"]) is dict:  # the third of a row's decoding, read only by usage pages: see usage.kept_state
        summary["usage"] = marshal.dumps(summary["usage"])
    return (session.path, session.format.name, key, files, sidecars, members, summary, session.normalizer.state())


def save(store: CacheStore, key: str, rows) -> int:
    """Write the folder's entry from its groups' rows (an iterator: each taken when its section is written)."""
    def sections():
        batch = []
        for one in rows:
            batch.append(one)
            if len(batch) == ROWS:
                yield batch
                batch = []
        yield batch

    return store.put(key, sections())


def save_words(store: CacheStore, key: str, words: FolderWords) -> int:
    """Write the folder's words, in an entry of their own beside the folder's: neither is decoded to read the other."""
    return store.put(_words_key(key), words.state(WORDS))


def _words_key(key: str) -> str:
    return key + " words"


def load(store: CacheStore, key: str) -> Listed | None:
    """The folder's entry, or None when there is none (or it is corrupt, foreign or tampered: read as missing)."""
    kept = store.sections(key)
    if kept is None:
        return None
    try:
        listed = Listed([one for section in kept for one in section])
        store.touch(_words_key(key))  # used with it (read when searched): evicted no sooner
        return listed
    except (CorruptEntry, TypeError, ValueError, KeyError, AttributeError) as error:
        log.info("the folder's cache entry is not used: %s", error)
        store.drop(key)
        return None
    finally:
        kept.close()


def load_words(store: CacheStore, key: str) -> FolderWords | None:
    """The folder's words kept beside its entry, or None (none kept, or an entry not as made: read as without them).
    Read when a search first needs them, not with the rows: a restart holds them only once someone searches."""
    kept = store.sections(_words_key(key))
    if kept is None:
        return None
    try:
        return FolderWords.from_state(kept)
    except (CorruptEntry, TypeError, ValueError, KeyError, IndexError, OverflowError) as error:
        log.info("the folder's words in the cache are not used: %s", error)
        store.drop(_words_key(key))
        return None
    finally:
        kept.close()
