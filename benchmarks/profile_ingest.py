"""Where ingest time and memory go: a guide for optimizing, not a measurement to quote.

    .venv/bin/python benchmarks/profile_ingest.py cpu FOLDER      # cProfile of a cold ingest
    .venv/bin/python benchmarks/profile_ingest.py parts FOLDER    # the ingest timed with parts left out
    .venv/bin/python benchmarks/profile_ingest.py memory FOLDER   # bytes held by each part of each session
    .venv/bin/python benchmarks/profile_ingest.py index FOLDER    # CPU time of SessionIndex.ingest alone, best of 3

`index` reads the lines once, then times only the index's own work on them (parse and bookkeeping)
in CPU seconds (process time: another busy process on the machine barely moves it), beside
orjson.loads of the same lines, so their difference is the index's bookkeeping per event.

`memory` sizes every attribute of every session object deeply (an object shared by two
attributes counts for the first), and the transient peak of the ingest (tracemalloc).
"""

from __future__ import annotations

import cProfile
import gc
import pstats
import sys
import time
import tracemalloc
from array import array
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from viewer.web.app import create_app  # noqa: E402

ATOMS = (str, bytes, int, float, bool, type(None), array)


def deep_size(root, seen: set[int]) -> tuple[int, int]:
    """Bytes and objects reachable from `root` not already in `seen` (which it extends)."""
    total = count = 0
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type) or callable(obj) and not hasattr(obj, "__dict__"):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        count += 1
        if isinstance(obj, ATOMS):
            continue
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        else:
            if hasattr(obj, "__dict__"):
                stack.append(vars(obj))
            for slot in getattr(type(obj), "__slots__", ()):
                if hasattr(obj, slot):
                    stack.append(getattr(obj, slot))
    return total, count


def memory(folder: str) -> None:
    gc.collect()
    tracemalloc.start()
    app = create_app(folder, watch=False)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"python heap after ingest {current / 1e6:,.0f} MB; peak during ingest {peak / 1e6:,.0f} MB "
          f"(the difference is transient: lines read but not yet indexed, parse buffers)")
    start = time.perf_counter()
    gc.collect()  # a full collection stops every thread (the GIL) for as long as it walks the heap
    print(f"one full garbage collection: {(time.perf_counter() - start) * 1000:,.0f} ms "
          f"over {len(gc.get_objects()):,} tracked objects")
    library = app.extensions["agentview"].library
    for session in library.listing():
        seen: set[int] = {id(session.lock), id(library)}
        parts = []
        for name, value in vars(session).items():
            size, objects = deep_size(value, seen)
            parts.append((size, objects, name, type(value).__name__))
        total = sum(p[0] for p in parts)
        print(f"session {session.id}: {total / 1e6:,.0f} MB in {sum(p[1] for p in parts):,} objects")
        for size, objects, name, kind in sorted(parts, reverse=True):
            if size > total / 1000:
                print(f"  {name:<24} {kind:<14} {size / 1e6:9,.1f} MB {size / total:6.1%} {objects:>12,} objects")


def cpu(folder: str) -> None:
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    create_app(folder, watch=False)
    profile.disable()
    print(f"cold ingest under the profiler: {time.perf_counter() - start:.2f} s")
    pstats.Stats(profile).sort_stats("tottime").print_stats(25)


def parts(folder: str) -> None:
    """The cold ingest timed again with parts left out, beside reading and parsing alone."""
    import json

    import orjson

    from viewer.search import index as search_index
    from viewer.files.tailer import FileTailer

    def timed(label: str, action):
        gc.collect()
        start, cpu_start = time.perf_counter(), time.process_time()
        result = action()
        print(f"{label:<50} {time.perf_counter() - start:7.2f} s  ({time.process_time() - cpu_start:.2f} s CPU)")
        return result

    def without_gc():
        gc.disable()
        try:
            return create_app(folder, watch=False)
        finally:
            gc.enable()

    paths = sorted(Path(folder).rglob("*.jsonl"))
    lines = timed("read and split into lines (FileTailer)",
                  lambda: [line for path in paths for line in FileTailer(path).read().lines])
    timed("orjson.loads of every line", lambda: [orjson.loads(line.data) for line in lines])
    timed("json.loads of every line", lambda: [json.loads(line.data) for line in lines])
    lines = None  # free them before the ingests below
    timed("cold ingest", lambda: create_app(folder, watch=False))
    timed("cold ingest, cyclic GC off", without_gc)
    if not hasattr(getattr(search_index, "SearchIndex", None), "add"):
        print("(no search_index.SearchIndex.add to leave out)")
        return
    search_index.SearchIndex.add = lambda *args: None  # this process measures only from here on
    timed("cold ingest without the search index", lambda: create_app(folder, watch=False))
    timed("cold ingest without the search index, GC off", without_gc)


def index(folder: str, rounds: int = 3) -> None:
    """SessionIndex.ingest of the lines of each file (read beforehand), in CPU seconds, best of `rounds`."""
    import orjson

    from viewer.index.session_index import SessionIndex
    from viewer.files.tailer import FileTailer

    def best(action) -> float:
        times = []
        for _ in range(rounds):
            gc.collect()
            start = time.process_time()
            action()
            times.append(time.process_time() - start)
        return min(times)

    paths = sorted(Path(folder).rglob("*.jsonl"))
    reads = [(path, FileTailer(path).read()) for path in paths]
    files = [(path, result.lines) for path, result in reads]
    events = sum(len(lines) for _, lines in files)

    def ingest_all():  # as the Library does: lines kept as offsets into the open file
        for path, result in reads:
            SessionIndex(path.name, str(path), path.name).ingest(result.lines, result.source)

    def loads_all():
        for _, lines in files:
            for line in lines:
                orjson.loads(line.data.strip())  # not kept: the index keeps where a native line is, not its dict

    loads = best(loads_all)
    ingest = best(ingest_all)
    per = 1e6 / max(events, 1)
    print(f"{events:,} lines; CPU seconds, best of {rounds}")
    print(f"orjson.loads (with strip) of every line {loads:7.3f} s {loads * per:6.2f} µs/line")
    print(f"SessionIndex.ingest                     {ingest:7.3f} s {ingest * per:6.2f} µs/line "
          f"({events / ingest:,.0f} lines/s)")
    print(f"bookkeeping (the difference)            {ingest - loads:7.3f} s {(ingest - loads) * per:6.2f} µs/line")


if __name__ == "__main__":
    {"cpu": cpu, "parts": parts, "memory": memory, "index": index}[sys.argv[1]](sys.argv[2])
