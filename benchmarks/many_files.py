"""Ten thousand session files under a soft limit of 256 open files, at full size.

    .venv/bin/python benchmarks/many_files.py [--native 10000] [--claude 300] [--soft 256]

Writes NATIVE native files (two events each) and CLAUDE copies of the Claude Code sample project
(a main file with sub-agent files beside and below it: 3 sessions, 8 files each), starts a real
`agentview serve` with its soft limit of open files lowered to SOFT, and measures: seconds until
every session is listed, every native event read back through the events API, every session page
answering 200, the most descriptors the server held open while doing so, and its peak RSS.
(tests/test_descriptors.py is the same check with 2,000 files.)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def get(url: str):
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.status, response.read()


def write_native(folder: Path, count: int) -> None:
    for i in range(count):
        sub = folder / f"d{i // 500}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"s{i}.jsonl").write_text(
            json.dumps({"message_id": f"c{i}", "event_type": "agent_created", "agent_id": "a"}) + "\n"
            + json.dumps({"message_id": f"m{i}", "event_type": "transcript_entry", "agent_id": "a",
                          "role": "assistant", "content": f"said in file {i}"}) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--native", type=int, default=10_000)
    parser.add_argument("--claude", type=int, default=300)
    parser.add_argument("--soft", type=int, default=256)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentview-many-") as tmp:
        folder = Path(tmp) / "many"
        write_native(folder, args.native)
        for k in range(args.claude):
            shutil.copytree(REPO / "sample_sessions" / "claude_code", folder / f"claude{k}",
                            ignore=shutil.ignore_patterns("*.py"))
        files = sum(len(names) for _, _, names in os.walk(folder))
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "viewer", "serve", str(folder), "--port", "0", "--threads", "8"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (args.soft, hard)))
        most_open = [0]
        stop = threading.Event()

        def sample_descriptors():
            while not stop.is_set():
                try:
                    most_open[0] = max(most_open[0], len(os.listdir(f"/proc/{process.pid}/fd")))
                except OSError:
                    pass
                time.sleep(0.05)

        try:
            url = process.stdout.readline().rsplit(" at ", 1)[1].strip().rstrip("/")
            threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
            threading.Thread(target=sample_descriptors, daemon=True).start()
            expected = args.native + 3 * args.claude
            while True:
                sessions = json.loads(get(f"{url}/api/sessions")[1])["sessions"]
                if len(sessions) >= expected:
                    break
                if process.poll() is not None:
                    raise SystemExit("the server died")
                time.sleep(0.5)
            listed = time.monotonic() - started

            def check(session):
                status, body = get(f"{url}/api/sessions/{session['id']}/events")
                events = json.loads(body)["events"]
                page = get(f"{url}/s/{session['id']}")[0]
                if session["path"].startswith("d"):
                    i = int(session["path"].rsplit("/s", 1)[1].removesuffix(".jsonl"))
                    ok = [(e["message_id"], e.get("content")) for e in events] == [
                        (f"c{i}", None), (f"m{i}", f"said in file {i}")]
                else:
                    ok = bool(events)
                return status == 200 and page == 200 and ok

            t = time.monotonic()
            with ThreadPoolExecutor(8) as pool:
                results = list(pool.map(check, sessions))
            served = time.monotonic() - t
            with open(f"/proc/{process.pid}/status") as f:
                peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
            print(json.dumps({
                "files": files, "sessions": len(sessions), "soft_limit": args.soft,
                "seconds_until_all_listed": round(listed, 1),
                "sessions_all_events_and_page_ok": sum(results), "seconds_to_check_all": round(served, 1),
                "most_descriptors_open": most_open[0], "peak_rss_mb": round(peak / 1024),
                "server_alive": process.poll() is None}))
        finally:
            stop.set()
            process.terminate()
            process.wait(timeout=10)


if __name__ == "__main__":
    main()
