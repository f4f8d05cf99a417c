"""The performance benchmark: generated native sessions of growing size, measured in one run.

    .venv/bin/python benchmarks/bench.py --sizes 10k,100k,1M --json results.json

For each size it writes a session (generate.py: 200 agents over 4 levels, broadcasts with
substance links, tool calls and results, content of 50-2,000 characters, one agent in a fifth
of the events) and measures:
- cold ingest (events/s, seconds) and peak resident memory against the file size, in a fresh
  process of its own; the naive baseline (json.loads of every line into a list of dicts plus
  dict indexes) the same way, so figures compare across machines as ratios;
- server time p50/p95 of the pages, the polls and searches (Flask test client, no network);
- against a real `agentview serve` process: end-to-end live latency (a line appended to the
  file until the events endpoint returns it) and the server's CPU time while 100 clients poll
  once a second.
It prints a table (with the goals: met, or missed by how much) and writes a JSON file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import folder_start  # noqa: E402
import generate  # noqa: E402
import generate_claude  # noqa: E402
import live  # noqa: E402
import startup  # noqa: E402
from probes import EXPECTED_STATUS, SERVER_ROWS  # noqa: E402

SESSION_ID = "bench"
MB = 1e6
# The pages a person opens (target: p95 at most 100 ms), and the cheap "nothing new" polls (2 ms).
PAGES = ["session_page", "agent_first", "agent_late", "agent_filtered", "agent_did", "agent_tool", "agent_modified",
         "dialog", "hooks", "chart", "chart_agents", "spawn", "as_of_step", "message_page", "search_page"]
NOTHING_NEW_POLLS = ["events_nothing_new", "poll_tree", "poll_agent", "search_poll"]


def parse_size(text: str) -> int:
    """'10k' -> 10000, '1M' -> 1000000, '2500' -> 2500."""
    text = text.strip()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def machine() -> dict:
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        memory = int(f.readline().split()[1]) * 1024
    return {"cpus": os.cpu_count(), "cpu_model": model, "memory_bytes": memory,
            "system": f"{platform.system()} {platform.release()}", "python": platform.python_version()}


def probe(*args: str) -> dict:
    """One measurement in a fresh Python process (its peak RSS is its own)."""
    result = subprocess.run([sys.executable, str(Path(__file__).resolve().parent / "probes.py"), *args],
                            capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"probe {args[0]} failed:\n{result.stderr}")
    return json.loads(result.stdout)


def ratio_verdict(value: float, limit: float, higher_is_better: bool = False) -> str:
    """'met (3.1x margin)' or 'missed by 2.4x'."""
    if value <= 0:
        return "met (none measured)" if not higher_is_better else "missed (none measured)"
    factor = value / limit if higher_is_better else limit / value
    if factor == 0:  # a time that never came (a figure missing is taken as infinite)
        return "missed (not measured)"
    digits = 2 if 0.5 < factor < 2 else 1  # 99 ms against 100 ms is a 1.01x margin, not 1.0x
    return f"met ({factor:.{digits}f}x margin)" if factor >= 1 else f"missed by {1 / factor:.{digits}f}x"


def targets(size: dict) -> list[dict]:
    """The goals (set for the 1M-event session), judged on one size's figures."""
    ingest, server, on_live = size["ingest"], size["server_ms"], size["live"]
    worst_page = max(PAGES, key=lambda k: server[k]["p95"])
    worst_poll = max(NOTHING_NEW_POLLS, key=lambda k: server[k]["p95"])
    rows = [
        ("ingest", "cold ingest at least 300k events/s", ingest["events_per_s"], 300_000, True,
         f"{ingest['events_per_s']:,.0f} events/s ({ingest['events_per_cpu_s']:,.0f} per CPU s)"),
        ("memory", "peak RSS at most 1.5x the file", ingest["rss_ratio"], 1.5, False,
         f"{ingest['rss_ratio']:.2f}x ({ingest['peak_rss'] / MB:,.0f} MB)"),
        ("pages", "every page p95 at most 100 ms", server[worst_page]["p95"], 100, False,
         f"worst: {server[worst_page]['label']}, {server[worst_page]['p95']:.1f} ms"),
        ("poll", "poll with nothing new p95 at most 2 ms", server[worst_poll]["p95"], 2, False,
         f"worst: {server[worst_poll]['label']}, {server[worst_poll]['p95']:.2f} ms"),
        ("latency", "live latency p95 at most 1 s", on_live["latency_ms"]["p95"], 1000, False,
         f"{on_live['latency_ms']['p95']:.0f} ms"),
        ("pollers", "100 pollers at 1 Hz at most 20% of one core", on_live["pollers"]["cpu_percent"], 20, False,
         f"{on_live['pollers']['cpu_percent']:.1f}% ({on_live['pollers']['pollers']} pollers)"),
    ]
    return [{"key": key, "target": text, "figure": shown, "value": value, "limit": limit,
             "met": value >= limit if higher else value <= limit,
             "verdict": ratio_verdict(value, limit, higher)} for key, text, value, limit, higher, shown in rows]


