"""The runtime that owns an app's threads and caches: what closing it leaves behind."""

from __future__ import annotations

import sys

import pytest

from conftest import REPO, wait_for, write_events
from events import created, say
from viewer.core.tuning import Tuning
from viewer.index import sleeping
from viewer.library.runtime import Runtime
from viewer.store.cache_store import CacheStore

sys.path.insert(0, str(REPO / "benchmarks"))

from claude_projects import generate  # noqa: E402


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


@pytest.mark.parametrize("read_workers", [0, 1])
def test_closing_during_a_first_read_ends_it_after_the_group_under_way_and_the_next_start_reads_the_rest(
        tmp_path, read_workers):
    """Ctrl-C during the first read of a folder of thousands of sessions stops the server at once: the ingest thread
    ends after the group it reads (before, it read on, and closing gave up waiting for it after 5 s). What was read
    is kept; the next start reads the rest, and every session is then as a whole read makes it."""
    folder = generate(tmp_path / "home", sessions=300, projects=3)["projects_folder"]
    cache = str(tmp_path / "cache")
    runtime = Runtime(folder, cache_dir=cache, tuning=Tuning(read_workers=read_workers))

    def unread(library):
        return sum(sleeping.read_state(s) == "unread" for s in library.listing())
    wait_for(lambda: len(runtime.library.listing()) == 300 and unread(runtime.library) < 300, timeout=60,
             interval=0.001)
    runtime.close()
    assert not runtime.watcher._thread.is_alive()
    assert unread(runtime.library) > 0  # left for the next start
    again = Runtime(folder, watch=False, cache_dir=cache, tuning=Tuning(read_workers=0))
    whole = Runtime(folder, watch=False, tuning=Tuning(read_workers=0))
    try:
        assert unread(again.library) == 0
        assert ({s.id: (s.count, len(s.agents), s.title) for s in again.library.listing()}
                == {s.id: (s.count, len(s.agents), s.title) for s in whole.library.listing()})
    finally:
        again.close()
        whole.close()
