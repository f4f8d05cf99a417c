"""The sessions list's rows are kept between polls and made again only for the sessions whose shown values changed
(web/render.py, Rows): a row taken as kept is the row that would be made now, time-dependent counts included."""

from __future__ import annotations

import json
import os
import time

from conftest import write_events
from events import calls, created, result, say, tool_call, user
from test_claude_settled import age
from test_group_cache import PROJECT, generate, run
from viewer.core.tuning import Tuning
from viewer.web import render
from viewer.web.app import close_app, create_app
from viewer.web.render import session_rows
from viewer.web.state import KEY


def rows_by_id(app) -> dict:
    library = app.extensions[KEY].library
    with app.test_request_context():
        return {row["id"]: row for row in session_rows(library, library.listing())}


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


def test_a_sleeping_sessions_key_is_read_again_only_once_a_change_to_it_is_told(tmp_path, monkeypatch):
    """A folder of 20,000 is listed at each poll: a session asleep as it was when its row was made, and told of no
    change since, has its row taken without its key read. A change told of it (renamed asleep; a file grown, so it
    wakes and is read) makes its row again; the other sessions' keys are still not read."""
    root = tmp_path / "logs"
    generate(root / PROJECT, 300_000, subagents=2, sessions=3)
    age(root)
    run(root, tmp_path / "cache")
    app = create_app(root, watch=False, cache_dir=tmp_path / "cache")
    library = app.extensions[KEY].library
    assert all(s.asleep is not None for s in library.listing()) and len(library.listing()) == 3
    read = []
    monkeypatch.setattr(render, "key_of", lambda s, key_of=render.key_of: read.append(s.id) or key_of(s))
    first = rows_by_id(app)
    assert len(read) == 3
    read.clear()
    assert rows_by_id(app) == first and read == []
    renamed, grown, left = library.listing()
    old_id = renamed.id
    with library.lock:
        library.rename(renamed, "renamed")
    after = rows_by_id(app)
    assert read == ["renamed"] and renamed.asleep is not None  # its key read again, and still asleep
    assert after["renamed"] == {**first[old_id], "id": "renamed", "url": after["renamed"]["url"]}
    read.clear()
    record = [r for r in map(json.loads, open(grown.path, encoding="utf-8")) if r.get("type") == "user"][-1]
    record.update(uuid="again-" + record["uuid"], parentUuid=record["uuid"])
    with open(grown.path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
    library.refresh(grown.path)
    now = rows_by_id(app)
    assert read == [grown.id] and now[grown.id]["events"] > first[grown.id]["events"]
    assert now[left.id] is first[left.id]
    close_app(app)