def run_size(events: int, label: str, args: argparse.Namespace, workdir: Path) -> dict:
    folder = workdir / label
    folder.mkdir()
    path = folder / f"{SESSION_ID}.jsonl"
    log(f"{label}: generating {events:,} events")
    t = time.perf_counter()
    facts = generate.generate(path, events, args.agents)
    facts["generate_seconds"] = round(time.perf_counter() - t, 2)
    size = path.stat().st_size
    log(f"{label}: {size / MB:,.1f} MB; naive baseline")
    loads = [os.getloadavg()]
    base = probe("baseline", str(path))
    log(f"{label}: agentview cold ingest and server times")
    mine = probe("agentview", str(folder), SESSION_ID, json.dumps(facts), str(args.runs))
    loads.append(os.getloadavg())
    log(f"{label}: real server: live latency, {args.pollers} pollers")
    on_live = live.measure(folder, SESSION_ID, mine["events"], mine["busiest"], args.live_samples, args.pollers,
                           args.poll_seconds)
    loads.append(os.getloadavg())
    path.unlink()
    for result in (base, mine):
        result["rss_growth"] = result["peak_rss"] - result["rss_before"]
        result["rss_ratio"] = result["peak_rss"] / size
        result["rss_growth_ratio"] = result["rss_growth"] / size
    result = {
        "label": label, "events": mine["events"], "bytes": size, "agents": mine["agents"],
        "busiest": mine["busiest"], "busiest_entries": mine["busiest_entries"], "generated": facts,
        "ingest": {k: mine[k] for k in ("seconds", "events_per_s", "cpu_seconds", "events_per_cpu_s", "rss_before",
                                          "peak_rss", "rss_growth", "rss_ratio", "rss_growth_ratio",
                                          "index_seconds", "index_cpu_seconds")},
        "baseline": base,
        "ratios": {"ingest_speed": mine["events_per_s"] / base["events_per_s"],
                   "ingest_cpu_speed": mine["events_per_cpu_s"] / base["events_per_cpu_s"],
                   "peak_rss": mine["peak_rss"] / base["peak_rss"],
                   "rss_growth": mine["rss_growth"] / base["rss_growth"]},
        "server_ms": mine["server_ms"], "as_of_first": mine["as_of_first"], "live": on_live,
        "load_average": [list(x) for x in loads],
    }
    result["targets"] = targets(result)
    result["unexpected_status"] = {k: r["status"] for k, r in mine["server_ms"].items()
                                   if r["status"] != EXPECTED_STATUS[k]}
    return result


def run_real_size(events: int, label: str, args: argparse.Namespace, workdir: Path) -> dict:
    """A real-size native session (content of 8-300 words), as a person starting the viewer feels it."""
    folder = workdir / f"real-{label}"
    folder.mkdir()
    path = folder / f"{SESSION_ID}.jsonl"
    log(f"real size {label}: generating {events:,} events (long content)")
    facts = generate.generate(path, events, args.agents, shape="long")
    log(f"real size {label}: {path.stat().st_size / MB:,.0f} MB; parse-only reference and cold ingest")
    ingest = probe("ingest", str(folder))
    log(f"real size {label}: a real server started twice (cold, then a restart on its cache)")
    started = startup.measure(folder, SESSION_ID, facts["events"], args.startup_seconds)
    path.unlink()
    # Rendering does not depend on the session's size: measured on a session of its own, at most 20k events.
    render_events = min(events, 20_000)
    log(f"real size {label}: rendering agent pages ({render_events:,} events, cold and warm)")
    rendered = render(render_events, workdir)
    if args.soak:
        log("soak: tests/test_soak.py (about a minute)")
    result = {"label": label, "events": facts["events"], "bytes": started["file_bytes"], "ingest": ingest,
              "startup": started, "rendering": rendered, "soak": soak() if args.soak else None}
    result["targets"] = real_size_targets(result)
    return result


