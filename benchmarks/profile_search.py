"""What building the full-text search index costs: CPU time of a catch-up and the bytes its postings hold.

    .venv/bin/python benchmarks/profile_search.py FOLDER            # catch_up() timed, best of 3, and memory
    .venv/bin/python benchmarks/profile_search.py FOLDER --profile  # one catch_up() under cProfile

The folder is ingested once without the search index (ingest leaves it to later); then each
session's index is built from nothing, three times, and the best CPU time (time.process_time,
since the machine may be shared) is reported with the time per event. Memory is measured on a
separate build: the index's deep size (postings, vocabulary) and the tracemalloc peak of building it.
"""

from __future__ import annotations

import cProfile
import gc
import pstats
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from profile_ingest import deep_size  # noqa: E402

from viewer.search import index as search_index  # noqa: E402
from viewer.library.library import Library  # noqa: E402


def fresh(sessions) -> None:
    for s in sessions:
        s.search = search_index.SearchIndex(s)


def build(sessions) -> None:
    for s in sessions:
        s.search.catch_up(s.count)


def main(folder: str, profile: bool = False) -> None:
    library = Library(folder)
    start = time.process_time()
    library.scan()
    sessions = library.listing()
    events = sum(s.count for s in sessions)
    print(f"ingest without the search index: {time.process_time() - start:.2f} CPU s for {events:,} events")
    if profile:
        fresh(sessions)
        profiler = cProfile.Profile()
        profiler.enable()
        build(sessions)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
        return
    times = []
    for _ in range(3):
        fresh(sessions)
        gc.collect()
        start = time.process_time()
        build(sessions)
        times.append(time.process_time() - start)
    best = min(times)
    print(f"catch_up(): best of 3 {best:.2f} CPU s ({best / max(events, 1) * 1e6:.2f} µs/event); "
          f"all: {', '.join(f'{t:.2f}' for t in times)}")
    fresh(sessions)
    gc.collect()
    tracemalloc.start()
    build(sessions)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    seen: set[int] = set()
    size = objects = keys = 0
    for s in sessions:
        seen.update({id(s), id(s.lock)})
        for value in vars(s.search).values():
            if not callable(value) and type(value).__name__ != "ReferenceType":
                b, n = deep_size(value, seen)
                size, objects = size + b, objects + n
        keys += len(s.search._postings)
    print(f"search index held: {size / 1e6:,.1f} MB in {objects:,} objects ({keys:,} keys); "
          f"traced: {current / 1e6:,.1f} MB held, {peak / 1e6:,.1f} MB peak while building")


if __name__ == "__main__":
    main(sys.argv[1], "--profile" in sys.argv[2:])
