"""agentview and agentsview side by side on one `~/.claude/projects` folder of many small sessions.

    .venv/bin/python benchmarks/versus_agentsview.py [--home /tmp/cc-home] [--sessions 2000] [--runs 1]
                                                     [--agentsview PATH] [--json OUT] [--stop-after listed]
                                                     [--repo CHECKOUT]

Writes the folder with benchmarks/claude_projects.py under HOME unless its manifest is there (same count), then,
`--runs` times, alternating the two so that the machine's load falls on both alike:
- agentview: `agentview serve FOLDER` with an empty cache, then again on the cache the first start left;
- agentsview (found on PATH or given with --agentsview; skipped, and said so, when neither): with HOME pointed
  at the folder's home and its data folder emptied, `agentsview sync`, then `agentsview serve`; then `serve`
  again on its database.
Measured from each start: every session listed; the rare word of the newest session found; every session
searchable (no search index still being built, asked of `/api/status` every 0.1 s and then checked on every
session's row and a search; for agentsview, the same as found); CPU of every process
(children included: os.wait4 and /proc) until idle; peak RSS summed over all its processes; search latency for a
common word, the rare word and a phrase (median of 20 answers, all hits' first page); the biggest session's page
and JSON, first time and median of 5; once idle after a restart, the biggest session's page opened first, and in a
second restart its JSON. Prints both side by side, medians over the runs.
`--stop-after listed` (or `found`) ends each cold start there, CPU and peak RSS counted until then, and makes no
restart (its cache would be part-made): a folder of 20,000 sessions is listed in seconds, searchable in minutes.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from claude_projects import generate  # noqa: E402
from process_tree import Tree  # noqa: E402
from timing import compiled  # noqa: E402

REPO = HERE.parent
TIMEOUT = 600


class Client:
    def __init__(self, port: int) -> None:
        self.port = port
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def get(self, path: str) -> tuple[int, bytes, float]:
        """(status, body, seconds); a refused or broken connection is (0, b"", s)."""
        start = time.perf_counter()
        try:
            self.connection.request("GET", path)
            response = self.connection.getresponse()
            body = response.read()
            return response.status, body, time.perf_counter() - start
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            return 0, b"", time.perf_counter() - start

    def json(self, path: str):
        status, body, _ = self.get(path)
        return json.loads(body) if status == 200 else None

    def until(self, check, started: float, every: float = 0.1) -> float:
        """Seconds from `started` until check() is true (asked `every` s)."""
        deadline = time.perf_counter() + TIMEOUT
        while time.perf_counter() < deadline:
            if check():
                return round(time.perf_counter() - started, 2)
            time.sleep(every)
        raise TimeoutError("not reached in time")

    def latency_ms(self, path: str, runs: int = 20) -> float:
        return round(statistics.median(self.get(path)[2] for _ in range(runs)) * 1000, 2)

    def opened_ms(self, path: str) -> dict:
        first = self.get(path)
        assert first[0] == 200, (path, first[0], first[1][:300])
        return {"first_ms": round(first[2] * 1000, 1), "median_ms": self.latency_ms(path, 5),
                "kb": round(len(first[1]) / 1024, 1)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- agentview ----------------------------------------------------------------------------------------------------

class Ours:
    name = "agentview"

    def __init__(self, manifest: dict, cache: str, repo: Path = REPO) -> None:
        self.manifest, self.cache, self.repo = manifest, cache, repo
        self._looked = 0.0  # when `whole` last listed every session
        compiled(repo)  # as installed: no start compiles its modules, whatever PYTHONDONTWRITEBYTECODE says

    def start(self) -> tuple[Tree, Client]:
        env = {**os.environ, "XDG_CACHE_HOME": self.cache, "PYTHONPATH": str(self.repo)}
        tree = Tree([sys.executable, "-m", "viewer", "serve", self.manifest["projects_folder"], "--port", "0"],
                    env=env, cwd=self.repo, stdout=subprocess.PIPE)
        while "serving" not in (line := tree.process.stdout.readline()):
            if not line:
                raise RuntimeError("agentview did not start")
        port = urlsplit(line.rsplit(" at ", 1)[1].strip()).port
        tree.process.stdout.close()  # it logs nothing more that matters; a full pipe must not block it
        return tree, Client(port)

    def listed(self, client: Client) -> bool:
        data = client.json("/api/sessions")
        return bool(data) and len(data["sessions"]) >= self.manifest["sessions"]

    def search_path(self, q: str) -> str:
        return f"/api/search?q={quote(q)}"

    def found(self, client: Client) -> bool:
        data = client.json(self.search_path(self.manifest["rare_word"]))
        return bool(data) and any(self.manifest["newest"] in hit["session"] for hit in data["results"])

    def whole(self, client: Client) -> bool:
        """Every session read (a session not read yet has no events, and nothing to build) and searched whole: no
        search index is still being built. Asked every 0.1 s, of `/api/status` (a count); once that says so, of
        every session's row and a search, at most once a second (a checkout without `/api/status`: only those)."""
        status = client.json("/api/status")
        if status is not None and (status["scanning"] or status["unread"] or status["indexing"]
                                   or status.get("reading")):
            return False
        now = time.perf_counter()
        if now - self._looked < 1.0:  # each look lists every session: work the server would not do otherwise
            return False
        self._looked = now
        rows = (client.json("/api/sessions") or {}).get("sessions", [])
        if len(rows) < self.manifest["sessions"] or not all(row["events"] for row in rows):
            return False
        data = client.json(self.search_path(self.manifest["rare_word"]))
        return bool(data) and not data["partial"]

    def biggest(self, client: Client, uuid: str) -> tuple[str, str]:
        session = next(row for row in client.json("/api/sessions")["sessions"] if uuid in row["id"])
        return f"/s/{quote(session['id'])}", f"/api/sessions/{quote(session['id'])}"


