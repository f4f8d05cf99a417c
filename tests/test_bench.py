"""A tiny run of the benchmark, so it cannot rot, and the shape of the sessions it generates."""

import json
import os
import subprocess
import sys

from conftest import REPO
from test_cache_store import kept_entries

sys.path.insert(0, str(REPO / "benchmarks"))

import bench  # noqa: E402
from generate import generate  # noqa: E402
from probes import EXPECTED_STATUS, SERVER_ROWS, percentile  # noqa: E402

# Every measure the issue asks for, as the table names it.
TABLE_ROWS = [
    "cold ingest (s)", "cold ingest (events/s)", "naive baseline (events/s)", "speed against the baseline",
    "cold ingest (events per CPU second)", "naive baseline (events per CPU second)",
    "peak RSS (MB)", "peak RSS / file size", "naive baseline peak RSS / file size", "peak RSS against the baseline",
    "session page", "agent page, first page", "agent page, late page", "dialog of 3 agents", "message page",
    "events poll, nothing new", "events poll, 100 new events", "search: one common word",
    "live latency p50 / p95", "pollers at 1 Hz: server CPU", "idle server CPU",
]
TARGETS = ["ingest", "memory", "pages", "poll", "latency", "pollers"]


def test_benchmark_runs_on_a_small_session(tmp_path):
    out = tmp_path / "results.json"
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench.py"), "--sizes", "2k", "--agents", "24", "--runs", "2",
         "--live-samples", "3", "--pollers", "5", "--json", str(out), "--workdir", str(tmp_path),
         "--poll-seconds", "2"],  # two polls each expected: at least one each holds even on a loaded machine
        capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0, result.stderr
    table = result.stdout
    for row in TABLE_ROWS:
        assert f"\n{row}" in table or f"\n  {row}" in table, row
    assert "WARNING" not in table  # every row answered its expected status
    assert table.count(" missed") + table.count(" met (") == len(TARGETS)

    report = json.loads(out.read_text())
    assert report["machine"]["cpus"] >= 1 and report["date"]
    [size] = report["sizes"]
    assert size["label"] == "2k" and 2000 <= size["events"] < 2010 and size["agents"] == 24
    assert size["ingest"]["events_per_s"] > 0 and size["baseline"]["events"] == size["events"]
    assert size["ingest"]["peak_rss"] > size["ingest"]["rss_before"] > 0
    assert size["ratios"]["ingest_speed"] > 0 and size["ratios"]["peak_rss"] > 0
    assert size["unexpected_status"] == {}
    for key, _, _ in SERVER_ROWS:
        row = size["server_ms"][key]
        assert row["status"] == EXPECTED_STATUS[key] and 0 < row["p50"] <= row["p95"] and row["samples"] == 2, key
        assert 0 <= row["cpu_p50"] <= row["cpu_p95"], key
    assert size["live"]["latency_ms"]["samples"] == 3
    pollers = size["live"]["pollers"]
    assert pollers["pollers"] == 5 and pollers["requests"] >= 5 and pollers["errors"] == 0
    assert set(pollers["statuses"]) <= {"200", "204"}
    assert [t["key"] for t in size["targets"]] == TARGETS
    assert not list(tmp_path.glob("agentview-bench-*"))  # the generated sessions are removed

    shown = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench.py"), "--markdown", str(out)],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    for row in TABLE_ROWS:
        assert any(line.startswith((f"| {row}", f"| &nbsp;&nbsp;{row}")) for line in lines), row
    verdicts = lines[lines.index("| target | 2k events |") + 2:]
    assert len(verdicts) == len(TARGETS) and all(": met" in v or ": missed" in v for v in verdicts)


