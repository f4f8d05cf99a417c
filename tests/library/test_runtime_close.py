"""The runtime that owns an app's threads and caches: what closing it leaves behind."""

from __future__ import annotations

from conftest import write_events
from events import created, say
from viewer.library.runtime import Runtime
from viewer.store.cache_store import CacheStore


def test_closing_writes_the_entries_held_for_a_pack(tmp_path):
    """A server stopped during a first read holds sessions kept for a pack not written yet: closing writes them,
    so the next start takes them from the cache instead of reading their files again."""
    folder, cache = tmp_path / "logs", tmp_path / "cache"
    write_events(folder / "one.jsonl", [created("c0", "root"), say("m1", "root", "hello")])
    runtime = Runtime(folder, watch=False, cache_dir=str(cache))
    store = runtime.library.cache.store
    store.put("held while reading", iter([{"events": 2}]), pack=True)
    assert CacheStore(store.folder, store.version.decode()).sections("held while reading") is None  # held, not written
    runtime.close()
    kept = CacheStore(store.folder, store.version.decode()).sections("held while reading")
    assert kept is not None and list(kept) == [{"events": 2}]
