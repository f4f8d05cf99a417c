#!/usr/bin/env python3
"""Comparing two runs of a multi-agent session: how long `compare` takes once both are read.

    .venv/bin/python benchmarks/compare_runs.py [--events 10000] [--agents 20] [--repeat 5]

Generates run A with generate.py (deterministic) and two runs B: A with one message changed halfway (two runs of
one system that part once: the common case) and another seed's session (nothing alike: the worst case for the
alignment). Reads each into an index, then times `reads.compare.compare` (median of --repeat) and the page's
JSON twin through the app. Goal: within 1 s for two 10,000-event sessions of 20 agents.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

GOAL = 1.0


def changed_halfway(source: Path, target: Path) -> None:
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    middle = len(lines) // 2
    while '"content": "' not in lines[middle]:
        middle += 1
    lines[middle] = lines[middle].replace('"content": "', '"content": "CHANGED ', 1)
    target.write_text("".join(lines), encoding="utf-8")


def main() -> None:
    from generate import generate
    from timing import arguments, median_time

    args = arguments(__doc__, 10_000, 20)

    from viewer.reads.compare import Run, compare
    from viewer.reads.session_viewer import load_index
    from viewer.web.app import create_app

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name in ("a", "b", "c"):
            (root / name).mkdir()
        generate(root / "a" / "run.jsonl", args.events, args.agents, seed=1)
        changed_halfway(root / "a" / "run.jsonl", root / "b" / "run.jsonl")
        generate(root / "c" / "run.jsonl", args.events, args.agents, seed=2)
        a, b, c = (load_index(root / name / "run.jsonl") for name in ("a", "b", "c"))
        print(f"{args.events:,} events, {args.agents} agents a run; median of {args.repeat}")
        for label, other in (("parting once halfway", b), ("nothing alike", c)):
            data = compare(Run(a), Run(other))
            seconds, cpu = median_time(lambda: compare(Run(a), Run(other)), args.repeat)
            changes = sum(not h["equal"] for p in data["pairs"] for h in p["hunks"])
            print(f"  {label:22} compare {seconds * 1000:7.1f} ms ({cpu * 1000:.1f} ms CPU; {len(data['pairs'])} "
                  f"pairs, {changes} changes, agree={data['agree']})  goal {GOAL:.0f} s: "
                  f"{'met' if seconds <= GOAL else 'MISSED'}")
        client = create_app(root, watch=False, cache_dir=None).test_client()
        client.get("/api/sessions")
        url = "/api/compare?a=a:run&b=b:run"
        assert client.get(url).status_code == 200
        seconds, cpu = median_time(lambda: client.get(url), args.repeat)
        print(f"  {'the JSON twin':22} GET /api/compare {seconds * 1000:7.1f} ms ({cpu * 1000:.1f} ms CPU; parting "
              "once, both read already)")


if __name__ == "__main__":
    main()