# What tests/test_soak.py prints of its run.
SOAK_LINE = re.compile(r"soak: (?P<events>\d+) events in .*?, (?P<pollers>\d+) pollers, (?P<polls>\d+) polls, "
                       r"slowest answer (?P<slowest>[0-9.]+) s")


def soak() -> dict:
    """The soak test in a fresh process (tests/test_soak.py: 50 pollers of agent pages and the events API
    while 5,000 events/s are written for 30 s, through a real server), and its slowest answer as it prints it."""
    repo = Path(__file__).resolve().parent.parent
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                             str(repo / "tests" / "test_soak.py")], capture_output=True, text=True, cwd=repo)
    return soak_figures(result.stdout, result.returncode)


def soak_figures(output: str, returncode: int) -> dict:
    """The soak's figures from its output; a run that failed (lost or repeated an event) or printed none counts as
    not passed."""
    found = SOAK_LINE.search(output)
    if found is None:
        return {"passed": False, "output": output[-2000:]}
    return {"passed": returncode == 0, "events": int(found["events"]), "pollers": int(found["pollers"]),
            "polls": int(found["polls"]), "slowest_s": float(found["slowest"])}


def render(events: int, workdir: Path) -> dict:
    """render_rate.py in a fresh process: entries per CPU second, cold and warm, with its plain-Jinja reference."""
    result = subprocess.run([sys.executable, str(Path(__file__).resolve().parent / "render_rate.py"), "--quiet",
                             "--events", str(events), "--workdir", str(workdir)], capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"render_rate.py failed:\n{result.stderr}")
    return json.loads(result.stdout)


def real_size_targets(real: dict) -> list[dict]:
    """The real-size goals, judged on one run (a figure missing counts as missed: it never happened)."""
    first, again, ingest = real["startup"]["first"], real["startup"]["restart"], real["ingest"]
    never = float("inf")

    def at(run: dict, key: str) -> float:
        return run.get(key, never)

    restart_ready = max(at(again, "read_s"), at(again, "search_s"), at(again, "tree_s"))
    rendering = real.get("rendering") or {}  # a run without the rendering figures: missed (never measured)
    cold = rendering.get("cold", {}).get("entries_per_cpu_s", 0)
    warm = rendering.get("warm", {}).get("entries_per_cpu_s", 0)
    plain = rendering.get("plain_jinja", {}).get("entries_per_cpu_s", 0)
    rss = max(first["peak_rss_to_file"] or never, again["peak_rss_to_file"] or never)
    soaked = real.get("soak") or {}  # not run (--soak), or a run from before it was measured: missed
    slowest = soaked["slowest_s"] if soaked.get("passed") else never
    soak_figure = (f"{slowest:.2f} s ({soaked['polls']:,} polls by {soaked['pollers']} pollers)" if soaked.get("passed")
                   else "not measured (run with --soak)" if not soaked else "the soak test failed")
    rows = [
        ("listed with a growing count within 0.5 s", at(first, "listed_s"), 0.5, False, f"{at(first, 'listed_s'):.2f} s"),
        ("tree and an agent's first page within 1 s", max(at(first, "tree_s"), at(first, "agent_s")), 1.0, False,
         f"tree {at(first, 'tree_s'):.2f} s, agent {at(first, 'agent_s'):.2f} s"),
        ("ingest at least 40% of the parse-only rate", ingest["share_of_parse_rate"], 0.4, True,
         f"{ingest['share_of_parse_rate']:.0%} ({ingest['events_per_cpu_s']:,.0f} against "
         f"{ingest['parse_per_cpu_s']:,.0f} events per CPU s)"),
        ("search complete within 15 s of start", at(first, "search_s"), 15, False, f"{at(first, 'search_s'):.1f} s"),
        ("pages p95 at most 100 ms while busy", first["pages_ms"]["p95"] or never, 100, False,
         f"{first['pages_ms']['p95']} ms (max {first['pages_ms']['max']} ms, {first['pages_ms']['samples']} pages)"),
        ("empty poll p95 at most 5 ms while busy", first["polls_ms"]["p95"] or never, 5, False,
         f"{first['polls_ms']['p95']} ms (max {first['polls_ms']['max']} ms, {first['polls_ms']['samples']} polls)"),
        ("restart: events, tree and search within 2 s", restart_ready, 2, False, f"{restart_ready:.2f} s"),
        ("peak RSS at most 1.0x the file", rss, 1.0, False,
         f"first {first['peak_rss_to_file']}x, restart {again['peak_rss_to_file']}x"),
        # Judged cold (every entry rendered from its event); warm (entries shared by pollers) shown beside it.
        ("rendering >= 10,000 entries/CPU s", cold, 10_000, True,
         f"cold {cold:,}, warm {warm:,} (plain Jinja2 reference {plain:,}) entries per CPU s"),
        ("soak: slowest answer at most 1 s", slowest, 1.0, False, soak_figure),
    ]
    return [{"target": text, "figure": shown, "value": value, "limit": limit,
             "met": value >= limit if higher else value <= limit, "verdict": ratio_verdict(value, limit, higher)}
            for text, value, limit, higher, shown in rows]


