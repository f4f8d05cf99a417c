"""Server time of a few pages, p50/p95 per request: a quick before/after check of one change.

    .venv/bin/python benchmarks/page_times.py FOLDER URL [URL ...] [--runs 30] [--cold]

Ingests FOLDER cold (create_app without a watcher, search index and facets built before timing), then
requests each URL once to warm caches and `--runs` times timed with the Flask test client (no network).
Prints one line per URL: wall ms and CPU ms (CPU time is not stretched while other processes hold the
cores of a shared machine), p50 and p95, and the status. `--cold` forgets the search totals kept before each
request (the app's runtime keeps them), so a search page is timed as its first view.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from probes import cpu_seconds, summary  # noqa: E402

from viewer.web.app import create_app  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("urls", nargs="+")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--cold", action="store_true", help="forget the search totals kept before each request")
    args = parser.parse_args()
    app = create_app(args.folder, watch=False)
    for session in app.extensions["agentview"].library.listing():
        session.facets.catch_up(session.count)
        session.search.catch_up(session.count)
    client = app.test_client()
    counts = app.extensions["agentview"].runtime.counts
    for url in args.urls:
        status = client.get(url).status_code
        wall, cpu = [], []
        for _ in range(args.runs):
            if args.cold:
                counts.clear()
            t, c = time.perf_counter(), cpu_seconds()
            status = client.get(url).status_code
            wall.append((time.perf_counter() - t) * 1000)
            cpu.append((cpu_seconds() - c) * 1000)
        w, c = summary(wall), summary(cpu)
        print(f"{url}  wall p50 {w['p50']:.2f} p95 {w['p95']:.2f} ms · CPU p50 {c['p50']:.2f} p95 {c['p95']:.2f} ms"
              f" · {status}")


if __name__ == "__main__":
    main()