def test_generated_session_has_the_shape_the_issue_asks_for(tmp_path):
    path = tmp_path / "s.jsonl"
    facts = generate(path, 20_000, agents=200)
    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(events) == facts["events"] >= 20_000
    by_id = {e["message_id"]: e for e in events}
    assert len(by_id) == len(events)

    parents = {e["agent_id"]: by_id[e["cause"]]["agent_id"] for e in events
               if e["event_type"] == "agent_created" and "cause" in e}
    assert len(parents) + 1 == facts["agents"] == 200

    def depth(agent):
        return 0 if agent not in parents else 1 + depth(parents[agent])
    assert max(depth(a) for a in parents) == 4

    deliveries = [e for e in events if "substance" in e]
    assert all(e["substance"] in by_id for e in deliveries) and len(deliveries) > len(events) / 3
    assert {by_id[e["substance"]]["event_type"] for e in deliveries} == {"transcript_entry", "piece_of_text"}
    calls = {(e["agent_id"], c["id"]) for e in events for c in e.get("tool_calls", ())}
    results = [(e["agent_id"], e["tool_call_id"]) for e in events if "tool_call_id" in e]
    assert set(results) == calls and len(results) > 1000

    said = [len(e["content"]) for e in events if e.get("role") == "assistant" and "content" in e]
    assert 50 <= min(said) and max(said) <= 2000 and max(said) > 1500
    busiest = sum(e["agent_id"] == facts["busiest"] and e["event_type"] == "transcript_entry" for e in events)
    assert busiest == facts["busiest_entries"] and 0.18 < busiest / len(events) < 0.22
    assert by_id[facts["message"]]["role"] == "assistant"


def test_profile_helper_runs_in_every_mode(tmp_path):
    generate(tmp_path / "s.jsonl", 2_000, agents=24)
    for mode, expected in [("cpu", "cold ingest under the profiler"), ("parts", "cold ingest, cyclic GC off"),
                           ("memory", "session s:")]:
        result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "profile_ingest.py"), mode, str(tmp_path)],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert expected in result.stdout, mode
    assert "  events " in result.stdout  # the memory report names the session's parts


def test_the_pricing_benchmark_sums_a_small_session():
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "price_rate.py"), "--events", "2000",
                             "--repeat", "1"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert "cost of 1000 responses summed in" in result.stdout and "no price: ['mystery-model-1']" in result.stdout


