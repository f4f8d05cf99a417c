"""The prices' table kept between runs: each model genai-prices was asked about (core.genai_rates.Model, plain) and
genai-prices' version, so that a process whose models are all kept never imports genai-prices.

It is a cache store of its own beside the sessions' entries (as the compiled templates are): each model an entry,
signed, written atomically (two processes may add the same model at once: either write wins, and both are alike),
versioned by everything it derives from, the code that works it out and the genai-prices installed. An entry of
other code, of another genai-prices, truncated or tampered with reads as missing: the model is worked out again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import threading

from . import code_version
from .cache_store import CacheStore, CorruptEntry, kept_file

log = logging.getLogger(__name__)

FOLDER = "prices"  # below the sessions' cache folder
MAX_BYTES = 16 * 1024 * 1024  # a few hundred bytes a model


def genai_prices_print() -> str | None:
    """What kept rates derive from in genai-prices (files_print of its package), found without importing it; None:
    it is not installed."""
    spec = importlib.util.find_spec("genai_prices")
    if spec is None or not spec.submodule_search_locations:
        return None
    return files_print(spec.submodule_search_locations[0])


def files_print(package: str) -> str:
    """A print of an installed package: the names beside it of its distribution's records (its version), and its
    files' names, sizes and times (as Python checks a compiled module against its source)."""
    h = hashlib.blake2b(digest_size=16)
    name = os.path.basename(package)
    with os.scandir(os.path.dirname(package)) as found:
        h.update("\0".join(sorted(e.name for e in found if e.name.startswith(f"{name}-"))).encode())
    with os.scandir(package) as found:
        for entry in sorted((e for e in found if e.is_file()), key=lambda e: e.name):
            st = entry.stat()
            h.update(f"\0{entry.name}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return h.hexdigest()


class KeptRates:
    """genai_rates.Table over a cache store in `folder`."""

    def __init__(self, folder: str, version: str) -> None:
        self.store = CacheStore(folder, version, max_bytes=MAX_BYTES)
        self.folder, self.version = folder, version
        self._lock = threading.Lock()  # models are named on the ingest thread and on request threads

    def get(self, key: str) -> object:
        try:
            sections = self.store.sections(key)
            return None if sections is None else next(sections, None)
        except CorruptEntry:  # not as this code wrote it: worked out again, and written anew
            self.store.drop(key)
            return None

    def holds_models(self) -> bool:
        """Whether any model is kept (an entry besides genai-prices' version: a first run keeps none)."""
        try:
            return sum(map(kept_file, os.listdir(self.folder))) > 1
        except OSError:
            return False

    def put(self, key: str, value: object) -> None:
        with self._lock:
            try:
                self.store.put(key, iter([value]))
            except (OSError, ValueError) as error:  # not kept: worked out again by the next process
                log.info("prices' table: %s not kept: %s", key, error)


def in_folder(sessions_folder: str) -> KeptRates | None:
    """The table kept beside the sessions' cache in `sessions_folder`; None when genai-prices is not installed or
    the folder cannot be used."""
    made_by = genai_prices_print()
    if made_by is None:
        return None
    try:
        return KeptRates(os.path.join(sessions_folder, FOLDER),
                         f"{code_version.version()} genai-prices {made_by}")
    except OSError as error:
        log.warning("prices not kept: cannot use %s: %s", sessions_folder, error)
        return None
