#!/usr/bin/env python3
"""The timeline of a big multi-agent session: its first answer once the session is indexed, and its empty poll.

    .venv/bin/python benchmarks/timeline_page.py [--events 100000] [--agents 200] [--repeat 5]

Generates the session with generate.py (deterministic, with a time on each event), serves it from an app in this
process, builds its facets as the server's background work does, then times the timeline's first answer (once),
its JSON and page, a zoomed range, and the live fragment's poll with nothing new (median of --repeat; wall-clock
and CPU). Goal: the first answer within 300 ms; the empty poll what any empty poll costs (the agent page's is
timed beside it).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

GOAL = 0.3


def main() -> None:
    from generate import generate
    from timing import arguments, median_time

    args = arguments(__doc__, 100_000, 200)

    from viewer.web.app import create_app
    from viewer.web.state import KEY

    with tempfile.TemporaryDirectory() as folder:
        generate(Path(folder) / "big.jsonl", args.events, args.agents, times=True)
        app = create_app(folder, watch=False, cache_dir=None)
        client = app.test_client()
        client.get("/api/sessions")
        session = app.extensions[KEY].library.get("big")
        start = time.perf_counter()
        session.facets.catch_up_in_slices(session.count)  # what the server's background work does once a file is read
        print(f"{args.events:,} events, {args.agents} agents; facets built in {time.perf_counter() - start:.1f} s; "
              f"median of {args.repeat}")
        start, cpu = time.perf_counter(), time.process_time()
        data = client.get("/api/sessions/big/timeline").get_json()  # the first: builds what later ones reuse
        print(f"  {'first timeline JSON':20} {(time.perf_counter() - start) * 1000:8.1f} ms "
              f"({(time.process_time() - cpu) * 1000:.1f} ms CPU)")
        middle = (data["first"] + data["last"]) / 2
        cursor = data["cursor"]
        for label, url in (("timeline JSON", "/api/sessions/big/timeline"), ("timeline page", "/s/big/timeline"),
                           ("a tenth of it", f"/s/big/timeline?start={middle}"
                                             f"&end={middle + (data['last'] - data['first']) / 10}"),
                           ("empty timeline poll", f"/s/big/poll/timeline?after={cursor}"),
                           ("empty agent poll", f"/s/big/poll/agent?agent=a1&after={cursor}")):
            status = client.get(url).status_code
            wall, cpu = median_time(lambda: client.get(url), args.repeat)
            goal = "" if "poll" in label else f"  goal {GOAL * 1000:.0f} ms: {'met' if wall <= GOAL else 'MISSED'}"
            print(f"  {label:20} {wall * 1000:8.1f} ms ({cpu * 1000:.1f} ms CPU, {status}){goal}")


if __name__ == "__main__":
    main()