def run_claude_folder(size: int, label: str, args: argparse.Namespace, workdir: Path) -> dict:
    """A Claude Code folder of finished sessions (its files last written two hours ago), served
    twice by a real server (folder_start.py): listing, memory, and a restart on the cache the first start left."""
    folder = workdir / f"claude-{label}"
    log(f"claude folder {label}: generating {args.claude_sessions:,} sessions ({args.claude_subagents} sub-agents)")
    made = generate_claude.generate(folder, size, args.claude_subagents, args.claude_sessions)
    then = time.time() - 2 * 3600
    for path in folder.rglob("*"):
        os.utime(path, (then, then))
    log(f"claude folder {label}: {made['bytes'] / MB:,.0f} MB; a real server started twice")
    started = folder_start.measure(folder, args.claude_sessions, args.claude_timeout)
    result = {"label": label, "sessions": args.claude_sessions, "bytes": made["bytes"], "startup": started}
    result["targets"] = claude_folder_targets(result)
    return result


def claude_folder_targets(claude: dict) -> list[dict]:
    first, again = claude["startup"]["first"], claude["startup"]["restart"]
    never = float("inf")
    listed = max(first.get("all_listed_s", never), again.get("all_listed_s", never))
    peak = max(first.get("peak_rss_idle", first.get("peak_rss", never)), again.get("peak_rss", never)) / MB
    ready = again.get("all_read_s", never)
    rows = [
        ("every session listed within 2 s (each start)", listed, 2, False,
         f"first {first.get('all_listed_s', never):.2f} s, restart {again.get('all_listed_s', never):.2f} s"),
        ("memory under 600 MB (peak, both starts)", peak, 600, False,
         f"peak {peak:,.0f} MB ({peak * MB / claude['bytes']:.2f}x the folder); every session read "
         f"{first.get('all_read_s', never):.1f} s, background work done {first.get('idle_s', never):.1f} s"),
        ("a restart ready within 2 s", ready, 2, False, f"every session read {ready:.2f} s after its first answer"),
    ]
    return [{"target": text, "figure": shown, "value": value, "limit": limit,
             "met": value >= limit if higher else value <= limit, "verdict": ratio_verdict(value, limit, higher)}
            for text, value, limit, higher, shown in rows]


def claude_folder_table(claude: dict) -> str:
    lines = [f"Claude Code folder ({claude['sessions']:,} sessions, {claude['bytes'] / MB:,.0f} MB), its goals:"]
    for target in claude["targets"]:
        lines.append(f"  {target['target']:<46} {target['figure']:<60} {target['verdict']}")
    return "\n".join(lines)


