"""CPU per request of a few pages on two or more checkouts, alternated: a before/after check on a shared machine.

    .venv/bin/python benchmarks/page_ab.py FOLDER CHECKOUT CHECKOUT [...] --urls URL [URL ...] [--batches 30]

Starts one worker process per checkout (its code first on the path), each serving FOLDER with the Flask test client
(search index and facets built first). The workers then take turns, batch by batch (10 requests of one URL), so
every checkout meets the same load from other processes. Prints per URL and checkout the CPU microseconds per
request, min and median over the batches, and how far the last checkout is from the first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BATCH = 10  # requests of one URL in a row, timed together


def worker(folder: str) -> None:
    """Answer each "URL N" line read with the CPU microseconds per request of N requests of URL."""
    from viewer.web.app import create_app

    app = create_app(folder, watch=False)
    for session in app.extensions["agentview"].library.listing():
        session.facets.catch_up(session.count)
        session.search.catch_up(session.count)
    client = app.test_client()
    print("ready", flush=True)
    for line in sys.stdin:
        url, n = line.split()
        started = time.process_time()
        for _ in range(int(n)):
            client.get(url)
        print((time.process_time() - started) * 1e6 / int(n), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("checkouts", nargs="+")
    parser.add_argument("--urls", nargs="+", required=True)
    parser.add_argument("--batches", type=int, default=30)
    args = parser.parse_args()
    workers = {}
    for checkout in args.checkouts:
        root = str(Path(checkout).resolve())
        workers[checkout] = subprocess.Popen(
            [sys.executable, __file__, "--worker", args.folder], cwd=root, env={**os.environ, "PYTHONPATH": root},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for process in workers.values():
        assert process.stdout.readline().strip() == "ready"

    def timed(checkout: str, url: str, n: int = BATCH) -> float:
        workers[checkout].stdin.write(f"{url} {n}\n")
        workers[checkout].stdin.flush()
        return float(workers[checkout].stdout.readline())

    spent: dict[tuple[str, str], list[float]] = {(c, u): [] for c in args.checkouts for u in args.urls}
    for url in args.urls:
        for checkout in args.checkouts:
            timed(checkout, url)  # warm: the page's caches filled as on a repeated view
    for batch in range(args.batches):
        for url in args.urls:  # the order of the checkouts flips each batch, so none is always first
            for checkout in args.checkouts[::1 if batch % 2 == 0 else -1]:
                spent[(checkout, url)].append(timed(checkout, url))
    print(f"{args.batches} batches of {BATCH} requests, load {os.getloadavg()[0]:.2f}")
    for url in args.urls:
        cells = [(min(spent[(c, url)]), statistics.median(spent[(c, url)])) for c in args.checkouts]
        (first_min, first_median), (last_min, last_median) = cells[0], cells[-1]
        print(f"{url}: " + "  ".join(f"{Path(c).name} {low:.0f} / {middle:.0f}"
                                     for c, (low, middle) in zip(args.checkouts, cells))
              + f"  (last vs first: min {100 * (last_min / first_min - 1):+.1f}%,"
              f" median {100 * (last_median / first_median - 1):+.1f}%)")
    for process in workers.values():
        process.stdin.close()
        process.wait()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2])
    else:
        main()
