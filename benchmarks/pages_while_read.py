"""How fast a page answers while a cold start reads a `~/.claude/projects` folder of many small sessions.

    .venv/bin/python benchmarks/pages_while_read.py [--home /tmp/cc-home] [--repo CHECKOUT] [--page PATH]

Starts `agentview serve FOLDER` on an empty cache (the checkout given, to compare versions), and from the moment
every session is listed until every one is searchable asks for the newest session's JSON (`/api/sessions/<id>`,
or PATH) every 50 ms, and once a second whether the reading is done (as versus_agentsview.py does). Prints its
latencies (median, p95, max) and the times, as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import versus_agentsview as versus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", default="/tmp/cc-home")
    parser.add_argument("--repo", default=str(versus.REPO), help="the checkout to serve")
    parser.add_argument("--page", help="the page to ask for (default: the newest session's JSON)")
    args = parser.parse_args()
    versus.REPO = Path(args.repo)
    manifest = json.loads((Path(args.home) / "manifest.json").read_text())
    with tempfile.TemporaryDirectory(prefix="pages-while-read-") as cache:
        ours = versus.Ours(manifest, cache)
        tree, client = ours.start()
        try:
            listed = client.until(lambda: ours.listed(client), tree.started, every=0.05)
            newest = next(row["id"] for row in client.json("/api/sessions")["sessions"] if manifest["newest"] in row["id"])
            page = args.page or f"/api/sessions/{quote(newest)}"
            times, looked = [], time.perf_counter()
            while True:
                status, _, seconds = client.get(page)
                times.append(seconds * 1000)
                if time.perf_counter() - looked >= 1.0:
                    looked = time.perf_counter()
                    if ours.whole(client):
                        break
                time.sleep(0.05)
            whole = time.perf_counter() - tree.started
        finally:
            tree.stop()
    times.sort()
    print(json.dumps({"repo": args.repo, "page": page, "listed_s": listed, "whole_s": round(whole, 2),
                      "asked": len(times), "median_ms": round(statistics.median(times), 1),
                      "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1), "max_ms": round(times[-1], 1)}))


if __name__ == "__main__":
    main()
