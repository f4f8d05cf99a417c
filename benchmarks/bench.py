"""Measure ingest and page/poll server times on a generated native session.

    .venv/bin/python benchmarks/bench.py [--events 100000] [--agents 200]

Prints a table: cold ingest (events/s, search index included), peak RSS against the file size,
and p50/p95 server times (Flask test client, no network) of the pages, of a poll with nothing
new, and of searches (GET /api/search: first page of 50 hits).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from viewer.app import create_app  # noqa: E402


def generate(path: Path, events: int, agents: int) -> None:
    """A root spawning `agents` agents over 4 levels, then broadcasts, deliveries and tool calls."""
    rng = random.Random(1)
    words = "cache tool agent plan result search draft review claim latency memo hit miss".split()
    n = 0
    with open(path, "w") as f:
        def emit(**event):
            nonlocal n
            n += 1
            event = {"message_id": f"msg_{n}", **event}
            f.write(json.dumps(event) + "\n")
            return event["message_id"]

        def text():
            return " ".join(rng.choice(words) for _ in range(rng.randint(8, 300)))

        emit(event_type="agent_created", agent_id="a0", name="Root")
        ids = ["a0"]
        for i in range(1, agents):
            parent = ids[max(0, (i - 1) // 4)]
            call = emit(event_type="transcript_entry", agent_id=parent, role="assistant",
                        tool_calls=[{"id": f"t{i}", "function": {"name": "task", "arguments": json.dumps({"name": f"A{i}"})}}])
            emit(event_type="agent_created", agent_id=f"a{i}", cause=call, name=f"A{i}")
            emit(event_type="transcript_entry", agent_id=parent, role="tool", tool_call_id=f"t{i}", content="ok")
            ids.append(f"a{i}")
        while n < events:
            speaker = rng.choice(ids)
            said = emit(event_type="transcript_entry", agent_id=speaker, role="assistant", content=text())
            for listener in rng.sample(ids, 3):
                emit(event_type="transcript_entry", agent_id=listener, role="user",
                     content=f"[{speaker}]: ...", substance=said)


def timed(client, url: str, runs: int) -> tuple[float, float, int]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        response = client.get(url)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1], response.status_code


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.jsonl"
        generate(path, args.events, args.agents)
        size = path.stat().st_size
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        start = time.perf_counter()
        app = create_app(folder, watch=False)
        seconds = time.perf_counter() - start
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        session = app.extensions["agentview"].library.get("bench")
        print(f"{session.count} events, {len(session.agents)} agents, {size / 1e6:.1f} MB")
        print(f"cold ingest: {seconds:.2f} s = {session.count / seconds:,.0f} events/s")
        print(f"peak RSS growth: {(rss - rss_before) / 1e6:.0f} MB = {(rss - rss_before) / size:.1f}x the file")
        client = app.test_client()
        busiest = max(session.agents.values(), key=lambda a: len(a.entries)).agent_id
        cursor = session.cursor
        print(f"{'server time (ms)':<44} {'p50':>7} {'p95':>7}")
        for label, url in [
            ("session page", "/s/bench"),
            (f"agent page, first page ({busiest})", f"/s/bench/agents/{busiest}"),
            ("agent page, late page", f"/s/bench/agents/{busiest}?start={len(session.agents[busiest].entries) - 200}"),
            ("agent page, filtered (kind=said)", f"/s/bench/agents/{busiest}?kind=said"),
            ("dialog of 3 agents", "/s/bench/dialog?agents=a0,a1,a2"),
            ("message page", f"/s/bench/messages/msg_{session.count // 2}"),
            ("poll, nothing new (tree)", f"/s/bench/poll/tree?after={cursor}"),
            ("poll, nothing new (agent)", f"/s/bench/poll/agent?agent={busiest}&after={cursor}"),
            ("search: one common word, first 50", "/api/search?q=cache"),
            ("search: three words", "/api/search?q=cache+latency+memo"),
            ("search: phrase", "/api/search?q=%22review+claim+latency%22"),
            ("search: rare phrase, common words (budget)", "/api/search?q=%22memo+memo+memo+memo%22"),
            ("search: prefix", "/api/search?q=lat*+draft"),
            ("search: agent: + role: + word", "/api/search?q=agent:a17+role:heard+review"),
            ("search: tool: qualifier", "/api/search?q=tool:task"),
            ("search: no hits", "/api/search?q=cache+nowhere"),
            ("search page (HTML), session scope", "/search?q=cache+memo&session=bench"),
            ("poll, nothing new (search)", f"/search/poll?q=cache&after=bench={cursor}"),
        ]:
            p50, p95, status = timed(client, url, args.runs)
            print(f"{label:<44} {p50:7.2f} {p95:7.2f}  ({status})")


if __name__ == "__main__":
    main()