def test_the_words_probe_builds_and_merges_every_run_of_a_session(tmp_path):
    generate(tmp_path / "s.jsonl", 3_000, agents=24)
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "probes.py"), "words", str(tmp_path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    words = json.loads(result.stdout)
    assert words["events"] == 3_000 and words["runs_merged"] == 6 and words["runs_left_to_the_server"] == 0
    assert words["build_us_per_event"] > 0 and words["merge_us_per_event"] > 0


def test_the_soak_figures_are_read_from_what_the_soak_test_prints():
    printed = ("\nsoak: 150029 events in 30 s (5000/s) to 3 sessions, 50 pollers, 3394 polls, slowest answer 0.602 s\n"
               "  0.602 s /s/gamma/poll/agent?agent=agent_3&after=0-41748 at 26.7 s\n.\n1 passed in 48.1s\n")
    assert bench.soak_figures(printed, 0) == {"passed": True, "events": 150029, "pollers": 50, "polls": 3394,
                                              "slowest_s": 0.602}
    assert bench.soak_figures(printed, 1)["passed"] is False  # it lost or repeated an event
    assert bench.soak_figures("ERROR collecting", 2) == {"passed": False, "output": "ERROR collecting"}
    source = (REPO / "tests" / "test_soak.py").read_text()  # the line it parses is the one the test prints
    assert 'f"\\nsoak: {total} events in {SECONDS} s ({rate:.0f}/s) to {len(SESSIONS)} sessions, ' in source


def test_percentile_is_the_nearest_rank():
    samples = list(range(1, 21))  # 1..20
    assert percentile(samples, 95) == 19 and percentile(samples, 50) == 10 and percentile(samples, 100) == 20
    assert percentile([7.0], 95) == 7.0


def test_the_real_size_benchmark_runs_on_a_small_session(tmp_path):
    """The real-size measures: a real server started twice on a long-content session (cold, then on its cache)."""
    out = tmp_path / "results.json"
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench.py"), "--sizes", "", "--real-size", "3k", "--agents", "24",
         "--startup-seconds", "2", "--json", str(out), "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "its goals:" in result.stdout
    real = json.loads(out.read_text())["real_size"]
    assert real["events"] >= 3000 and real["ingest"]["events"] == real["events"]
    assert 0 < real["ingest"]["share_of_parse_rate"] < 1
    first, again = real["startup"]["first"], real["startup"]["restart"]
    for run in (first, again):
        assert run["errors"] == [] and run["pages_ms"]["samples"] > 0 and run["polls_ms"]["samples"] > 0
        assert 0 <= run["listed_s"] <= run["read_s"] <= run["search_s"]
        slow = run["slow_polls"]  # every poll over 5 ms, and what it overlapped
        assert slow["polls"] == run["polls_ms"]["samples"] and 0 <= slow["alone"] <= slow["slow"] <= slow["polls"]
    assert "kept_s" in first  # the first run kept the session, so the restart could take it from the cache
    assert len(real["targets"]) == 10 and all(t["verdict"] for t in real["targets"])
    assert real["soak"] is None and not real["targets"][-1]["met"]  # not asked for: never counted as met
    rendering = real["rendering"]  # entries rendered per CPU second, cold and warm, beside a reference
    assert rendering["cold"]["entries"] > 0 and rendering["warm"]["entries"] == rendering["cold"]["entries"]
    assert 0 < rendering["cold"]["entries_per_cpu_s"] and 0 < rendering["plain_jinja"]["entries_per_cpu_s"]
    assert "rendering >= 10,000 entries/CPU s" in result.stdout


def test_a_light_start_asks_for_nothing_but_the_listing_and_the_search(tmp_path):
    facts = generate(tmp_path / "s.jsonl", 3_000, agents=24, shape="long")
    out = tmp_path / "light.json"
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "startup.py"), str(tmp_path), "s",
                             str(facts["events"]), "--seconds", "2", "--light", "--json", str(out)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    for run in json.loads(out.read_text())["first"], json.loads(out.read_text())["restart"]:
        assert 0 <= run["listed_s"] <= run["read_s"] <= run["search_s"]
        assert run["pages_ms"]["samples"] == run["polls_ms"]["samples"] == run["slow_polls"]["polls"] == 0
        assert "tree_s" not in run  # no page asked for


def test_page_times_times_each_url_cold_or_not(tmp_path):
    generate(tmp_path / "s.jsonl", 2_000, agents=24)
    for extra in ([], ["--cold"]):
        result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "page_times.py"), str(tmp_path),
                                 "/search?q=cache+memo", "/s/s/agents/a1", "--runs", "3", *extra],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert [line.split()[0] for line in lines] == ["/search?q=cache+memo", "/s/s/agents/a1"]
        assert all(" wall p50 " in line and " CPU p50 " in line and line.endswith(" · 200") for line in lines)


def test_page_ab_alternates_checkouts_and_compares_the_last_with_the_first(tmp_path):
    generate(tmp_path / "s.jsonl", 2_000, agents=24)
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "page_ab.py"), str(tmp_path), str(REPO),
                             str(REPO), "--urls", "/s/s/agents/a1", "/", "--batches", "2"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    head, *rows = result.stdout.splitlines()
    assert head.startswith("2 batches of 10 requests, load ")
    assert [row.split(": ")[0] for row in rows] == ["/s/s/agents/a1", "/"]
    assert all(row.count(f" {REPO.name} ") == 2 and "(last vs first: min " in row for row in rows)


