"""Requests come first: a request is under way while the app makes its answer, and, behind waitress, from when
its headers are read until its answer is written; work that gives way waits for it (at most its bound), then
goes on at once."""

import socket
import threading
import time

import pytest
from flask import Response, request

from conftest import wait_for
from viewer.core.foreground import WAIT_PER_WORK, Foreground
from viewer.web.app import create_app
from viewer.web.channel import counted_server
from viewer.web.state import KEY


def _app(tmp_path):
    (tmp_path / "s.jsonl").write_text('{"message_id": "m0", "event_type": "agent_created", "agent_id": "a"}\n')
    app = create_app(tmp_path, watch=False)
    foreground = app.extensions[KEY].runtime.foreground
    seen = {"foreground": foreground}

    @app.route("/_busy")
    def busy():
        seen["in view"] = seen["foreground"].busy()
        return "ok"

    return app, seen


def test_a_request_is_under_way_while_it_is_answered(tmp_path):
    app, seen = _app(tmp_path)
    foreground = seen["foreground"]
    client = app.test_client()
    assert not foreground.busy()
    assert client.get("/_busy").data == b"ok"
    assert seen["in view"] is True
    assert not foreground.busy()


def test_a_failing_request_is_no_longer_counted(tmp_path):
    app, seen = _app(tmp_path)
    foreground = seen["foreground"]
    client = app.test_client()
    assert client.get("/no/such/page").status_code == 404
    assert not foreground.busy()


def test_each_app_counts_its_own_requests(tmp_path):
    """Two apps in one process: a request to one does not hold up the other's ingest."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (one, seen), (other, theirs) = _app(tmp_path / "a"), _app(tmp_path / "b")
    assert one.test_client().get("/_busy").data == b"ok"
    assert seen["in view"] is True and not theirs["foreground"].busy()
    assert seen["foreground"] is not theirs["foreground"]


def test_give_way_waits_for_the_request_and_no_longer():
    foreground = Foreground()
    assert not foreground.busy()
    began = time.monotonic()
    foreground.give_way(5.0)  # nothing under way: at once
    assert time.monotonic() - began < 1.0

    foreground.enter()
    threading.Timer(0.2, foreground.leave).start()
    began = time.monotonic()
    foreground.give_way(30.0)  # returns when the request ends, not after its bound
    waited = time.monotonic() - began
    assert 0.15 <= waited < 10.0
    assert not foreground.busy()


def test_give_way_is_bounded_while_requests_never_end():
    foreground = Foreground()
    with foreground.serving():
        began = time.monotonic()
        foreground.give_way(0.05)
        assert time.monotonic() - began < 5.0
        assert foreground.busy()
    assert not foreground.busy()


def _work(seconds: float) -> float:
    """Keep the processor busy for `seconds`, as a step of background work does; how long it took."""
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        pass
    return time.monotonic() - began


def test_steady_requests_leave_the_work_half_of_the_time():
    """Fifty live pages polling keep a request always under way: the work still runs, waiting at most as long
    as it worked."""
    foreground = Foreground()
    with foreground.serving():
        _work(0.05)  # worked a while: its credit is full
        foreground.give_way()
        worked = waited = 0.0
        for _ in range(50):
            worked += _work(0.002)  # a step of work
            began = time.monotonic()
            foreground.give_way()
            waited += time.monotonic() - began
    assert 0 < waited <= WAIT_PER_WORK * worked * 1.5 + 0.01


# --- through waitress: counted from its headers until its answer is written -----------------------------

@pytest.fixture
def served(tmp_path):
    """The app behind waitress with the counting connections the command line uses, in this process (so that
    the test sees what the ingest thread would), on a free port."""
    app, seen = _app(tmp_path)

    @app.post("/_echo")
    def echo():
        return request.get_data()

    @app.get("/_big")
    def big():
        def body():  # written by waitress after the app has returned: more than its buffers keep
            seen["made"] = True
            for _ in range(3):
                yield b"x" * (BIG // 3)
        return Response(body())

    server = counted_server(app, seen["foreground"], host="127.0.0.1", port=0, threads=2)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield server.effective_port, seen["foreground"], seen
    server.task_dispatcher.shutdown()
    server.close()


BIG = 64 * 1024 * 1024  # more than waitress keeps in its buffers (16 MB) and the sockets': its thread waits to write


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def _until(condition) -> bool:
    return bool(wait_for(condition, timeout=10.0, interval=0.005))


def _another_request_answered(port: int) -> bool:
    """A whole request on a connection of its own, answered: the server has taken in what was sent before it
    (one loop reads every connection), so what is or is not under way is now settled."""
    with _connect(port) as client:
        client.sendall(b"GET /_busy HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answer = b""
        while data := client.recv(65536):
            answer += data
    return answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"ok")


def test_a_request_is_under_way_from_its_headers_until_it_is_answered(served):
    port, foreground, _ = served
    with _connect(port) as client:
        client.sendall(b"POST /_echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n")
        assert _another_request_answered(port)
        assert _until(lambda: not foreground.busy())  # half a request's headers: nothing to answer yet
        client.sendall(b"\r\nab")
        assert _until(foreground.busy)  # its headers are in: counted before the app is called
        assert _another_request_answered(port)
        assert foreground.busy()  # the app waits for the rest of the body: still under way
        client.sendall(b"cde")
        answer = b""
        while not answer.endswith(b"abcde"):
            answer += client.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200")
    assert _until(lambda: not foreground.busy())


def test_a_request_is_under_way_while_its_answer_is_written(served):
    port, foreground, seen = served
    with _connect(port) as client:
        client.sendall(b"GET /_big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert _until(lambda: seen.get("made"))
        assert _another_request_answered(port)
        assert foreground.busy()  # the app has returned; waitress's thread waits to write what the client does not read
        received = 0
        while received < BIG:
            data = client.recv(1 << 20)
            assert data, received
            received += len(data)
    assert _until(lambda: not foreground.busy())


def test_a_request_cut_off_by_its_client_is_no_longer_counted(served):
    port, foreground, _ = served
    client = _connect(port)
    client.sendall(b"POST /_echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nonly part")
    assert _until(foreground.busy)
    client.close()  # the body never comes: waitress never serves the request
    assert _until(lambda: not foreground.busy())
