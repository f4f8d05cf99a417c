"""Measurements against a real `agentview serve` process: live latency and the cost of pollers."""

from __future__ import annotations

import http.client
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from probes import REPO, summary

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class Server:
    """`agentview serve FOLDER --port 0` in its own process (as a person would start it)."""

    def __init__(self, folder: Path, *options: str, env: dict | None = None):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "viewer", "serve", str(folder), "--port", "0", *options],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO, env=env,
        )
        self.started = time.perf_counter()
        self.log: list[str] = []  # what it logged before it listened (a cache entry of another version, say)
        while "serving" not in (line := self.process.stdout.readline()):
            self.log.append(line)
            if not line or len(self.log) > 200:
                self.stop()
                raise RuntimeError(f"server did not start: {''.join(self.log)}")
        parts = urlsplit(line.rsplit(" at ", 1)[1].strip())
        self.host, self.port = parts.hostname, parts.port
        # Keep reading its log, so it never blocks on a full pipe.
        threading.Thread(target=lambda: self.log.extend(self.process.stdout), daemon=True).start()

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=30)

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process has used so far (all its threads)."""
        with open(f"/proc/{self.process.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS

    def memory(self) -> dict:
        """Resident memory now and at its peak (VmRSS, VmHWM), in bytes."""
        values = {}
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    values[key] = int(rest.split()[0]) * 1024
        return {"rss": values.get("VmRSS"), "peak_rss": values.get("VmHWM")}

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def get_json(connection: http.client.HTTPConnection, url: str) -> dict:
    connection.request("GET", url)
    response = connection.getresponse()
    body = response.read()
    if response.status != 200:
        raise RuntimeError(f"GET {url}: {response.status} {body[:200]!r}")
    return json.loads(body)


def wait_until_read(server: Server, session_id: str, events: int, timeout: float) -> float:
    """Seconds from the server's start until it serves all `events` of the session."""
    connection = server.connection()
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        try:
            if get_json(connection, f"/api/sessions/{session_id}")["events"] >= events:
                return time.perf_counter() - server.started
        except (RuntimeError, OSError, http.client.HTTPException):
            connection.close()
            connection = server.connection()
        time.sleep(0.05)
    raise RuntimeError(f"the server did not read {events} events within {timeout} s")


def live_latency(server: Server, path: Path, session_id: str, samples: int, agent_id: str) -> dict:
    """A line appended to the file until the events endpoint returns it, as a client polling nonstop sees it.

    The client asks every 2 ms (a page polls every second, which adds up to one second on top).
    """
    connection = server.connection()
    cursor = get_json(connection, f"/api/sessions/{session_id}")["cursor"]
    rng = random.Random(2)
    latencies = []
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        for i in range(samples):
            time.sleep(rng.uniform(0.02, 0.1))  # writes arrive at random moments, not in step with polls
            message_id = f"live_{time.time_ns()}_{i}"
            line = json.dumps({"message_id": message_id, "event_type": "transcript_entry", "agent_id": agent_id,
                               "role": "assistant", "content": f"live sample {i}"}) + "\n"
            written = time.perf_counter()
            os.write(fd, line.encode())
            while True:
                data = get_json(connection, f"/api/sessions/{session_id}/events?after={cursor}")
                cursor = data["cursor"]
                if any(event["message_id"] == message_id for event in data["events"]):
                    latencies.append((time.perf_counter() - written) * 1000)
                    break
                if time.perf_counter() - written > 30:
                    raise RuntimeError(f"{message_id} not served after 30 s")
                time.sleep(0.002)
    finally:
        os.close(fd)
    return summary(latencies)


def poller_urls(session_id: str, agent_id: str, cursor: str) -> list[str]:
    """What open pages ask every second: the session page, an agent page, a dialog, a script on the API."""
    return [f"/s/{session_id}/poll/tree?after={cursor}",
            f"/s/{session_id}/poll/agent?agent={agent_id}&after={cursor}",
            f"/s/{session_id}/poll/dialog?agents={agent_id},a2,a3&after={cursor}",
            f"/api/sessions/{session_id}/events?after={cursor}"]


