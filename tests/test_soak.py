"""Nothing lost under load: a writer appends 5,000 events/s for 30 s to 3 sessions while 50 clients poll.

A real `agentview serve` process, real files, real HTTP. Every poller must see every event of
its session (or every entry of its agent) exactly once and in order; no 5xx, no server exception.
"""

import http.client
import json
import random
import re
import threading
import time
import urllib.parse

import pytest

from conftest import serve, write_events

pytestmark = pytest.mark.soak

SESSIONS = ["alpha", "beta", "gamma"]
AGENTS = [f"agent_{i}" for i in range(5)]
RATE = 5_000  # events per second, across the sessions
SECONDS = 30
POLL_EVERY = 0.5
STARTED = time.monotonic()
ARTICLE_ID = re.compile(r'<article class="entry[^"]*" id="([^"]+)"')
NEXT_CURSOR = re.compile(r'id="av-poller"[^>]*after=([0-9]+-[0-9]+)')
AT_ONCE = re.compile(r'id="av-poller"[^>]*hx-trigger="load"')  # the answer stopped at its window: more waits


class Poller(threading.Thread):
    """One client: follows a live feed with its cursor, keeping every message id it is given."""

    def __init__(self, base: str, session: str, agent: str | None, stop: threading.Event):
        super().__init__(daemon=True)
        self.base, self.session, self.agent, self.stop = base, session, agent, stop
        self.seen: list[str] = []
        self.statuses: dict[int, int] = {}
        self.errors: list[str] = []
        self.cursor = None
        self.more = False  # the last answer said more waits: ask again at once, as the page does
        self.ready = threading.Event()  # has its starting point: the writer may begin
        self.slowest = 0.0  # seconds, the longest answer (reported, not asserted: timing is not a test)
        self.slowest_path = ""

    def get(self, connection, path):
        began = time.monotonic()
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read().decode()
        if time.monotonic() - began > self.slowest:
            self.slowest, self.slowest_path = time.monotonic() - began, f"{path} at {began - STARTED:.1f} s"
        self.statuses[response.status] = self.statuses.get(response.status, 0) + 1
        return response.status, body

    def poll_once(self, connection) -> bool:
        """Returns whether the answer was "nothing new"."""
        if self.agent is None:
            status, body = self.get(connection, f"/api/sessions/{self.session}/events?after={self.cursor}&limit=2000")
            data = json.loads(body)
            self.seen += [e["message_id"] for e in data["events"]]
            nothing_new = not data["events"]
            self.cursor = data["cursor"]
        else:
            query = urllib.parse.urlencode({"agent": self.agent, "after": self.cursor})
            status, body = self.get(connection, f"/s/{self.session}/poll/agent?{query}")
            nothing_new = status == 204
            self.more = False
            if status == 200:
                self.seen += ARTICLE_ID.findall(body)
                found = NEXT_CURSOR.search(body)
                assert found, (self.cursor, status, body[:500])
                self.cursor = found.group(1)
                self.more = AT_ONCE.search(body) is not None
        return nothing_new

    def run(self):
        parts = urllib.parse.urlsplit(self.base)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        try:
            if self.agent is None:
                self.cursor = "0-0"
            else:  # open the page as a browser does, then follow its poller
                status, body = self.get(connection, f"/s/{self.session}/agents/{self.agent}")
                self.seen += ARTICLE_ID.findall(body)
                self.cursor = NEXT_CURSOR.search(body).group(1)
            while True:
                stopping = self.stop.is_set()
                if self.poll_once(connection) and stopping:
                    return
                self.ready.set()
                if not self.more:  # as a page does: the next poll in about POLL_EVERY, or at once when stopping
                    self.stop.wait(random.uniform(0.5, 1.5) * POLL_EVERY)
        except Exception as exc:  # reported by the test, not lost in a thread
            self.errors.append(repr(exc))


def event(session: str, n: int) -> dict:
    agent = AGENTS[n % len(AGENTS)]
    role = "user" if n % 2 else "assistant"
    return {"message_id": f"{session}-{n}", "event_type": "transcript_entry", "agent_id": agent, "role": role,
            "content": f"message {n} of {session}: " + "lorem ipsum " * random.randint(2, 15)}


def test_nothing_is_lost_or_repeated_under_load(tmp_path):
    random.seed(7)
    for session in SESSIONS:
        write_events(tmp_path / f"{session}.jsonl",
                     [{"message_id": f"{session}-{a}-created", "event_type": "agent_created", "agent_id": a}
                      for a in AGENTS])
    written = {s: [] for s in SESSIONS}
    with serve(tmp_path) as server:
        stop = threading.Event()
        pollers = [Poller(server.url, SESSIONS[i % 3], None, stop) for i in range(25)]
        pollers += [Poller(server.url, SESSIONS[i % 3], AGENTS[i % 5], stop) for i in range(25)]
        for p in pollers:
            p.start()
        for p in pollers:  # each has opened its page (an agent page is live only while it fits on one page)
            assert p.ready.wait(30), (p.session, p.agent, p.errors)

        files = {s: open(tmp_path / f"{s}.jsonl", "ab") for s in SESSIONS}
        started = time.monotonic()
        total, batch_every = 0, 0.01
        while (elapsed := time.monotonic() - started) < SECONDS:
            due = int(elapsed * RATE) + int(RATE * batch_every)
            while total < due:
                session = SESSIONS[total % 3]
                e = event(session, len(written[session]))
                written[session].append(e["message_id"])
                line = (json.dumps(e) + "\n").encode()
                if total % 97 == 0:  # now and then a line arrives in two writes, flushed apart
                    cut = random.randrange(1, len(line))
                    files[session].write(line[:cut])
                    files[session].flush()
                    line = line[cut:]
                files[session].write(line)
                total += 1
            for f in files.values():
                f.flush()
            time.sleep(batch_every)  # the load's rate, not a wait for a condition: nothing is asserted after it
        for f in files.values():
            f.close()
        rate = total / (time.monotonic() - started)
        for session in SESSIONS:  # a poller stops at its first empty answer: only once everything written is read
            server.wait_for_session(session, events=len(AGENTS) + len(written[session]), timeout=120)
        stop.set()
        for p in pollers:
            p.join(timeout=60)
        output = "".join(server.output)

    print(f"\nsoak: {total} events in {SECONDS} s ({rate:.0f}/s) to {len(SESSIONS)} sessions, {len(pollers)} pollers, "
          f"{sum(sum(p.statuses.values()) for p in pollers)} polls, slowest answer {max(p.slowest for p in pollers):.3f} s")
    for p in sorted(pollers, key=lambda p: -p.slowest)[:5]:
        print(f"  {p.slowest:.3f} s {p.slowest_path}")
    assert rate >= RATE * 0.95 and total >= RATE * SECONDS * 0.95, (rate, total)
    assert "Traceback" not in output and " ERROR " not in output, output[-3000:]
    for p in pollers:
        assert not p.errors and not p.is_alive(), (p.session, p.agent, p.errors, [q.slowest for q in pollers])
        assert set(p.statuses) <= {200, 204}, p.statuses
        if p.agent is None:
            expected = [f"{p.session}-{a}-created" for a in AGENTS] + written[p.session]
        else:
            expected = [m for m in written[p.session] if int(m.rsplit("-", 1)[1]) % len(AGENTS) == AGENTS.index(p.agent)]
        assert p.seen == expected, (p.session, p.agent, len(p.seen), len(expected))
