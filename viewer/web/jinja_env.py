"""The app's Jinja environment: each template's globals are one dict, not Jinja's ChainMap over the environment's,
and templates once compiled are kept in the sessions' cache, so a restart loads them instead of compiling them.

Every context a page makes (its includes too) copies them, and every `{% from ... import %}` compares their keys:
key by key in Python over a ChainMap, in C over a dict. Every global is set while the app is made, before a
template loads (as Jinja asks), so the dict taken when a template loads holds them all.
"""

from __future__ import annotations

import functools
import os
import threading

import jinja2
from flask.templating import Environment
from jinja2.bccache import Bucket, BytecodeCache

from viewer.store import code_version
from viewer.store.cache_store import CacheStore, CorruptEntry

FOLDER = "templates"  # below the sessions' cache folder


class FlatGlobalsEnvironment(Environment):
    def make_globals(self, d):
        return {**self.globals, **(d or {})}


@functools.cache
def _compiled_by() -> str:
    """What a compiled template derives from besides its source (which Jinja checks itself): the environment's
    settings, made by this package's code, and Jinja's own version."""
    return f"{code_version.digest(code_version.VIEWER, ('web',))} jinja {jinja2.__version__}"


class KeptTemplates(BytecodeCache):
    """Jinja's bytecode cache over a cache store of its own (a folder beside the sessions' entries): each compiled
    template an entry, signed as every entry is (code run from disk must be code this server wrote) and versioned by
    what compiled it (an entry of other code is refused and dropped)."""

    def __init__(self, sessions_folder: str) -> None:
        self.store = CacheStore(os.path.join(sessions_folder, FOLDER), _compiled_by())
        self._lock = threading.Lock()  # pages compile on request threads, the idle ones on the ingest thread

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            kept = next(self.store.sections(bucket.key) or iter(()), None)
        except CorruptEntry:  # not as this server wrote it: compiled again, and written anew
            self.store.drop(bucket.key)
            return
        if isinstance(kept, bytes):
            bucket.bytecode_from_string(kept)  # refused (left empty) when its source's checksum differs

    def dump_bytecode(self, bucket: Bucket) -> None:
        with self._lock:
            self.store.put(bucket.key, iter([bucket.bytecode_to_string()]))