def pollers_cost(server: Server, session_id: str, agent_id: str, pollers: int, seconds: float) -> dict:
    """Server CPU time while nothing polls, then while `pollers` clients each poll once a second."""
    cursor = get_json(server.connection(), f"/api/sessions/{session_id}")["cursor"]
    cpu, start = server.cpu_seconds(), time.perf_counter()
    time.sleep(seconds / 4)
    idle = (server.cpu_seconds() - cpu) / (time.perf_counter() - start) * 100
    urls = poller_urls(session_id, agent_id, cursor)
    times: list[float] = []
    statuses: dict[int, int] = {}
    errors: list[str] = []
    stop = threading.Event()
    lock = threading.Lock()

    def poll(i: int) -> None:
        connection, url = server.connection(), urls[i % len(urls)]
        due = time.perf_counter() + i / pollers  # spread over the second, as independent pages are
        while not stop.is_set():
            stop.wait(max(0.0, due - time.perf_counter()))
            if stop.is_set():
                break
            t = time.perf_counter()
            try:
                connection.request("GET", url)
                response = connection.getresponse()
                response.read()
                with lock:
                    times.append((time.perf_counter() - t) * 1000)
                    statuses[response.status] = statuses.get(response.status, 0) + 1
            except (OSError, http.client.HTTPException) as error:
                with lock:
                    errors.append(repr(error))
                connection.close()
                connection = server.connection()
            due += 1.0

    threads = [threading.Thread(target=poll, args=(i,), daemon=True) for i in range(pollers)]
    for thread in threads:
        thread.start()
    time.sleep(1.5)  # every poller has connected and polled once
    with lock:
        times.clear()
        statuses.clear()
    cpu, start = server.cpu_seconds(), time.perf_counter()
    time.sleep(seconds)
    used, elapsed = server.cpu_seconds() - cpu, time.perf_counter() - start
    with lock:
        requests, response_ms, answered = len(times), summary(times) if times else {}, dict(statuses)
    stop.set()
    for thread in threads:
        thread.join(timeout=5)
    return {"pollers": pollers, "seconds": round(elapsed, 2), "requests": requests,
            "requests_per_s": round(requests / elapsed, 1), "statuses": {str(k): v for k, v in answered.items()},
            "errors": len(errors), "cpu_seconds": round(used, 2), "cpu_percent": round(used / elapsed * 100, 1),
            "idle_cpu_percent": round(idle, 1), "response_ms": response_ms, "urls": urls}


def measure(folder: Path, session_id: str, events: int, agent_id: str, samples: int, pollers: int,
            seconds: float, timeout: float = 1800) -> dict:
    """Start a server on the folder, wait until it has read the session, then measure it live."""
    server = Server(folder)
    try:
        ready = wait_until_read(server, session_id, events, timeout)
        # The search index and the facets are built after ingest (in the background); a search meanwhile
        # answers at once as far as the index is built (`partial`). Asked until it searched every event, so the
        # latency and pollers below see a server at rest, not one indexing.
        deadline = time.perf_counter() + timeout
        while (searched := get_json(server.connection(), f"/api/search?q=cache&session={session_id}"))["partial"]:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"the session was not searched whole within {timeout:.0f} s")
            time.sleep(0.05)
        search_ready = time.perf_counter() - server.started
        if not searched["results"]:
            raise RuntimeError("a search of the whole session found nothing")
        get_json(server.connection(), f"/api/sessions/{session_id}/hooks")  # and the facets (built with it)
        memory = server.memory()
        latency = live_latency(server, folder / f"{session_id}.jsonl", session_id, samples, agent_id)
        cost = pollers_cost(server, session_id, agent_id, pollers, seconds)
    finally:
        server.stop()
    return {"ready_seconds": round(ready, 2), "search_ready_seconds": round(search_ready, 2), "server_memory": memory, "latency_ms": latency, "pollers": cost}
