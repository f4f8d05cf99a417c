"""What a person feels when starting the viewer on a big folder, against a real `agentview serve`.

    .venv/bin/python benchmarks/startup.py FOLDER SESSION_ID EVENTS [--seconds 60] [--light] [--json OUT]

FOLDER holds the big session SESSION_ID (EVENTS events, generate.py's shape) and is given a tiny second
session, `quiet`, that never changes: polling it measures what an open page that has nothing new pays
while the big one is read and indexed. The server is started twice on the same files (with one cache
folder of its own, so a second start may reuse what the first kept), and for each start it reports:
- `listed_s`: from the server's first answer until `/api/sessions` lists the big session with events;
- `tree_s`, `agent_s`: until its session page and its first agent's page answer (while it is still read);
- `read_s`: until every event is served; `search_s`: until a search over the session is answered whole
  (every event read, and not marked partial);
- `pages` and `polls`: p50/p95/max of page requests (session, agent, dialog, message, search) and of the
  quiet session's empty polls, sampled during the first `--seconds` (not only after things settle);
- the server's peak RSS against the file's size;
- `slow_polls`: the empty polls over 5 ms, how many overlapped no other request (slowed by background work
  alone) and which requests the others overlapped.

`--light` asks for nothing but the listing and the search, every half second: how fast the server reads and
indexes the file with nothing else asked of it.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from live import Server  # noqa: E402
from probes import report, summary  # noqa: E402

QUIET = "quiet"
SEARCH_WORD = "latency"  # in generate.py's word pool: common in every shape


def _quiet_session(folder: Path) -> None:
    lines = [{"message_id": "q0", "event_type": "agent_created", "agent_id": "q", "name": "Quiet"},
             {"message_id": "q1", "event_type": "transcript_entry", "agent_id": "q", "role": "user",
              "content": "nothing happens here"}]
    (folder / f"{QUIET}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def _get(connection: http.client.HTTPConnection, url: str) -> tuple[int, bytes, float]:
    started = time.perf_counter()
    connection.request("GET", url)
    response = connection.getresponse()
    body = response.read()
    return response.status, body, (time.perf_counter() - started) * 1000


class Start:
    """One start of the server, watched from several client threads until `seconds` have passed and all is ready."""

    def __init__(self, folder: Path, session_id: str, events: int, seconds: float, env: dict,
                 keeps: Path | None = None, light: bool = False):
        self.session_id, self.events, self.seconds = session_id, events, seconds
        self.server = Server(folder, env=env)
        self.first_answer = self._first_answer()
        self.marks: dict[str, float] = {}
        self.pages: list[float] = []
        self.polls: list[float] = []
        self.errors: list[str] = []
        self.done = threading.Event()
        self.keeps = keeps  # a cache folder the run should have written the sessions into before it stops
        self.light = light  # only the listing and the search asked for
        self.every = 0.5 if light else 0.05  # seconds between two looks at the listing
        self.spans: list[tuple[float, float, str, bool]] = []  # (start, end, path, an empty poll?) of each request

    def _get(self, connection: http.client.HTTPConnection, url: str, poll: bool = False) -> tuple[int, bytes, float]:
        status, body, ms = _get(connection, url)
        end = time.perf_counter()
        self.spans.append((end - ms / 1000, end, url.split("?")[0], poll))
        return status, body, ms

    def _first_answer(self) -> float:
        connection = self.server.connection()
        while True:
            try:
                _get(connection, "/api/sessions")
                return time.perf_counter()
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = self.server.connection()
                time.sleep(0.01)

    def _mark(self, name: str) -> None:
        self.marks.setdefault(name, time.perf_counter() - self.first_answer)

    def _in_window(self) -> bool:
        return time.perf_counter() - self.first_answer < self.seconds and not self.done.is_set()

    def _watch_listing(self) -> None:
        connection = self.server.connection()
        while not self.done.is_set():
            status, body, _ = self._get(connection, "/api/sessions")
            rows = {row["id"]: row for row in json.loads(body)["sessions"]}
            row = rows.get(self.session_id)
            if row and row["events"]:
                self._mark("listed_s")
            if row and row["events"] >= self.events:
                self._mark("read_s")
            time.sleep(self.every)

    def _watch_search(self) -> None:
        connection = self.server.connection()
        while not self.done.is_set():
            status, body, _ = self._get(connection, f"/api/search?q={SEARCH_WORD}&session={self.session_id}&limit=20")
            if status == 200:
                answer = json.loads(body)
                if "read_s" in self.marks and not answer.get("partial") and answer["results"]:
                    self._mark("search_s")
            time.sleep(max(0.25, self.every))

    def _watch_pages(self) -> None:
        """When the tree and an agent's first page first open: each asked for every 50 ms until it answers
        (the sampler below asks for each page only once in a round of six: it would measure its round)."""
        connection = self.server.connection()
        waiting = {"tree_s": f"/s/{self.session_id}", "agent_s": f"/s/{self.session_id}/agents/a0"}
        while waiting and not self.done.is_set():
            for mark, url in list(waiting.items()):
                if self._get(connection, url)[0] == 200:
                    self._mark(mark)
                    del waiting[mark]
            time.sleep(0.05)

    def _sample_pages(self) -> None:
        connection = self.server.connection()
        sid = self.session_id
        urls = [f"/s/{sid}", f"/s/{sid}/agents/a1", f"/s/{sid}/agents/a0", f"/s/{sid}/dialog?agents=a0,a1",
                f"/s/{sid}/messages/msg_2", f"/search?q={SEARCH_WORD}&session={sid}"]
        i = 0
        while self._in_window() or "search_s" not in self.marks:
            url = urls[i % len(urls)]
            i += 1
            status, _, ms = self._get(connection, url)
            if status == 200:
                self.pages.append(ms)
            elif status >= 500:
                self.errors.append(f"{url}: {status}")
            time.sleep(0.1)
            if time.perf_counter() - self.first_answer > 600:
                self.errors.append("not ready after 600 s")
                break

    def _sample_polls(self) -> None:
        connection = self.server.connection()
        status, body, _ = self._get(connection, f"/api/sessions/{QUIET}")
        while status != 200 and self._in_window():  # not listed yet: the folder is being read
            time.sleep(0.05)
            status, body, _ = self._get(connection, f"/api/sessions/{QUIET}")
        cursor = json.loads(body)["cursor"]
        urls = [f"/s/{QUIET}/poll/tree?after={cursor}", f"/s/{QUIET}/poll/agent?agent=q&after={cursor}",
                f"/api/sessions/{QUIET}/events?after={cursor}"]
        i = 0
        while self._in_window():
            status, _, ms = self._get(connection, urls[i % len(urls)], poll=True)
            i += 1
            self.polls.append(ms)
            time.sleep(0.05)

    def _wait_for_search(self) -> None:
        deadline = time.perf_counter() + 600
        while "search_s" not in self.marks and time.perf_counter() < deadline:
            time.sleep(0.1)

    def _slow_polls(self, over_ms: float = 5) -> dict:
        """The empty polls over `over_ms`: how many overlapped no other request, and what the others overlapped."""
        polls = [span for span in self.spans if span[3]]
        others = [span for span in self.spans if not span[3]]
        slow = [span for span in polls if (span[1] - span[0]) * 1000 > over_ms]
        beside: collections.Counter = collections.Counter()
        alone = 0
        for start, end, _, _ in slow:
            overlapped = {path for s, e, path, _ in others if s < end and e > start}
            alone += not overlapped
            beside.update(overlapped)
        return {"polls": len(polls), "slow": len(slow), "alone": alone, "beside": dict(beside.most_common(8))}

    def run(self) -> dict:
        watchers = (self._watch_listing, self._watch_search) if self.light else (
            self._watch_listing, self._watch_search, self._watch_pages, self._sample_polls)
        threads = [threading.Thread(target=f, daemon=True) for f in watchers]
        for t in threads:
            t.start()
        if self.light:
            self._wait_for_search()
        else:
            self._sample_pages()
        if self.keeps is not None:  # a restart can only be instant once the first run has kept what it read
            deadline = time.perf_counter() + 300
            while len(list(self.keeps.rglob("*.avc"))) < 2 and time.perf_counter() < deadline:
                time.sleep(0.2)
            self._mark("kept_s")
        self.done.set()
        for t in threads:
            t.join(timeout=30)
        memory = self.server.memory()
        self.server.stop()
        return {**self.marks, "pages_ms": summary(self.pages), "polls_ms": summary(self.polls),
                "slow_polls": self._slow_polls(), "peak_rss": memory["peak_rss"], "errors": self.errors[:5]}


def measure(folder: Path, session_id: str, events: int, seconds: float = 60, extra_env: dict | None = None,
            light: bool = False) -> dict:
    """A cold start (an empty cache folder of its own), then a second start on the same files and cache."""
    _quiet_session(folder)
    size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    with tempfile.TemporaryDirectory(prefix="agentview-cache-") as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache, **(extra_env or {})}
        first = Start(folder, session_id, events, seconds, env, keeps=Path(cache), light=light).run()
        second = Start(folder, session_id, events, min(seconds, 15), env, light=light).run()
    for result in (first, second):
        result["peak_rss_to_file"] = round(result["peak_rss"] / size, 3) if result["peak_rss"] else None
    return {"file_bytes": size, "first": first, "restart": second}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("session_id")
    parser.add_argument("events", type=int)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--light", action="store_true", help="ask for nothing but the listing and the search")
    args = parser.parse_args()
    result = measure(Path(args.folder), args.session_id, args.events, args.seconds, light=args.light)
    report(result, args.json)


if __name__ == "__main__":
    main()
