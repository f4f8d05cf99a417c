"""The cache's entries on disk: a put writes an entry in few system calls (thousands of sessions are kept in a
first read) and it reads back whole, however its sections were grouped into writes."""

from __future__ import annotations

import os

from viewer.store import cache_store


def writes() -> int:
    """Write system calls this process has made so far (the kernel counts them: /proc/self/io)."""
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("syscw:"))


def test_a_small_entry_goes_to_disk_in_one_write(tmp_path):
    store = cache_store.CacheStore(str(tmp_path / "c"), "v")
    sections = [("head", {"count": 3}), ("search", {"word": b"\0" * 40}), ("end", 3)]
    before = writes()
    store.put("k", iter(sections))
    assert writes() - before == 1
    assert list(store.sections("k")) == sections
    assert sorted(os.listdir(tmp_path / "c")) == sorted(["key", os.path.basename(store._path("k"))])


def test_an_entry_of_many_sections_is_written_in_parts_and_reads_back_whole(tmp_path):
    store = cache_store.CacheStore(str(tmp_path / "c"), "v")
    sections = [("events", [os.urandom(1000) for _ in range(100)]) for _ in range(40)]  # 4 MB in 40 sections
    before = writes()
    size = store.put("k", iter(sections))
    parts = size // 2**20 + 1  # a megabyte at a time
    assert writes() - before <= parts + 1  # each part, and the header's count written once all are
    assert list(store.sections("k")) == sections
    assert size == os.path.getsize(store._path("k"))

