"""Measurements that need a process of their own, so its peak resident memory is theirs alone.

    python benchmarks/probes.py baseline FILE
    python benchmarks/probes.py agentview FOLDER SESSION_ID FACTS_JSON RUNS
    python benchmarks/probes.py words FOLDER

Each prints one JSON object on stdout. `baseline` is the naive reader the figures are compared
with; `agentview` ingests the folder cold (create_app without a watcher), then times the pages
with the Flask test client (server time, no network).
"""

from __future__ import annotations

import json
import math
import os
import resource
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def rss_now() -> int:
    """This process's resident memory now, in bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def rss_peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def percentile(samples: list[float], q: float) -> float:
    """The q-th percentile, nearest rank (p95 of 20 samples is the 19th smallest)."""
    ordered = sorted(samples)
    return ordered[max(0, min(len(ordered), math.ceil(q / 100 * len(ordered))) - 1)]


def cpu_seconds() -> float:
    """CPU time this process has used (user + system, all threads): unlike wall time, not
    stretched while other processes hold the cores."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def summary(samples: list[float]) -> dict:
    if not samples:
        return {"p50": None, "p95": None, "max": None, "samples": 0}
    return {"p50": round(statistics.median(samples), 3), "p95": round(percentile(samples, 95), 3),
            "max": round(max(samples), 3), "samples": len(samples)}


def baseline(path: str) -> dict:
    """The naive reader: json.loads of every line into a list of dicts, plus dict indexes."""
    before = rss_now()
    start, cpu = time.perf_counter(), cpu_seconds()
    events: list[dict] = []
    by_id: dict[str, int] = {}
    by_agent: dict[str, list[int]] = {}
    references: dict[str, list[int]] = {}
    calls: dict[tuple[str, str], int] = {}
    with open(path, "rb") as f:
        for position, line in enumerate(f):
            event = json.loads(line)
            events.append(event)
            by_id[event["message_id"]] = position
            by_agent.setdefault(event["agent_id"], []).append(position)
            if "substance" in event:
                references.setdefault(event["substance"], []).append(position)
            for call in event.get("tool_calls") or ():
                calls[(event["agent_id"], call["id"])] = position
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    return {"events": len(events), "seconds": seconds, "events_per_s": len(events) / seconds,
            "cpu_seconds": cpu, "events_per_cpu_s": len(events) / cpu, "rss_before": before, "peak_rss": rss_peak()}


# (key, label, URL template): the server-time rows. Filled from the facts of the session.
SERVER_ROWS = [
    ("session_page", "session page", "/s/{sid}"),
    ("agent_first", "agent page, first page ({busiest}, {entries:,} entries)", "/s/{sid}/agents/{busiest}"),
    ("agent_late", "agent page, late page (start={late:,})", "/s/{sid}/agents/{busiest}?start={late}"),
    ("agent_filtered", "agent page, filtered (kind=said)", "/s/{sid}/agents/{busiest}?kind=said"),
    ("agent_did", "agent page, filtered (kind=did: calls with their results)", "/s/{sid}/agents/{busiest}?kind=did"),
    ("agent_tool", "agent page, filtered (tool=search)", "/s/{sid}/agents/{busiest}?tool=search"),
    ("agent_modified", "agent page, filtered (modified deliveries)", "/s/{sid}/agents/{busiest}?modified=1"),
    ("dialog", "dialog of 3 agents ({busiest},a2,a3)", "/s/{sid}/dialog?agents={busiest},a2,a3"),
    ("hooks", "hook audit", "/s/{sid}/hooks"),
    ("chart", "chart, first window", "/s/{sid}/chart"),
    ("chart_agents", "chart of 3 agents", "/s/{sid}/chart?agents={busiest},a2,a3"),
    ("spawn", "spawn graph", "/s/{sid}/spawn"),
    ("as_of_step", "session page as of N, one event on from N-1 (N={half:,}+)", "/s/{sid}?at={step}"),
    ("message_page", "message page ({message})", "/s/{sid}/messages/{message}"),
    ("events_nothing_new", "events poll, nothing new", "/api/sessions/{sid}/events?after={cursor}"),
    ("events_100_new", "events poll, 100 new events", "/api/sessions/{sid}/events?after={epoch}-{before100}"),
    ("poll_tree", "page poll, nothing new (tree)", "/s/{sid}/poll/tree?after={cursor}"),
    ("poll_agent", "page poll, nothing new (agent)", "/s/{sid}/poll/agent?agent={busiest}&after={cursor}"),
    ("search_word", "search: one common word, first 50", "/api/search?q=cache"),
    ("search_words", "search: three words", "/api/search?q=cache+latency+memo"),
    ("search_phrase", "search: phrase", "/api/search?q=%22review+claim+latency%22"),
    ("search_budget", "search: rare phrase, common words (budget)", "/api/search?q=%22memo+memo+memo+memo%22"),
    ("search_prefix", "search: prefix", "/api/search?q=lat*+draft"),
    ("search_qualified", "search: agent: + role: + word", "/api/search?q=agent:a17+role:heard+review"),
    ("search_tool", "search: tool: qualifier", "/api/search?q=tool:task"),
    ("search_none", "search: no hits", "/api/search?q=cache+nowhere"),
    ("search_page", "search page (HTML), session scope", "/search?q=cache+memo&session={sid}"),
    ("search_poll", "search poll, nothing new", "/search/poll?q=cache&after={sid}={cursor}"),
]
# The page polls answer 204 when there is nothing new; every other row answers 200.
EXPECTED_STATUS = {key: 204 if key in ("poll_tree", "poll_agent", "search_poll") else 200 for key, _, _ in SERVER_ROWS}


