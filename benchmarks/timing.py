"""Timing for the benchmarks: the median of repeated runs, in wall-clock and CPU seconds (the CPU time holds still
on a machine others are loading, the wall-clock time is what a person waits)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_time(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def arguments(doc: str, events: int, agents: int):
    """The command line of a benchmark on a generated session: --events, --agents and --repeat."""
    import argparse

    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=events)
    parser.add_argument("--agents", type=int, default=agents)
    parser.add_argument("--repeat", type=int, default=5)
    return parser.parse_args()