def real_size_table(real: dict) -> str:
    lines = [f"real-size session ({real['events']:,} events, {real['bytes'] / MB:,.0f} MB), its goals:"]
    for target in real["targets"]:
        lines.append(f"  {target['target']:<46} {target['figure']:<60} {target['verdict']}")
    return "\n".join(lines)


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def figures(report: dict) -> list[tuple[str, list[str]]]:
    """The table's rows: a label (indented under its heading) and one cell per size."""
    sizes = report["sizes"]
    rows = []

    def row(label: str, cell) -> None:
        rows.append((label, [cell(s) for s in sizes]))

    def at(section: str, key: str, spec: str, suffix: str = ""):
        """The cell of one figure of a size's report, s[section][key], formatted."""
        return lambda s: format(s[section][key], spec) + suffix

    row("events", lambda s: f"{s['events']:,}")
    row("file (MB)", lambda s: f"{s['bytes'] / MB:,.1f}")
    row("agents / entries of the busiest", lambda s: f"{s['agents']} / {s['busiest_entries']:,}")
    row("load average during the run (1 min)",
        lambda s: f"{min(x[0] for x in s['load_average']):.1f}-{max(x[0] for x in s['load_average']):.1f}")
    row("cold ingest (s)", at("ingest", "seconds", ".2f"))
    row("cold ingest (events/s)", at("ingest", "events_per_s", ",.0f"))
    row("  naive baseline (events/s)", at("baseline", "events_per_s", ",.0f"))
    row("  speed against the baseline", at("ratios", "ingest_speed", ".2f", "x"))
    row("cold ingest (events per CPU second)", at("ingest", "events_per_cpu_s", ",.0f"))
    row("  naive baseline (events per CPU second)", at("baseline", "events_per_cpu_s", ",.0f"))
    row("  CPU speed against the baseline", at("ratios", "ingest_cpu_speed", ".2f", "x"))
    row("search index and facets, built after ingest (s; CPU s)",
        lambda s: f"{s['ingest']['index_seconds']:.2f}; {s['ingest']['index_cpu_seconds']:.2f}"
        if "index_seconds" in s["ingest"] else "-")
    row("  ingest, search index and facets (events per CPU second)",
        lambda s: f"{s['events'] / (s['ingest']['cpu_seconds'] + s['ingest']['index_cpu_seconds']):,.0f}"
        if "index_seconds" in s["ingest"] else "-")
    row("peak RSS (MB)", lambda s: f"{s['ingest']['peak_rss'] / MB:,.0f}")
    row("  peak RSS / file size", at("ingest", "rss_ratio", ".2f", "x"))
    row("  growth during ingest / file size", at("ingest", "rss_growth_ratio", ".2f", "x"))
    row("  naive baseline peak RSS (MB)", lambda s: f"{s['baseline']['peak_rss'] / MB:,.0f}")
    row("  naive baseline peak RSS / file size", at("baseline", "rss_ratio", ".2f", "x"))
    row("  peak RSS against the baseline", at("ratios", "peak_rss", ".2f", "x"))
    row("real server: start to all events served (s)", at("live", "ready_seconds", ".1f"))
    row("real server: start to a first search answered (s)",
        lambda s: f"{s['live']['search_ready_seconds']:.1f}" if "search_ready_seconds" in s["live"] else "-")
    row("real server: peak RSS (MB)", lambda s: f"{s['live']['server_memory']['peak_rss'] / MB:,.0f}")
    row("server time p50 / p95 (CPU p95), ms", lambda s: "")
    for key, _, _ in SERVER_ROWS:
        row(f"  {sizes[-1]['server_ms'][key]['label']}",
            lambda s, key=key: f"{s['server_ms'][key]['p50']:.2f} / {s['server_ms'][key]['p95']:.2f} "
                               f"({s['server_ms'][key]['cpu_p95']:.2f})")
    row("as of N=events/2, first request: replays N events (s; CPU s)",
        lambda s: f"{s['as_of_first']['seconds']:.2f}; {s['as_of_first']['cpu_seconds']:.2f}"
        if "as_of_first" in s else "-")
    row("live latency p50 / p95 (ms, real server)",
        lambda s: f"{s['live']['latency_ms']['p50']:.1f} / {s['live']['latency_ms']['p95']:.1f}")
    row("pollers at 1 Hz: server CPU (% of a core)",
        lambda s: f"{s['live']['pollers']['cpu_percent']:.1f}% ({s['live']['pollers']['pollers']})")
    row("  idle server CPU (% of a core)", lambda s: f"{s['live']['pollers']['idle_cpu_percent']:.1f}%")
    row("  poll response p50 / p95 (ms, real server)",
        lambda s: f"{s['live']['pollers']['response_ms'].get('p50', 0):.1f} / "
                  f"{s['live']['pollers']['response_ms'].get('p95', 0):.1f}")
    return rows


def heading(report: dict) -> str:
    m = report["machine"]
    return (f"agentview benchmark, {report['date']}: {m['cpus']} CPUs ({m['cpu_model']}), "
            f"{m['memory_bytes'] / 1e9:.0f} GB, {m['system']}, Python {m['python']}")