# --- agentsview ---------------------------------------------------------------------------------------------------

class Theirs:
    name = "agentsview"

    def __init__(self, manifest: dict, home: Path, program: str) -> None:
        self.manifest, self.home, self.program = manifest, home, program
        self.env = {**os.environ, "HOME": str(home), "AGENTSVIEW_NO_DAEMON": "1"}

    def sync(self) -> dict:
        shutil.rmtree(self.home / ".agentsview", ignore_errors=True)
        tree = Tree([self.program, "sync"], env=self.env)
        figures = tree.wait(TIMEOUT)
        return {**figures, "sync_s": round(time.perf_counter() - tree.started, 2)}

    def start(self) -> tuple[Tree, Client]:
        port = free_port()
        tree = Tree([self.program, "serve", "--no-browser", "--no-update-check", "--port", str(port)], env=self.env)
        return tree, Client(port)

    def listed(self, client: Client) -> bool:
        data = client.json("/api/v1/sessions?limit=1&include_one_shot=true")
        return bool(data) and data["total"] >= self.manifest["sessions"]

    def search_path(self, q: str) -> str:
        return f"/api/v1/search?q={quote(q)}"

    def found(self, client: Client) -> bool:
        data = client.json(self.search_path(self.manifest["rare_word"]))
        return bool(data) and any(hit["session_id"] == self.manifest["newest"] for hit in data["results"] or ())

    whole = found  # what its sync wrote is searched whole

    def biggest(self, client: Client, uuid: str) -> tuple[str, str]:
        return f"/api/v1/sessions/{uuid}/messages", f"/api/v1/sessions/{uuid}"


# --- one start ----------------------------------------------------------------------------------------------------

STOPS = ("listed", "found", "whole")  # where a start may end (--stop-after), in the order they are reached


def one_start(viewer, uuid: str, cold: bool, before: dict | None = None, stop_after: str = "whole",
              opens: str | None = None) -> dict:
    """A start of the server: when it lists, when the rare word is found, CPU until idle, then the requests.
    `before` (agentsview's sync) is added to the times and CPU: its server lists what the sync wrote.
    `stop_after`: the last of STOPS measured (before "whole": nothing after it, CPU and RSS until then).
    `opens` ("page" or "json"): a restart's first request once idle, the biggest session's page or JSON."""
    offset = before["sync_s"] if before else 0.0
    tree, client = viewer.start()
    out: dict = {}
    try:
        _measure(viewer, client, tree, uuid, cold and stop_after == "whole", STOPS[:STOPS.index(stop_after) + 1],
                 offset, out)
        if opens is not None:  # the first open of a session since the start: what a restart's first view costs
            page, data = viewer.biggest(client, uuid)
            out[opens] = client.opened_ms(data if opens == "json" else page)
    finally:
        ended = tree.stop()
    out["cpu_s"] = round(ended["cpu_s"] + (before["cpu_s"] if before else 0), 2)
    out["peak_rss_mb"] = max(ended["peak_rss_mb"], before["peak_rss_mb"] if before else 0)
    return out


def _measure(viewer, client: Client, tree: Tree, uuid: str, requests: bool, stops: tuple, offset: float,
             out: dict) -> None:
    """Into `out`: the times of `stops` from the start, then (a whole cold start: `requests`) the requests' times."""
    checks = {"listed": viewer.listed, "found": viewer.found, "whole": viewer.whole}
    for stop in stops:
        out[f"{stop}_s"] = round(client.until(lambda: checks[stop](client), tree.started) + offset, 2)
    if stops[-1] != "whole":
        return
    out["idle_s"] = round(tree.until_idle(time.perf_counter() + TIMEOUT) + offset, 2)
    if requests:
        m = viewer.manifest
        for kind, q in (("common", m["common_word"]), ("rare", m["rare_word"]), ("phrase", f'"{m["phrase"]}"')):
            out[f"search_{kind}_ms"] = client.latency_ms(viewer.search_path(q))
        status, body, _ = client.get(viewer.search_path(m["rare_word"]))
        out["rare_answer_kb"] = round(len(body) / 1024, 1)
        page, data = viewer.biggest(client, uuid)
        out["page"], out["json"] = client.opened_ms(page), client.opened_ms(data)


