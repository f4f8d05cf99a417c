"""How soon `/` lists every session of a big folder, and the server's memory meanwhile.

    .venv/bin/python benchmarks/folder_start.py FOLDER SESSIONS [--timeout 600] [--json OUT]

Starts `agentview serve FOLDER` twice (the second start with the cache the first left) and reports, for each,
the seconds from the server's first answer until `/api/sessions` lists SESSIONS sessions, until all of them
have events, and the server's RSS then and its peak. The first server is left running until it is idle (its
search indexes built and the cache written: `idle_s`), so that the second starts on a whole cache.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from live import Server, get_json  # noqa: E402
from probes import report  # noqa: E402


def one_start(folder: Path, sessions: int, timeout: float, env: dict, wait_idle: bool = False) -> dict:
    server = Server(folder, env=env)
    connection = server.connection()
    marks: dict[str, float] = {}
    first = None
    try:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline and "all_read_s" not in marks:
            try:
                rows = get_json(connection, "/api/sessions")["sessions"]
            except (OSError, RuntimeError):
                connection.close()
                connection = server.connection()
                time.sleep(0.05)
                continue
            now = time.perf_counter()
            first = first or now
            if len(rows) >= sessions:
                marks.setdefault("all_listed_s", now - first)
                if all(row["events"] for row in rows):
                    marks["all_read_s"] = now - first
            marks["listed"] = len(rows)
            time.sleep(0.2)
        read = server.memory()
        if wait_idle:  # its background work done (search indexes, facets, the cache written) before it stops
            marks["idle_s"] = _until_idle(server, deadline) - first
        return {**marks, **read, "peak_rss_idle": server.memory()["peak_rss"]}
    finally:
        server.stop()


def _until_idle(server, deadline: float, quiet: float = 3.0) -> float:
    """When the server last worked before it used under 2% of a core for `quiet` seconds (or the deadline)."""
    last = server.cpu_seconds()
    still_since = time.perf_counter()
    while time.perf_counter() < deadline:
        time.sleep(0.5)
        used = server.cpu_seconds()
        if used - last > 0.01:
            still_since = time.perf_counter()
        last = used
        if time.perf_counter() - still_since >= quiet:
            break
    return still_since


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("sessions", type=int)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--cache-home", default=os.environ.get("XDG_CACHE_HOME", ""),
                        help="with --restarts: the XDG_CACHE_HOME whose cache they start on")
    parser.add_argument("--restarts", type=int, metavar="N", default=0,
                        help="only N restarts on the cache under this XDG_CACHE_HOME (one a first start left)")
    args = parser.parse_args()
    if args.restarts:
        env = {**os.environ, "XDG_CACHE_HOME": args.cache_home}
        report({"restarts": [one_start(Path(args.folder), args.sessions, args.timeout, env)
                             for _ in range(args.restarts)]}, args.json)
        return
    report(measure(Path(args.folder), args.sessions, args.timeout), args.json)


def measure(folder: Path, sessions: int, timeout: float = 600) -> dict:
    """Both starts, with a cache folder of their own (see the module)."""
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    with tempfile.TemporaryDirectory(prefix="agentview-cache-") as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache}
        return {"bytes": size, "first": one_start(folder, sessions, timeout, env, wait_idle=True),
                "restart": one_start(folder, sessions, timeout, env)}


if __name__ == "__main__":
    main()
