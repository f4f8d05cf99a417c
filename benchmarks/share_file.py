#!/usr/bin/env python3
"""A shared file of a big multi-agent session: its size, how fast `share` makes it, how fast it opens and searches.

    .venv/bin/python benchmarks/share_file.py [--events 100000] [--agents 200] [--folder DIR]

Generates the session with generate.py (deterministic), then measures, in this process:
- ingest: reading the session into an index, as the server does (the reference rate);
- share: `agentview share FILE -o OUT` whole (its own read, the data, masking, compression, the write), and its
  rate against ingest: events per second of each, the two alternated three times, each the median of its three;
- the file's size against the JSONL's;
and in headless Chromium (Debian's), from file:// with the network refused: time to the first view painted (seen
from here, and by the page's own marks: the first view drawn, every part of the events inflated), a search's
answer, and the tab's JavaScript heap. Prints each with its goal.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

GOALS = {"size": 0.35, "rate": 0.5, "first view": 2.0, "search": 0.3, "heap": 500}


def timed(fn) -> tuple[float, float]:
    """Wall and CPU seconds of fn() (on a shared machine the CPU seconds move less)."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def rates(session: Path, out: Path, runs: int = 3) -> tuple[int, tuple[float, float], tuple[float, float]]:
    """Events, and (wall, CPU) seconds of ingest and of `agentview share`: each the median of `runs`, the two
    alternated."""
    from viewer import cli
    from viewer.reads.session_viewer import load_index

    ingest, sharing = [], []
    for _ in range(runs):
        ingest.append(timed(lambda: load_index(session)))
        sharing.append(timed(lambda: cli.main(["share", str(session), "-o", str(out)])))
    medians = [tuple(statistics.median(column) for column in zip(*runs)) for runs in (ingest, sharing)]
    return load_index(session).count, medians[0], medians[1]


def browser_figures(html: Path, word: str) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                           else route.abort())
        start = time.perf_counter()
        page.goto(html.as_uri() + "#agent=a1")
        page.wait_for_selector("#entries .entry")
        first_view = time.perf_counter() - start
        page.wait_for_selector("body[data-every-event]")  # the page's own clock: when it drew the first view
        marks = page.evaluate("() => Object.fromEntries(performance.getEntriesByType('mark').map(m => [m.name, m.startTime]))")
        searches = []
        for n in range(5):
            start = time.perf_counter()
            page.evaluate("q => { location.hash = '#search=' + q; }", f"{word}{n % 2 or ''}")
            page.wait_for_function("q => document.querySelector('main h1')?.textContent === 'Search: ' + q",
                                   arg=f"{word}{n % 2 or ''}")
            searches.append(time.perf_counter() - start)
        client = page.context.new_cdp_session(page)
        client.send("Performance.enable")
        metrics = {m["name"]: m["value"] for m in client.send("Performance.getMetrics")["metrics"]}
        browser.close()
    return {"first view": first_view, "drawn": marks["agentview:first-view"] / 1000,
            "every event": marks["agentview:every-event"] / 1000, "search": sorted(searches)[len(searches) // 2],
            "heap": metrics["JSHeapUsedSize"] / 2**20}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--folder", help="where the session is generated (default: a temporary folder)")
    args = parser.parse_args()
    folder = Path(args.folder or tempfile.mkdtemp(prefix="agentview-share-"))
    folder.mkdir(parents=True, exist_ok=True)
    session = folder / f"bench-{args.events}.jsonl"
    if not session.exists():
        subprocess.run([sys.executable, str(HERE / "generate.py"), str(session), "--events", str(args.events),
                        "--agents", str(args.agents)], check=True)

    from viewer.core.redact import masking

    out = folder / "shared.html"
    with masking(False):
        events, ingest, sharing = rates(session, out)
    page = out.read_bytes()
    size = len(page) / session.stat().st_size
    print(f"session: {events:,} events, {session.stat().st_size / 2**20:.1f} MB")
    for name, at in (("wall", 0), ("CPU", 1)):
        print(f"ingest: {events / ingest[at]:,.0f} events/s ({ingest[at]:.2f} s {name}); share (read, data, mask, "
              f"compress, write): {events / sharing[at]:,.0f} events/s ({sharing[at]:.2f} s); medians of 3, alternated")
    print(f"share rate / ingest rate: {ingest[0] / sharing[0]:.2f} wall, {ingest[1] / sharing[1]:.2f} CPU "
          f"(goal at least {GOALS['rate']})")
    print(f"file size / JSONL size: {size:.3f} ({len(page) / 2**20:.1f} MB; goal at most {GOALS['size']})")
    figures = browser_figures(out, "latency")
    print(f"first view painted: {figures['first view']:.2f} s (goal {GOALS['first view']} s); by the page's clock: "
          f"drawn at {figures['drawn']:.2f} s, every event inflated at {figures['every event']:.2f} s")
    print(f"search answered (median of 5): {figures['search'] * 1000:.0f} ms (goal {GOALS['search'] * 1000:.0f} ms)")
    print(f"JavaScript heap: {figures['heap']:.0f} MB (goal under {GOALS['heap']} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
