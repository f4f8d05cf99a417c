"""Requests come first: a request is under way while the app makes its answer, and work that gives way
waits for it (at most its bound), then goes on at once."""

import threading
import time

from viewer import foreground
from viewer.web.app import create_app


def _app(tmp_path):
    (tmp_path / "s.jsonl").write_text('{"message_id": "m0", "event_type": "agent_created", "agent_id": "a"}\n')
    app = create_app(tmp_path, watch=False)
    seen = {}

    @app.route("/_busy")
    def busy():
        seen["in view"] = foreground.busy()
        return "ok"

    return app, seen


def test_a_request_is_under_way_while_it_is_answered(tmp_path):
    app, seen = _app(tmp_path)
    client = app.test_client()
    assert not foreground.busy()
    assert client.get("/_busy").data == b"ok"
    assert seen["in view"] is True
    assert not foreground.busy()


def test_a_failing_request_is_no_longer_counted(tmp_path):
    app, _ = _app(tmp_path)
    client = app.test_client()
    assert client.get("/no/such/page").status_code == 404
    assert not foreground.busy()


def test_give_way_waits_for_the_request_and_no_longer():
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
    with foreground.serving():
        began = time.monotonic()
        foreground.give_way(0.05)
        assert time.monotonic() - began < 5.0
        assert foreground.busy()
    assert not foreground.busy()


def test_steady_requests_leave_the_work_half_of_the_time():
    """Fifty live pages polling keep a request always under way: the work still runs, waiting at most as long
    as it worked."""
    with foreground.serving():
        time.sleep(0.05)  # worked a while: its credit is full
        foreground.give_way()
        worked = waited = 0.0
        for _ in range(50):
            began = time.monotonic()
            while time.monotonic() - began < 0.002:  # a step of work
                pass
            worked += time.monotonic() - began
            began = time.monotonic()
            foreground.give_way()
            waited += time.monotonic() - began
    assert 0 < waited <= foreground.WAIT_PER_WORK * worked * 1.5 + 0.01
