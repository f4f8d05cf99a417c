"""How much memory and time hostile files cost a running server, at full size.

    .venv/bin/python benchmarks/hostile_files.py [--scale 1.0] [--only NAME]

Each case starts a real `agentview serve` on a folder holding one ordinary session, waits for its
steady state, then moves the hostile file in (a rename: it appears whole) and waits until the
server lists it with its problem. Printed per case: the file's size, the seconds until listed,
the problems reported, and the RSS rise (the process's peak resident memory, VmHWM, minus its
resident memory in the steady state). The target: a rise under 512 MB each. With `--scale` below
1 the files are that fraction of full size (a quick check).

The cases:
- line-2gb.jsonl.gz: one 2 GB line (a 2 MB gzip);
- blank-2gb.jsonl.gz: 2 GB of blank lines (deflate's best ratio is about 1,030:1, so 2 MB of gzip);
- objects.json.gz: a 204 kB snapshot of `[{},{},...]`;
- line-1gb.jsonl: one 1 GB line without a newline, plain; also the delay of a line appended to
  another session meanwhile (the other session must not be held up).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MB = 1024 * 1024
GB = 1024 * MB


def gzip_of(path: Path, pieces, level: int = 9) -> None:
    """Write a gzip file of the pieces (bytes, streamed: never whole in memory)."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, 31)
    with open(path, "wb") as f:
        for piece in pieces:
            f.write(compressor.compress(piece))
        f.write(compressor.flush())


def repeated(unit: bytes, total: int, head: bytes = b"", tail: bytes = b""):
    block = unit * max(1, (8 * MB) // len(unit))
    yield head
    left = total
    while left > 0:
        yield block[:left]
        left -= len(block)
    yield tail


def make_line_gz(path: Path, scale: float) -> None:
    gzip_of(path, repeated(b"x", int(2 * GB * scale), head=b'{"message_id": "huge", "content": "', tail=b'"}\n'))


def make_blank_gz(path: Path, scale: float) -> None:
    gzip_of(path, repeated(b"\n", int(2 * GB * scale)))


def make_objects_gz(path: Path, scale: float) -> None:
    count = int(68_000_000 * scale)  # about 204 kB of gzip at full size
    gzip_of(path, repeated(b"{},", 3 * count, head=b"[", tail=b"{}]"))


def make_line_plain(path: Path, scale: float) -> None:
    with open(path, "wb") as f:
        for piece in repeated(b"y", int(1 * GB * scale), head=b'{"content": "'):
            f.write(piece)


CASES = {
    "line-2gb.jsonl.gz": make_line_gz,
    "blank-2gb.jsonl.gz": make_blank_gz,
    "objects.json.gz": make_objects_gz,
    "line-1gb.jsonl": make_line_plain,
}


def status_kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.load(response)


def event(i: int) -> bytes:
    return json.dumps({"message_id": f"m{i}", "event_type": "transcript_entry", "agent_id": "a",
                       "role": "assistant", "content": f"line {i}"}).encode() + b"\n"


def run_case(name: str, make, scale: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="agentview-hostile-") as tmp:
        folder, staging = Path(tmp) / "watched", Path(tmp) / "staging"
        folder.mkdir()
        staging.mkdir()
        other = folder / "other.jsonl"
        other.write_bytes(b'{"message_id": "c", "event_type": "agent_created", "agent_id": "a"}\n' + event(0))
        hostile = staging / name
        make(hostile, scale)
        size = hostile.stat().st_size
        process = subprocess.Popen([sys.executable, "-m", "viewer", "serve", str(folder), "--port", "0"],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO)
        try:
            line = process.stdout.readline()
            url = line.rsplit(" at ", 1)[1].strip().rstrip("/")
            threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
            while len(get_json(f"{url}/api/sessions")["sessions"]) < 1:
                time.sleep(0.1)
            time.sleep(2)
            steady = status_kb(process.pid, "VmRSS")
            started = time.monotonic()
            os.rename(hostile, folder / name)
            delay = None
            if name.endswith(".jsonl"):  # meanwhile, a line appended to another session: how long until shown
                time.sleep(0.05)
                with open(other, "ab") as f:
                    f.write(event(1))
                appended = time.monotonic()
                while not any(e.get("message_id") == "m1"
                              for e in get_json(f"{url}/api/sessions/other/events")["events"]):
                    time.sleep(0.02)
                delay = time.monotonic() - appended
            problems, listed = [], None
            while time.monotonic() - started < 600:  # a new session is listed once it was read through
                sessions = {s["path"]: s for s in get_json(f"{url}/api/sessions")["sessions"]}
                if name in sessions:
                    listed = time.monotonic() - started
                    problems = get_json(f"{url}/api/sessions/{sessions[name]['id']}/problems")["problems"]
                    break
                time.sleep(0.1)
            peak = status_kb(process.pid, "VmHWM")
            return {"case": name, "file_mb": round(size / MB, 2), "seconds_until_listed": listed and round(listed, 2),
                    "problems": sorted({p["kind"] for p in problems}), "rss_rise_mb": round((peak - steady) / 1024, 1),
                    "other_session_delay_s": delay and round(delay, 2)}
        finally:
            process.terminate()
            process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--only")
    args = parser.parse_args()
    for name, make in CASES.items():
        if args.only and args.only != name:
            continue
        print(json.dumps(run_case(name, make, args.scale)), flush=True)


if __name__ == "__main__":
    main()
