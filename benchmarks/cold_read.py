"""The CPU of a folder's cold read in one process, without a server's requests beside it: a Runtime with no watcher
and an empty cache reads every file, then background steps run until none is left (search indexes, facets, the
cache written). CPU by process_time, so another busy process on the machine barely moves it; the worker processes' apart.

    .venv/bin/python benchmarks/cold_read.py FOLDER [--repo CHECKOUT] [--read-workers N]   # CHECKOUT: another version
    .venv/bin/python benchmarks/cold_read.py FOLDER --read-workers 1 --handed-over          # the worker's side alone
    .venv/bin/python benchmarks/cold_read.py FOLDER --seen OTHER    # FOLDER new to a viewer that has read OTHER

Alternate checkouts (`--repo`) in one loop to compare them; under `py-spy record -- ...` it shows where that CPU goes.
`--handed-over`: the ingest thread reads no group itself while a worker could (ReadPool's `shares` off), so every
group a worker can take goes to one: the workers' CPU against `--read-workers 0` is what handing groups over costs.
`--seen OTHER`: the cache starts as a read of OTHER left it (sessions of other files, the prices' table).
"""

from __future__ import annotations

import functools
import os
import resource
import subprocess
import sys
import tempfile
import time

import timing


def main() -> None:
    args = timing.folder_in_checkout(__doc__, read_workers=True, handed_over=True, seen=True)  # 0: all read here
    from viewer.core.tuning import Tuning
    from viewer.library import background
    from viewer.library.runtime import Runtime

    if args.handed_over:
        from viewer.library import read_pool
        from viewer.library import runtime as runtime_module

        runtime_module.ReadPool = functools.partial(read_pool.ReadPool, shares=False)
    with tempfile.TemporaryDirectory(prefix="cold-read-") as cache:
        if args.seen:  # in a process of its own: what it imported is not this one's
            subprocess.run([sys.executable, "-c", "import sys; from viewer.library.runtime import Runtime; "
                            "Runtime(sys.argv[1], watch=False, cache_dir=sys.argv[2]).close()", args.seen, cache],
                           env={**os.environ, "PYTHONPATH": args.repo}, check=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu, wall = time.process_time(), time.perf_counter()
        runtime = Runtime(args.folder, watch=False, cache_dir=cache, tuning=Tuning(read_workers=args.read_workers))
        scanned = time.process_time()
        library, steps = runtime.library, 0
        while True:
            library.looked_at = library.look_after = float("-inf")  # background work at once (looked_at: older code)
            if not background.step(library):
                break
            steps += 1
        done, took = time.process_time(), time.perf_counter() - wall
        events = sum(s.count for s in library.listing())
        pool = getattr(library.groups, "pool", None)  # the read pool's worker processes (library/read_pool.py)
        runtime.close()
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers_cpu = (workers.ru_utime - before.ru_utime) + (workers.ru_stime - before.ru_stime)
    print(f"{args.repo}: {events:,} events; scan {scanned - cpu:.2f} s CPU, background {done - scanned:.2f} s "
          f"({steps} steps), total {done - cpu:.2f} s CPU ({(done - cpu) / max(events, 1) * 1e6:.0f} µs an event), "
          f"wall {took:.2f} s; worker processes {workers_cpu:.2f} s CPU, "
          f"{pool.taken if pool is not None else 0} sessions read by them")


if __name__ == "__main__":
    main()
