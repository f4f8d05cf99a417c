"""The sessions list's rows are kept between polls and made again only for the sessions whose shown values changed
(web/render.py, Rows): a row taken as kept is the row that would be made now, time-dependent counts included."""

from __future__ import annotations

import os
import time

from conftest import write_events
from events import calls, created, result, say, tool_call, user
from viewer.core.tuning import Tuning
from viewer.web.app import create_app
from viewer.web.render import session_rows
from viewer.web.state import KEY


def rows_by_id(app) -> dict:
    with app.test_request_context():
        return {row["id"]: row for row in session_rows(app.extensions[KEY].library.listing())}


def test_a_row_is_kept_until_something_it_shows_changes(tmp_path):
    for name in ("a", "b"):
        write_events(tmp_path / f"{name}.jsonl", [created("c0", "root", name=name), say("m1", "root", "hi")])
    app = create_app(tmp_path, watch=False)
    first, again = rows_by_id(app), rows_by_id(app)
    assert set(first) == {"a", "b"} and all(again[i] is first[i] for i in first)  # taken as kept, not made again
    write_events(tmp_path / "a.jsonl", [say("m2", "root", "more")], mode="a")
    app.extensions[KEY].library.refresh(str(tmp_path / "a.jsonl"))
    third = rows_by_id(app)
    assert third["b"] is first["b"]
    assert (first["a"]["events"], third["a"]["events"]) == (2, 3)  # made again: its count changed
    assert app.test_client().get("/api/sessions").get_json()["sessions"] == [third["a"], third["b"]]


def test_a_kept_row_shows_what_time_changed_a_call_left_unanswered_becomes_a_failure(tmp_path):
    """Nothing is read between the two polls: the session ended meanwhile (its files left alone long enough), so
    its call without a result is now a failure. A row keyed by what was read alone would show the count before."""
    path = write_events(tmp_path / "run.jsonl", [created("m0", "root"), user("m1", "root", "go"),
                                                 calls("m2", "root", tool_call("c1", "fetch")),
                                                 result("m3", "root", "c1", "Error: 503", name="fetch"),
                                                 calls("m4", "root", tool_call("c2", "fetch"))])
    stamp = time.time()
    os.utime(path, (stamp, stamp))
    app = create_app(tmp_path, watch=False, tuning=Tuning(settle_after=1.0))
    client = app.test_client()
    assert client.get("/api/sessions").get_json()["sessions"][0]["failures"] == 1  # the call may still be answered
    time.sleep(max(0.0, stamp + 1.2 - time.time()))
    assert client.get("/api/sessions").get_json()["sessions"][0]["failures"] == 2