def run_ours(manifest: dict, uuid: str, stop_after: str = "whole", repo: Path = REPO) -> dict:
    with tempfile.TemporaryDirectory(prefix="agentview-cache-") as cache:
        viewer = Ours(manifest, cache, repo)
        cold = one_start(viewer, uuid, cold=True, stop_after=stop_after)
        return {"cold": cold} if stop_after != "whole" else {"cold": cold, **_restarts(viewer, uuid)}


def run_theirs(manifest: dict, home: Path, program: str, uuid: str, stop_after: str = "whole") -> dict:
    viewer = Theirs(manifest, home, program)
    synced = viewer.sync()
    cold = {**one_start(viewer, uuid, cold=True, before=synced, stop_after=stop_after), "sync": synced}
    return {"cold": cold} if stop_after != "whole" else {"cold": cold, **_restarts(viewer, uuid)}


def _restarts(viewer, uuid: str) -> dict:
    """Two restarts on what the cold start left: the first opens the biggest session's page, the second its JSON."""
    return {"restart": one_start(viewer, uuid, cold=False, opens="page"),
            "restart_json": one_start(viewer, uuid, cold=False, opens="json")}


# --- the table ----------------------------------------------------------------------------------------------------

ROWS = (("all listed, cold (s)", "cold", "listed_s"),
        ("rare word in the newest session found, cold (s)", "cold", "found_s"),
        ("every session searchable, cold (s)", "cold", "whole_s"), ("idle, cold (s)", "cold", "idle_s"),
        ("CPU for the cold read (s)", "cold", "cpu_s"),
        ("peak RSS, all processes (MB)", "cold", "peak_rss_mb"),
        ("search common / rare / phrase (ms, median of 20)", "cold",
         ("search_common_ms", "search_rare_ms", "search_phrase_ms")),
        ("rare word's answer (kB)", "cold", "rare_answer_kb"),
        ("biggest session page: first / median (ms)", "cold", ("page.first_ms", "page.median_ms")),
        ("biggest session JSON: first / median (ms)", "cold", ("json.first_ms", "json.median_ms")),
        ("restart: listed / found / CPU (s)", "restart", ("listed_s", "found_s", "cpu_s")),
        ("biggest session after a restart: page first (ms)", "restart", "page.first_ms"),
        ("biggest session after a restart: JSON first (ms)", "restart_json", "json.first_ms"))


def _value(run: dict, part: str, key: str):
    value = run.get(part, {})
    for name in key.split("."):
        value = value.get(name, {})
    return value


def cell(runs: list[dict], part: str, keys) -> str:
    if not runs:
        return "skipped"
    keys = keys if isinstance(keys, tuple) else (keys,)
    values = [[_value(r, part, k) for r in runs] for k in keys]  # {}: not measured (--stop-after)
    return " / ".join(f"{statistics.median(v):g}" if {} not in v else "–" for v in values)


def table(ours: list[dict], theirs: list[dict], skipped: str | None) -> str:
    lines = [f"| {len(ours)} run(s), medians | agentview | agentsview |", "| --- | --- | --- |"]
    lines += [f"| {label} | {cell(ours, part, keys)} | {cell(theirs, part, keys)} |" for label, part, keys in ROWS]
    if skipped:
        lines.append(f"\nagentsview skipped: {skipped}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", default="/tmp/cc-home", help="the HOME the folder is (or is written) under")
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--agentsview", help="the agentsview program (else the one on PATH)")
    parser.add_argument("--only", choices=("agentview", "agentsview"), help="run one of the two")
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--stop-after", choices=STOPS, default="whole",
                        help="end each cold start once every session is listed, or the rare word found; no restart")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout of agentview to run (another version)")
    args = parser.parse_args()
    home = Path(args.home)
    manifest_path = home / "manifest.json"
    if not manifest_path.exists() or json.loads(manifest_path.read_text())["sessions"] != args.sessions:
        shutil.rmtree(home, ignore_errors=True)
        generate(home, args.sessions)
    manifest = json.loads(manifest_path.read_text())
    biggest = max(Path(manifest["projects_folder"]).glob("*/*.jsonl"), key=lambda p: p.stat().st_size)
    program = args.agentsview or shutil.which("agentsview")
    skipped = None if program else "not installed (not on PATH, no --agentsview)"
    ours, theirs = [], []
    for _ in range(args.runs):
        if args.only != "agentsview":
            ours.append(run_ours(manifest, biggest.stem, args.stop_after, args.repo))
        if program and args.only != "agentview":
            theirs.append(run_theirs(manifest, home, program, biggest.stem, args.stop_after))
    if args.only == "agentview":
        skipped = "--only agentview"
    print(json.dumps({"folder": manifest, "biggest": {"file": biggest.name, "kb": biggest.stat().st_size // 1024},
                      "load": os.getloadavg(), "agentview": ours, "agentsview": theirs}, indent=1))
    print(table(ours, theirs, skipped))
    if args.json:
        Path(args.json).write_text(json.dumps({"folder": manifest, "agentview": ours, "agentsview": theirs}, indent=1))


if __name__ == "__main__":
    main()
