"""The server keeps answering whatever its clients do: idle and half-sent connections, descriptors
numbered past 1023, access tokens kept out of the log, an empty token refused, huge numbers in the
query string answered 400."""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import resource
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest

from conftest import REPO, serve, wait_for, write_events
from events import created, say
from viewer.web.app import create_app


def address(url: str) -> tuple[str, int]:
    parts = urllib.parse.urlsplit(url)
    return parts.hostname, parts.port


@contextlib.contextmanager
def idle_clients(url: str, count: int, half_request_every: int = 2):
    """`count` open connections: every `half_request_every`-th sends half a request, the others nothing."""
    host, port = address(url)
    sockets = []
    try:
        for i in range(count):
            connection = socket.create_connection((host, port), timeout=5)
            if i % half_request_every == 0:
                connection.sendall(b"GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never finished
            sockets.append(connection)
        yield sockets
    finally:
        for connection in sockets:
            connection.close()


def taken_in(pid: int, count: int) -> bool:
    """Whether the server holds `count` accepted connections (besides the one it listens on); where there is no
    /proc to tell, the first request below finds out the same."""
    folder = f"/proc/{pid}/fd"
    if not os.path.isdir(folder):
        return True
    held = 0
    for fd in os.listdir(folder):
        with contextlib.suppress(OSError):
            held += os.readlink(f"{folder}/{fd}").startswith("socket:")
    return held > count


def timed_get(url: str, path: str, timeout: float, headers: dict | None = None) -> tuple[int, float]:
    host, port = address(url)
    started = time.monotonic()
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        response.read()
        return response.status, time.monotonic() - started
    finally:
        connection.close()


def test_200_idle_or_slow_clients_do_not_keep_a_new_client_waiting(tmp_path):
    write_events(tmp_path / "s.jsonl", [created("m1", "a", name="A"), say("m2", "a", "hello")])
    with serve(tmp_path) as server:
        server.wait_for_session("s", 2)
        with idle_clients(server.url, 200):
            wait_for(lambda: taken_in(server.process.pid, 200))
            for path in ["/api/sessions", "/s/s", "/api/sessions/s/events"]:
                status, seconds = timed_get(server.url, path, timeout=5)
                assert status == 200 and seconds < 1.0, (path, status, seconds)
        assert server.process.poll() is None


def _answers(sock: socket.socket, count: int) -> list[bytes]:
    """The heads of the next `count` answers on `sock` (answers without a body: 204s)."""
    data = b""
    while data.count(b"\r\n\r\n") < count:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n\r\n")[:count]


def test_empty_polls_keep_their_connection_open(tmp_path):
    """An empty poll is answered 204, which has no body and must not say its length: the connection stays open for
    the next poll (waitress closed it after any answer without a length, so each poll of an open page cost a new
    connection). A client asking to close still has it closed."""
    write_events(tmp_path / "s.jsonl", [created("m1", "a", name="A"), say("m2", "a", "hello")])
    with serve(tmp_path) as server:
        server.wait_for_session("s", 2)
        host, port = address(server.url)
        polls = ["/s/s/poll/tree?after=0-2", "/s/s/poll/agent?agent=a&after=0-2", "/s/s/poll/tree?after=0-2"]
        with socket.create_connection((host, port), timeout=5) as sock:
            for path in polls:  # one at a time, each on the connection the one before was answered on
                sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
                [head] = _answers(sock, 1)
                assert head.startswith(b"HTTP/1.1 204 "), head
                assert b"connection: close" not in head.lower() and b"content-length" not in head.lower(), head
            sock.sendall(f"GET {polls[0]} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            [head] = _answers(sock, 1)
            assert head.startswith(b"HTTP/1.1 204 ") and b"connection: close" in head.lower(), head
            sock.settimeout(5)
            assert sock.recv(1) == b""  # closed by the server, as asked


def test_descriptors_numbered_past_1023_do_not_stop_the_server(tmp_path):
    """select() cannot watch a descriptor numbered 1024 or more: 1,100 idle connections plus held
    session files hand the next connection such a number. The server (under a limit of 4,096) answers."""
    needed = 1300
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"this machine allows only {hard} open files per process")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    for i in range(200):
        write_events(tmp_path / f"s{i:03d}.jsonl", [created(f"m{i}", "a", name="A"), say(f"n{i}", "a", "hi")])
    command = ["sh", "-c", 'ulimit -n 4096 && exec "$@"', "sh",  # soft and hard: the server cannot raise it
               sys.executable, "-m", "viewer", "serve", str(tmp_path), "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO)
    try:
        line = process.stdout.readline()
        assert "serving" in line, line + process.stdout.read()
        url = line.rsplit(" at ", 1)[1].strip().rstrip("/")
        with idle_clients(url, 1100, half_request_every=5):
            wait_for(lambda: taken_in(process.pid, 1100), timeout=10)
            status, seconds = timed_get(url, "/api/sessions", timeout=10)
            assert status == 200 and seconds < 2.0, (status, seconds)
            if os.path.isdir(f"/proc/{process.pid}/fd"):  # the case is real: it holds such descriptors
                assert max(int(fd) for fd in os.listdir(f"/proc/{process.pid}/fd")) > 1023
                assert re.search(r"Max open files\s+4096\s+4096", Path(f"/proc/{process.pid}/limits").read_text())
        status, _ = timed_get(url, "/api/sessions/s199", timeout=10)
        assert status == 200 and process.poll() is None
    finally:
        process.terminate()
        output = process.communicate(timeout=10)[0]
    assert "out of range" not in output, output[-2000:]


# --- the access token -------------------------------------------------------------------------

TOKEN = "tok-3f9a1c7e5b2d4a6c8e0f"
KEY = "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vW7"
WRONG = "guess-77a1b2c3d4e5f6a7"


def test_the_access_token_is_never_written_to_the_log(tmp_path):
    write_events(tmp_path / "s.jsonl", [created("m1", "a")])
    with serve(tmp_path, "--token", TOKEN) as server:
        assert timed_get(server.url, f"/api/sessions?token={WRONG}", 5)[0] == 401
        assert timed_get(server.url, f"/s/s?x=1&token={TOKEN}", 5)[0] == 302
        assert timed_get(server.url, f"/static/agentview.css?token={TOKEN}&y=2", 5)[0] == 302
        assert timed_get(server.url, f"/nowhere?token={TOKEN}", 5)[0] == 302
        with_cookie = {"Cookie": f"agentview_token={TOKEN}"}
        assert timed_get(server.url, f"/s/s/messages/{KEY}", 5, with_cookie)[0] == 404
        # the log is read by a thread: until the last request's line is in
        wait_for(lambda: "[masked] 404" in "".join(server.output[1:]))
        log = "".join(server.output[1:])  # after the first line, which prints the address to open
    assert "GET /api/sessions?token=[masked] 401" in log  # the request is logged, its token is not
    assert TOKEN not in log and WRONG not in log, log
    assert f"/s/s/messages/{KEY[:4]}…[masked] 404" in log and KEY[4:] not in log  # secrets in addresses too


@pytest.mark.parametrize("extra", [[], ["--host", "0.0.0.0"]])
@pytest.mark.parametrize("token", ["", "  "])
def test_an_empty_token_is_refused(tmp_path, extra, token):
    run = subprocess.run([sys.executable, "-m", "viewer", "serve", str(tmp_path), "--port", "0", "--token", token,
                          *extra], capture_output=True, text=True, cwd=REPO, timeout=20)
    assert run.returncode == 2 and "--token is empty" in run.stderr, run
    assert "serving" not in run.stdout


def test_create_app_refuses_an_empty_token(tmp_path):
    from viewer.web.security import EmptyToken

    with pytest.raises(EmptyToken):
        create_app(tmp_path, watch=False, token="")


# --- numbers in the query string ------------------------------------------------------------------

HUGE = "9" * 4000
# Every view that reads a number (or a cursor of numbers) from the query string, with that parameter.
NUMBER_PARAMS = [
    ("/s/s/agents/a", "start"), ("/s/s/agents/a", "limit"), ("/s/s/agents/a", "at"),
    ("/api/sessions/s/agents/a", "start"), ("/api/sessions/s/agents/a", "limit"),
    ("/s/s/dialog?agents=a,b", "start"), ("/s/s/dialog?agents=a,b", "limit"),
    ("/api/sessions/s/dialog?agents=a,b", "start"), ("/api/sessions/s/dialog?agents=a,b", "limit"),
    ("/api/sessions/s/events", "limit"), ("/s/s", "at"), ("/api/sessions/s", "at"),
    ("/s/s/chart", "start"), ("/s/s/chart", "size"), ("/api/sessions/s/chart", "start"),
    ("/api/sessions/s/chart", "size"),
    ("/s/s/hooks", "start"), ("/s/s/hooks", "limit"), ("/s/s/hooks", "from"),
    ("/api/sessions/s/hooks", "start"), ("/api/sessions/s/hooks", "limit"), ("/api/sessions/s/hooks", "from"),
    ("/api/sessions/s/hooks?agent=a", "start"), ("/api/sessions/s/hooks?agent=a", "limit"),
    ("/search?q=hello", "limit"), ("/api/search?q=hello", "limit"),
]
CURSORS = [
    ("/api/sessions/s/events", "after", f"0-{HUGE}"), ("/api/sessions/s/events", "after", f"{HUGE}-1"),
    ("/s/s/poll/tree", "after", f"0-{HUGE}"), ("/s/s/poll/agent?agent=a", "after", f"0-{HUGE}"),
    ("/s/s/poll/dialog?agents=a,b", "after", f"0-{HUGE}"),
    ("/search?q=hello", "from", f"s={HUGE}"), ("/api/search?q=hello", "from", f"s={HUGE}"),
    ("/search/poll?q=hello", "after", f"s=0-{HUGE}"),
]


@pytest.fixture(scope="module")
def number_client(tmp_path_factory):
    folder = tmp_path_factory.mktemp("numbers")
    write_events(folder / "s.jsonl", [created("m1", "a", name="A"), created("m2", "b", name="B"),
                                      say("m3", "a", "hello"), say("m4", "b", "hello")])
    return create_app(folder, watch=False).test_client()


@pytest.mark.parametrize("url, name", NUMBER_PARAMS)
def test_a_4000_digit_number_in_the_query_string_is_a_400(number_client, url, name):
    separator = "&" if "?" in url else "?"
    assert number_client.get(url).status_code == 200, url  # the view itself answers
    for value in (HUGE, "-" + HUGE, "1" + "0" * 15, "twelve"):
        response = number_client.get(f"{url}{separator}{name}={value}")
        assert response.status_code == 400, (url, name, value[:20], response.status_code)
        assert "whole number" in response.get_data(as_text=True)
    assert number_client.get(f"{url}{separator}{name}=2").status_code == 200


@pytest.mark.parametrize("url, name, value", CURSORS)
def test_a_cursor_holding_a_4000_digit_number_is_a_400(number_client, url, name, value):
    separator = "&" if "?" in url else "?"
    response = number_client.get(f"{url}{separator}{name}={value}")
    assert response.status_code == 400, (url, name, response.status_code)