def test_the_claude_folder_targets_are_measured_on_a_small_folder(tmp_path):
    """The Claude Code folder's goals, on a tiny folder: a real server started twice, the second on the cache."""
    out = tmp_path / "results.json"
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench.py"), "--sizes", "", "--claude-folder", "2M",
         "--claude-sessions", "20", "--claude-subagents", "4", "--claude-timeout", "120", "--json", str(out),
         "--workdir", str(tmp_path)], capture_output=True, text=True, timeout=400)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("  ")]
    assert len(lines) == 3 and all(" met (" in line or " missed" in line for line in lines), result.stdout
    claude = json.loads(out.read_text())["claude_folder"]
    first, again = claude["startup"]["first"], claude["startup"]["restart"]
    assert first["listed"] == again["listed"] == 20 and first["all_read_s"] >= 0 and again["all_read_s"] >= 0
    assert first["idle_s"] >= first["all_read_s"] and again["peak_rss"] > 0


def test_folder_start_measures_restarts_alone_on_a_cache_left_before(tmp_path):
    """`folder_start.py --restarts N`: N starts of a real server on a cache a first start left (here a Library of
    the same folder, read and idle), each timed until every session is listed and read."""
    from generate_claude import generate
    from test_claude_settled import age

    from viewer.library import background
    from viewer.library.library import Library
    from viewer.store.session_cache import SessionCache

    folder = tmp_path / "logs"
    generate(folder / "-home-dev-p", 1 << 20, subagents=2, sessions=6)
    age(folder)
    library = Library(folder, cache=SessionCache(str(tmp_path / "home" / "agentview" / "sessions")))
    library.scan()
    while background.step(library):
        pass
    kept = kept_entries(tmp_path / "home" / "agentview" / "sessions")
    entries = {path for path, _, _ in kept}  # files of their own and the packs holding the others
    for entry in entries:  # dated back: an entry a restart takes is touched
        os.utime(entry, (1, 1))
    out = tmp_path / "restarts.json"
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "folder_start.py"), str(folder), "6", "--restarts", "2",
         "--cache-home", str(tmp_path / "home"), "--timeout", "60", "--json", str(out)],
        capture_output=True, text=True, timeout=200)
    assert result.returncode == 0, result.stderr
    restarts = json.loads(out.read_text())["restarts"]
    assert len(restarts) == 2 and all(r["listed"] == 6 and r["all_read_s"] >= 0 for r in restarts)
    # each taken from the cache: the folder's entry read (its words' touched), each session's touched by the check
    # after it (folder_cache)
    assert len(kept) == 8 and all(entry.stat().st_mtime > 1 for entry in entries)


def test_cold_read_counts_every_event_of_a_folder_and_its_cpu(tmp_path):
    """`cold_read.py FOLDER`: a whole read of a Claude Code folder in one process, its events and CPU per event."""
    from generate_claude import generate

    folder = tmp_path / "logs"
    generate(folder / "-home-dev-p", 1 << 18, subagents=1, sessions=3)
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "cold_read.py"), str(folder)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    from viewer.library.library import Library

    library = Library(folder)
    library.scan()
    events = sum(s.count for s in library.listing())  # what a server lists once it read the folder
    counted = int(result.stdout.split(" events;")[0].rsplit(" ", 1)[-1].replace(",", ""))
    assert counted == events > 0 and "µs an event" in result.stdout


def test_first_walk_lists_every_session_of_a_folder_before_its_walk_is_over(tmp_path):
    """`first_walk.py FOLDER`: a first walk in one process, timed until every session is listed and until it ends;
    none of its groups read."""
    from claude_projects import generate

    folder = generate(tmp_path, sessions=12, projects=2)["projects_folder"]
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "first_walk.py"), str(folder)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert ": 12 sessions (12 groups); every one listed after " in result.stdout
    listed = float(result.stdout.split("listed after ")[1].split(" s CPU")[0])
    over = float(result.stdout.split("over after ")[1].split(" s CPU")[0])
    assert 0 <= listed <= over


