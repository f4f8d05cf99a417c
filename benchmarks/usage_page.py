#!/usr/bin/env python3
"""The usage page over a Claude Code folder of months of sessions: its answer once the folder is read, after a
restart (sessions asleep, summed from the cache), and its empty poll; the sessions list `/` timed beside it.

    .venv/bin/python benchmarks/usage_page.py [--sessions 2000] [--repeat 5]

Writes the folder with claude_projects.py into a temporary HOME, reads it in an app of this process with a cache,
does the background work an idle server does (settling, saving, putting sessions to sleep), then times
/api/usage (the default window and all days), /usage, `/` and the empty poll (median of --repeat; wall-clock and
CPU); then makes a second app from the cache, as a restart does, and times the same.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def timed(app, label: str, repeat: int) -> None:
    from timing import median_time

    from viewer.web.state import KEY

    client = app.test_client()
    library = app.extensions[KEY].library
    asleep = sum(s.asleep is not None for s in library.listing())
    first = time.perf_counter()
    data = client.get("/api/usage?days=all").get_json()
    print(f"{label}: {len(library.listing()):,} sessions ({asleep:,} asleep), {data['total']['responses']:,} responses, "
          f"{len(data['bars'])} bars; first answer {1000 * (time.perf_counter() - first):.1f} ms; median of {repeat}")
    poll = f"/poll/usage?v={data['version']}"
    for name, url in (("usage JSON, 30 days", "/api/usage"), ("usage JSON, all days", "/api/usage?days=all"),
                      ("usage page", "/usage"), ("usage by project", "/usage?split=project&metric=tokens"),
                      ("sessions list /", "/"), ("empty usage poll", poll)):
        status = client.get(url).status_code
        wall, cpu = median_time(lambda: client.get(url), repeat)
        print(f"  {name:22} {wall * 1000:8.1f} ms ({cpu * 1000:.1f} ms CPU, {status})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from claude_projects import generate

    from viewer.library import background
    from viewer.web.app import close_app, create_app
    from viewer.web.state import KEY

    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        generate(home, sessions=args.sessions)
        folder, cache = home / ".claude" / "projects", str(Path(scratch) / "cache")
        start = time.perf_counter()
        app = create_app(folder, watch=False, cache_dir=cache)
        library = app.extensions[KEY].library
        while background.step(library):
            pass
        print(f"read and kept in {time.perf_counter() - start:.1f} s")
        timed(app, "once read", args.repeat)
        close_app(app)
        again = create_app(folder, watch=False, cache_dir=cache)
        timed(again, "after a restart", args.repeat)
        close_app(again)


if __name__ == "__main__":
    main()