def table(report: dict) -> str:
    sizes = report["sizes"]
    width = 50
    column = max(24, *(len(s["label"]) for s in sizes))
    lines = [heading(report)]
    for label, cells in [("", [s["label"] for s in sizes]), *figures(report)]:
        lines.append(f"{label[:width - 1]:<{width}}" + "".join(f"{c:>{column}}" for c in cells))
    for s in sizes:
        for key, status in s["unexpected_status"].items():
            lines.append(f"WARNING: {s['label']}: {s['server_ms'][key]['url']} answered {status}")
    lines.append("")
    lines.append(f"goals (set for 1M events on 2 cores), judged on {sizes[-1]['label']}:")
    for target in sizes[-1]["targets"]:
        lines.append(f"  {target['target']:<46} {target['figure']:<50} {target['verdict']}")
    return "\n".join(lines)


def markdown(report: dict) -> str:
    """The same figures as Markdown tables (as docs/performance.md shows them)."""
    sizes = report["sizes"]
    out = [f"| measure | {' | '.join(s['label'] + ' events' for s in sizes)} |", "|---" * (len(sizes) + 1) + "|"]
    for label, cells in figures(report):
        shown = f"&nbsp;&nbsp;{label.strip()}" if label.startswith("  ") else label
        out.append(f"| {shown} | {' | '.join(cells)} |")
    out += ["", f"| target | {' | '.join(s['label'] + ' events' for s in sizes)} |", "|---" * (len(sizes) + 1) + "|"]
    judged = [targets(s) for s in sizes]  # judged again: the verdict's wording may have changed since the run
    for i, target in enumerate(judged[-1]):
        out.append(f"| {target['target']} | " + " | ".join(f"{j[i]['figure']}: {j[i]['verdict']}" for j in judged)
                   + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10k,100k,1M", help="events per session, comma-separated (10k, 1M...)")
    parser.add_argument("--json", metavar="PATH", help="also write the results there")
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--runs", type=int, default=30, help="requests per server-time row")
    parser.add_argument("--live-samples", type=int, default=100, help="lines appended for the live latency")
    parser.add_argument("--pollers", type=int, default=100)
    parser.add_argument("--poll-seconds", type=float, default=20, help="how long the pollers' CPU is measured")
    parser.add_argument("--workdir", help="where sessions are generated (default: a temporary folder)")
    parser.add_argument("--real-size", metavar="N",
                        help="also measure the real-size goals on a session of N events (1M: about 1 GB)")
    parser.add_argument("--soak", action="store_true",
                        help="with --real-size, also run the soak test (its slowest answer; about a minute)")
    parser.add_argument("--claude-folder", metavar="SIZE",
                        help="also measure the goals of a Claude Code folder of SIZE bytes (5G: about 40 min)")
    parser.add_argument("--claude-sessions", type=int, default=5000)
    parser.add_argument("--claude-subagents", type=int, default=500)
    parser.add_argument("--claude-timeout", type=float, default=1800, help="seconds each start may take")
    parser.add_argument("--startup-seconds", type=float, default=60,
                        help="how long pages and polls are sampled after a start (real size)")
    parser.add_argument("--markdown", metavar="RESULTS_JSON",
                        help="measure nothing: print the tables of an earlier run (--json) as Markdown")
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown(json.loads(Path(args.markdown).read_text())))
        return
    labels = [s.strip() for s in args.sizes.split(",") if s.strip()]
    report = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine(),
              "command": " ".join([Path(sys.executable).name, *sys.argv]), "settings": vars(args), "sizes": []}
    with tempfile.TemporaryDirectory(dir=args.workdir, prefix="agentview-bench-") as workdir:
        for label in labels:
            report["sizes"].append(run_size(parse_size(label), label, args, Path(workdir)))
        if args.real_size:
            report["real_size"] = run_real_size(parse_size(args.real_size), args.real_size, args, Path(workdir))
        if args.claude_folder:
            report["claude_folder"] = run_claude_folder(parse_size(args.claude_folder), args.claude_folder, args,
                                                        Path(workdir))
    text = table(report) if report["sizes"] else heading(report)
    if args.real_size:
        text += "\n\n" + real_size_table(report["real_size"])
    if args.claude_folder:
        text += "\n\n" + claude_folder_table(report["claude_folder"])
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