def agentview(folder: str, session_id: str, facts: dict, runs: int) -> dict:
    """Cold ingest of the folder, then p50/p95 server times of every row."""
    sys.path.insert(0, str(REPO))
    from viewer.web.app import create_app

    before = rss_now()
    start, cpu = time.perf_counter(), cpu_seconds()
    app = create_app(folder, watch=False)
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    # The search index and the facets are built after ingest (in the background when serving): timed on
    # their own, and counted in the peak memory.
    index_start, index_cpu = time.perf_counter(), cpu_seconds()
    for session in app.extensions["agentview"].library.listing():
        session.facets.catch_up(session.count)
        session.search.catch_up(session.count)
    index_seconds, index_cpu = time.perf_counter() - index_start, cpu_seconds() - index_cpu
    peak = rss_peak()  # read now: the pages below must not count as ingest memory
    client = app.test_client()
    about = client.get(f"/api/sessions/{session_id}").get_json()
    busiest = max(about["agents"], key=lambda a: a["entries"])
    epoch, _, count = about["cursor"].partition("-")
    values = {"sid": session_id, "busiest": busiest["agent_id"], "entries": busiest["entries"],
              "late": max(0, busiest["entries"] - 200), "message": facts["message"], "cursor": about["cursor"],
              "epoch": epoch, "before100": max(0, int(count) - 100), "half": int(count) // 2}
    # The first "as of N" replays N events; later ones start from the nearest earlier snapshot.
    t, c = time.perf_counter(), cpu_seconds()
    client.get(f"/s/{session_id}?at={values['half']}")
    as_of_first = {"seconds": time.perf_counter() - t, "cpu_seconds": cpu_seconds() - c, "n": values["half"]}
    rows = {}
    for key, label, template in SERVER_ROWS:
        url = template.format(**values, step=values["half"])
        status = client.get(url).status_code  # the first request builds caches and compiles templates
        samples, cpu_samples = [], []
        for run in range(runs):
            url = template.format(**values, step=values["half"] + 1 + run)  # only as_of_step changes
            t, c = time.perf_counter(), cpu_seconds()
            response = client.get(url)
            samples.append((time.perf_counter() - t) * 1000)
            cpu_samples.append((cpu_seconds() - c) * 1000)
            status = response.status_code
        cpu_ms = summary(cpu_samples)
        rows[key] = {"label": label.format(**values), "url": url, "status": status, **summary(samples),
                     "cpu_p50": cpu_ms["p50"], "cpu_p95": cpu_ms["p95"]}
    return {"events": about["events"], "agents": about["agents"] and len(about["agents"]),
            "busiest": busiest["agent_id"], "busiest_entries": busiest["entries"],
            "seconds": seconds, "events_per_s": about["events"] / seconds,
            "index_seconds": index_seconds, "index_cpu_seconds": index_cpu,
            "cpu_seconds": cpu, "events_per_cpu_s": about["events"] / cpu,
            "rss_before": before, "peak_rss": peak, "server_ms": rows, "as_of_first": as_of_first}


def ingest(folder: str) -> dict:
    """The ingest goal: agentview's cold ingest of the folder against parsing alone (orjson.loads of every
    line, the floor any reader pays), both in this process, in CPU seconds (another busy process barely moves it)."""
    sys.path.insert(0, str(REPO))
    import orjson

    from viewer.library.library import Library

    lines = 0
    cpu = cpu_seconds()
    for path in sorted(Path(folder).glob("*.jsonl")):
        with open(path, "rb") as f:
            for line in f:
                if line.strip():
                    orjson.loads(line)
                    lines += 1
    parse_cpu = cpu_seconds() - cpu
    before = rss_now()
    start, cpu = time.perf_counter(), cpu_seconds()
    library = Library(folder)
    library.scan()
    seconds, ingest_cpu = time.perf_counter() - start, cpu_seconds() - cpu
    events = sum(s.count for s in library.sessions.values())
    return {"lines": lines, "events": events, "parse_cpu_seconds": parse_cpu, "parse_per_cpu_s": lines / parse_cpu,
            "seconds": seconds, "cpu_seconds": ingest_cpu, "events_per_cpu_s": events / ingest_cpu,
            "share_of_parse_rate": (events / ingest_cpu) / (lines / parse_cpu),
            "rss_before": before, "peak_rss": rss_peak()}


def words(folder: str) -> dict:
    """The search index of a big native session built with the worker (search_worker), in CPU µs an event: the
    worker's build of each run (`_build`, here in this process), and the ingest thread's merge of the runs a real
    worker process builds (`WordWorker.step`, this thread's CPU time) once the folder is read."""
    sys.path.insert(0, str(REPO))
    import gc
    from array import array

    from viewer.search import worker as search_worker
    from viewer.library.library import Library

    library = Library(folder)
    library.scan()
    s = max(library.sessions.values(), key=lambda session: session.count)
    gc.freeze()  # the session's objects: the build's collections walk only its own
    fd = os.open(s.path, os.O_RDONLY)
    build_cpu = 0.0
    try:
        for start in range(0, s.count, search_worker.JOB_EVENTS):
            stop = min(start + search_worker.JOB_EVENTS, s.count)
            _, offsets, lengths = s.events.file_spans(start, stop)
            cpu = cpu_seconds()
            search_worker._build(fd, start, array("q", offsets), array("I", lengths))
            build_cpu += cpu_seconds() - cpu
    finally:
        os.close(fd)
    worker = search_worker.WordWorker(min_behind=1)  # every run to the worker, however small the session
    merge_cpu, start = 0.0, time.perf_counter()
    try:
        while s.search.indexed < s.count:
            cpu = time.thread_time()
            step = worker.step(s)
            merge_cpu += time.thread_time() - cpu
            if step is None:
                worker.wait(5)
            elif step is False:
                break
    finally:
        worker.stop()
    return {"events": s.count, "build_us_per_event": build_cpu / s.count * 1e6,
            "merge_us_per_event": merge_cpu / s.count * 1e6, "index_seconds": time.perf_counter() - start,
            "runs_merged": worker.merged, "runs_left_to_the_server": worker.left}


def report(result: dict, json_path: str | None) -> None:
    """Print a benchmark's result as JSON, and write it to `json_path` too when given."""
    text = json.dumps(result, indent=2)
    print(text)
    if json_path:
        Path(json_path).write_text(text)


def main(argv: list[str]) -> None:
    if argv[0] == "ingest":
        result = ingest(argv[1])
    elif argv[0] == "words":
        result = words(argv[1])
    elif argv[0] == "baseline":
        result = baseline(argv[1])
    elif argv[0] == "agentview":
        result = agentview(argv[1], argv[2], json.loads(argv[3]), int(argv[4]))
    else:
        raise SystemExit(f"unknown probe {argv[0]!r}")
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