def test_status_asks_counts_a_folder_read_cold_while_it_is_asked(tmp_path):
    """`status_asks.py FOLDER`: `/api/status`'s count asked every 0.1 s while a folder is read; the last count made
    lists every session of the folder."""
    from claude_projects import generate

    folder = generate(tmp_path, sessions=40, projects=2)["projects_folder"]
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "status_asks.py"), str(folder)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    asks = int(result.stdout.split(": ")[1].split(" asks")[0])
    assert asks >= 1 and " ms an ask); last {'sessions': " in result.stdout
    assert int(result.stdout.split("'sessions': ")[1].split(",")[0]) <= 40


def test_cold_read_parts_gives_each_part_its_own_cpu_and_no_more_than_the_whole(tmp_path):
    """`cold_read_parts.py FOLDER`: the same read, its CPU by part; a part called inside another (usage totals while
    a session is kept) is counted once, so the parts never add up to more than the whole."""
    from claude_projects import generate

    folder = generate(tmp_path, sessions=12, projects=2)["projects_folder"]  # sessions of months ago: kept at once
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "cold_read_parts.py"), str(folder)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    head, *rows = result.stdout.strip().splitlines()
    total = float(head.split("total ")[1].split(" s CPU")[0])  # cold_read's own line
    spent = {row.split("%  ")[1]: float(row.split(" s ")[0]) for row in rows}
    rest = spent.pop("the rest (the scan, imports, steps)")
    assert all(spent[part] > 0 for part in ("parsing and normalizing lines", "search words and postings",
                                            "packing postings", "usage totals", "saving sessions to the cache"))
    assert min(spent.values()) >= 0 and rest >= 0 and sum(spent.values()) <= total


def test_cold_read_reads_in_its_own_process_alone_with_no_read_workers(tmp_path):
    """`cold_read.py FOLDER --read-workers 0`: every session read in the one process timed (its CPU is the whole
    read's); with a worker, enough sessions to want one are partly read by it, and every one with --handed-over."""
    from claude_projects import generate

    folder = generate(tmp_path, sessions=70, projects=2)["projects_folder"]  # above Tuning.read_pool_from
    read_by_workers = {}
    for workers in ("0", "1", "1 --handed-over"):
        result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "cold_read.py"), str(folder),
                                 "--read-workers", *workers.split()], capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, result.stderr
        read_by_workers[workers] = int(result.stdout.rsplit(" sessions read by them", 1)[0].rsplit(" ", 1)[-1])
    assert read_by_workers["0"] == 0 and 0 < read_by_workers["1"] and read_by_workers["1 --handed-over"] == 70


def test_cold_read_seen_reads_another_folder_first_and_times_only_its_own(tmp_path):
    """`cold_read.py FOLDER --seen OTHER`: OTHER is read first into the same cache, in a process of its own whose
    CPU is neither the timed process's nor its workers'; the events counted are FOLDER's."""
    from claude_projects import generate

    folder = generate(tmp_path / "new", sessions=6, projects=1)["projects_folder"]
    other = generate(tmp_path / "seen", sessions=30, projects=2)["projects_folder"]
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "cold_read.py"), str(folder), "--seen",
                             str(other), "--read-workers", "0"], capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    from viewer.library.library import Library

    library = Library(folder)
    library.scan()
    counted = int(result.stdout.split(" events;")[0].rsplit(" ", 1)[-1].replace(",", ""))
    assert counted == sum(s.count for s in library.listing()) > 0
    assert "worker processes 0.00 s CPU, 0 sessions read by them" in result.stdout


def test_listing_lists_every_session_of_a_folder_without_reading_one(tmp_path):
    """`listing.py FOLDER`: the walk alone, every group listed and none read, then the list's answers timed."""
    from claude_projects import generate

    folder = generate(tmp_path, sessions=12, projects=2)["projects_folder"]
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "listing.py"), str(folder)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"{REPO}: 12 listed; walk " in result.stdout and "/api/sessions " in result.stdout
