"""Memory and time of reading a big Claude Code project folder (memory bounded by the index).

    .venv/bin/python benchmarks/claude_folder.py [--size 1G] [--folder /tmp/claude1g] [--keep]

Writes the folder with benchmarks/generate_claude.py unless it is there already (same size asked),
then, in a fresh Python process: `Library(folder).scan()` (time, peak RSS, RSS after), the biggest
session's usage totals and its main transcript's first page, every session's search index caught up
(time, RSS after, peak RSS), and one read of every event (the content comes back from the files). Prints the figures as JSON. `--keep` leaves the folder.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

MEASURE = r"""
import gc, json, os, resource, sys, time
sys.path.insert(0, sys.argv[2])
from viewer.library.library import Library

def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

figures = {"rss_before_mb": round(rss_mb(), 1)}
start = time.perf_counter()
library = Library(sys.argv[1])
library.scan()
figures["scan_s"] = round(time.perf_counter() - start, 2)
figures["scan_peak_rss_mb"] = round(peak_mb(), 1)
gc.collect()
figures["rss_after_scan_mb"] = round(rss_mb(), 1)
figures["sessions"] = len(library.sessions)
figures["events"] = sum(s.count for s in library.sessions.values())
figures["agents"] = sum(len(s.agents) for s in library.sessions.values())
from viewer.reads import queries
from viewer.index import usage
big = max(library.sessions.values(), key=lambda s: s.count)
start = time.perf_counter()
usage.for_session(big)  # the session page's totals: every response of the session read once
figures["first_usage_totals_s"] = round(time.perf_counter() - start, 2)
start = time.perf_counter()
queries.perspective(big, "main")  # the first page of the main agent's transcript
figures["first_page_s"] = round(time.perf_counter() - start, 3)
start = time.perf_counter()
for s in library.sessions.values():
    s.search.catch_up(s.count)
figures["search_catch_up_s"] = round(time.perf_counter() - start, 2)
gc.collect()
figures["rss_after_search_mb"] = round(rss_mb(), 1)
figures["peak_rss_mb"] = round(peak_mb(), 1)
start, chars = time.perf_counter(), 0
for s in library.sessions.values():
    for p in range(s.count):
        content = s.events[p].get("content")
        chars += len(content) if isinstance(content, str) else 0
figures["read_all_s"] = round(time.perf_counter() - start, 2)
figures["content_chars_read"] = chars
print(json.dumps(figures))
"""


def main() -> None:
    from generate_claude import generate, parse_size

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1G")
    parser.add_argument("--folder", default="/tmp/claude1g")
    parser.add_argument("--subagents", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="leave the generated folder")
    args = parser.parse_args()
    folder, size = Path(args.folder), parse_size(args.size)
    stamp = folder / ".generated.json"
    made = None
    if stamp.exists() and json.loads(stamp.read_text()).get("size") == size:
        made = json.loads(stamp.read_text())
    else:
        shutil.rmtree(folder, ignore_errors=True)
        start = time.perf_counter()
        made = generate(folder, size, args.subagents)
        made.update(size=size, generate_s=round(time.perf_counter() - start, 1))
        stamp.write_text(json.dumps(made))
    out = subprocess.run([sys.executable, "-c", MEASURE, str(folder), str(HERE.parent)],
                         capture_output=True, text=True, check=True)
    figures = {"folder_mb": round(made["bytes"] / 2**20, 1), "subagent_files": made["subagents"],
               **json.loads(out.stdout.strip().splitlines()[-1])}
    figures["peak_rss_per_folder_mb"] = round(figures["peak_rss_mb"] / figures["folder_mb"], 2)
    print(json.dumps(figures, indent=1))
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
