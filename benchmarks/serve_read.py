"""A cold `agentview serve` of a folder of many Claude Code sessions, its CPU along the read: every 10 s, the CPU of the
server and its read workers so far, their RSS, the load; then when it went idle (under 5% of a core for 8 s).

    .venv/bin/python benchmarks/serve_read.py HOME [--repo CHECKOUT] [--every S] [--limit S]

HOME holds the folder claude_projects.py wrote (its manifest.json). Without --every, nothing is asked of the server
until it is idle (or --limit s have passed), then whether every session was read; with --every S, every session is
listed each S seconds until all are read and searchable (the runner's "whole" check, versus_agentsview.py), which
shows what those answers cost the read.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from versus_agentsview import REPO, Ours

IDLE_SHARE, IDLE_FOR = 0.05, 8.0  # as the runner's idle (process_tree.Tree.until_idle)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to time")
    parser.add_argument("--every", type=float, default=0.0, help="list every session this often (s); 0: never")
    parser.add_argument("--limit", type=float, default=600.0, help="seconds after which it stops in any case")
    args = parser.parse_args()
    manifest = json.loads((args.home / "manifest.json").read_text())
    with tempfile.TemporaryDirectory(prefix="serve-read-") as cache:
        ours = Ours(manifest, cache, args.repo)
        tree, client = ours.start()

        def say(what: str = "") -> None:
            print(f"{time.perf_counter() - tree.started:6.1f} s: CPU {tree.cpu_seconds():6.1f} s, peak RSS "
                  f"{tree.peak_rss / 1e6:4.0f} MB, load {os.getloadavg()[0]:.1f} {what}", flush=True)

        def read() -> str:
            rows = (client.json("/api/sessions") or {}).get("sessions", [])
            return f"{sum(1 for row in rows if row['events'])} of {len(rows)} sessions read"

        try:
            if args.every:
                while time.perf_counter() - tree.started < args.limit and not ours.whole(client):
                    say(read())
                    time.sleep(args.every)
                say("every session read and searchable")
                return
            last, still, shown = tree.cpu_seconds(), time.perf_counter(), time.perf_counter()
            while time.perf_counter() - still < IDLE_FOR and time.perf_counter() - tree.started < args.limit:
                time.sleep(0.5)
                used = tree.cpu_seconds()
                if used - last > IDLE_SHARE * 0.5:
                    still = time.perf_counter()
                last = used
                if time.perf_counter() - shown >= 10:
                    shown = time.perf_counter()
                    say()
            say(f"idle from {still - tree.started:.1f} s" if time.perf_counter() - still >= IDLE_FOR else "not idle")
            say(read())
        finally:
            tree.stop()


if __name__ == "__main__":
    main()
