"""Timing for the benchmarks: the median of repeated runs, in wall-clock and CPU seconds (the CPU time holds still
on a machine others are loading, the wall-clock time is what a person waits)."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path


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
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=events)
    parser.add_argument("--agents", type=int, default=agents)
    parser.add_argument("--repeat", type=int, default=5)
    return parser.parse_args()


def compiled(repo: str | Path) -> None:
    """Write the checkout's bytecode where it is missing or stale, as `dev.py` and an install do, so that checkouts
    are timed alike (where PYTHONDONTWRITEBYTECODE is set, a process would otherwise compile every module it
    imports at its start)."""
    import subprocess

    subprocess.check_call([sys.executable, "-m", "compileall", "-q", str(Path(repo) / "viewer")])


def folder_in_checkout(doc: str, read_workers: bool = False, handed_over: bool = False,
                       seen: bool = False) -> argparse.Namespace:
    """The command line of a benchmark on a folder: FOLDER and --repo, the checkout whose code it times (compiled,
    and put first on the path, so that what it imports next is that checkout's); with `read_workers`, --read-workers
    N too; with `handed_over`, --handed-over (every group a worker can take handed to one); with `seen`, --seen
    OTHER (another folder read first into the same cache)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent), help="the checkout to time")
    if read_workers:
        parser.add_argument("--read-workers", type=int, default=None, help="worker processes reading sessions (0: "
                            "every session read in this process; default: the app's)")
    if handed_over:
        parser.add_argument("--handed-over", action="store_true", help="the ingest thread reads no group itself "
                            "while a worker could take it")
    if seen:
        parser.add_argument("--seen", help="a folder read first (in a process of its own, not timed) into the same "
                            "cache: FOLDER is new to a viewer that has run before")
    args = parser.parse_args()
    compiled(args.repo)
    sys.path.insert(0, args.repo)
    return args
