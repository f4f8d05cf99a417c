#!/usr/bin/env python3
"""The page's Download as HTML of a big session the server has read: how long it takes, when its first bytes come,
and how much the server's peak memory grows.

    .venv/bin/python benchmarks/share_download.py [--events 100000] [--agents 200] [--folder DIR] [--runs 3]

Generates the session with generate.py (deterministic) into a folder of its own, serves that folder with
`agentview serve --no-cache` on a free port, waits until every event is read, then downloads /s/ID/share.html
`--runs` times. Prints each download and the load average.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from share_file import generated_session, session_arguments

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def download(url: str) -> tuple[float, float, int]:
    """Seconds to the whole answer, seconds to its first bytes, and its size."""
    start = time.perf_counter()
    first, size = None, 0
    with urllib.request.urlopen(url, timeout=600) as answer:
        while chunk := answer.read(1 << 16):
            first = first if first is not None else time.perf_counter() - start
            size += len(chunk)
    return time.perf_counter() - start, first or 0.0, size


def main() -> int:
    parser = session_arguments(__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    session = generated_session(args)

    from viewer.index.session_ids import session_id_for

    session_id, port = session_id_for(session.name), free_port()
    server = subprocess.Popen([sys.executable, "-m", "viewer.cli", "serve", str(session.parent), "--port", str(port),
                               "--no-cache"], cwd=HERE.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        lines = sum(1 for _ in session.open("rb"))
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:  # until the server has read every line
            try:
                if json.load(urllib.request.urlopen(f"{base}/api/sessions/{session_id}", timeout=60))["events"] >= lines - 2:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        else:
            raise SystemExit("the server did not read the session within 10 minutes")
        print(f"session: {lines:,} lines, {session.stat().st_size / 2**20:.1f} MB; load {Path('/proc/loadavg').read_text().strip()}")
        for run in range(1, args.runs + 1):
            before = peak_rss_mb(server.pid)
            whole, first, size = download(f"{base}/s/{session_id}/share.html")
            print(f"download {run}: {whole:.2f} s, first bytes after {first:.2f} s, {size / 2**20:.1f} MB; server's peak "
                  f"memory {before:.0f} -> {peak_rss_mb(server.pid):.0f} MB")
        print(f"load {Path('/proc/loadavg').read_text().strip()}")
    finally:
        server.terminate()
        server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
