"""A woken session's tool calls (index_state: taken back when first read): its page and JSON decode none, reading
where each sub-agent's creating call was answered and which calls none answered from its cache entry; what they
show is what a read of its files shows, before and after it grows (in this run, or its files after the restart)."""

from __future__ import annotations

import os
import time

import pytest

from claude_lines import Transcript
from conftest import write_events
from dom import parse
from events import calls, created, result, say, tool_call
from test_agent_status import SESSION, SID, statuses, write_team
from test_group_cache import run
from viewer.core.host import Host
from viewer.core.tuning import Tuning
from viewer.index import failed
from viewer.library import background
from viewer.library.library import Library
from viewer.reads import queries
from viewer.store.session_cache import SessionCache
from viewer.web.app import close_app, create_app

BUILD = {"type": "tool_use", "id": "toolu_B", "name": "Bash", "input": {"command": "make"}}


def write_unanswered(folder):
    """A session that ended two days ago: main asks a sub-agent (agent-ab12) to scan and runs `make`, and neither
    call has its result. The main file's path."""
    return write_team(folder, hours_ago=48, later_calls=(BUILD,))[0]


def answer(main, *call_ids: str) -> None:
    """Results for `call_ids` appended to the main file."""
    late = Transcript(SESSION, "an")
    late.n = 30
    for call_id in call_ids:
        late.user([{"type": "tool_result", "tool_use_id": call_id, "content": "finished"}])
    with main.open("a") as f:
        f.write(late.text())


def shown(folder, cache=None) -> dict:
    """What the session's page and JSON show, read by an app on `folder` (restarted on `cache`, if given), and that
    app (closed by the caller)."""
    app = create_app(folder, watch=False, cache_dir=None if cache is None else str(cache))
    client = app.test_client()
    return {"page": client.get(f"/s/{SID}").data, "json": client.get(f"/api/sessions/{SID}").data}, app


@pytest.fixture
def kept(tmp_path):
    """The session's folder and the cache a first run left (it kept the session)."""
    main = write_unanswered(tmp_path / "logs")
    run(tmp_path / "logs", tmp_path / "cache")
    return tmp_path / "logs", tmp_path / "cache", main


def test_a_woken_sessions_page_and_json_decode_none_of_its_tool_calls_and_show_what_a_read_shows(kept):
    folder, cache, _ = kept
    fresh, fresh_app = shown(folder)
    again, app = shown(folder, cache)
    try:
        s = app.extensions["agentview"].library.get(SID)
        assert s.asleep is None and "calls" not in s.__dict__ and "calls" in s.__dict__["_later"]
        assert again == fresh
        assert statuses(app.test_client()) == {"main": None, "agent-ab12": "stopped"}
        assert "1 failed" in parse(again["page"]).by_id("av-failures-0").text  # `make` went unanswered
        read = fresh_app.extensions["agentview"].library.get(SID)
        with s.lock:
            assert failed.unanswered(s) == failed.unanswered(read) != []
            assert s.call_positions == read.call_positions and s.result_positions == read.result_positions
            assert s.tool_names == read.tool_names == {"task", "bash"}
            assert "_later" not in s.__dict__ or "calls" not in s.__dict__["_later"]
            bound = {name: s.__dict__[name] for name in s.calls.BOUND}
            assert bound == s.calls.bound()  # taken back together: the session's maps are its calls'
    finally:
        close_app(app)
        close_app(fresh_app)


def test_a_woken_session_that_grows_finds_its_calls_answered_from_its_tool_calls(kept):
    """What the entry kept holds for the events it had: a result logged since is found in the calls it decodes."""
    folder, cache, _ = kept
    app = create_app(folder, watch=False, cache_dir=str(cache))
    try:
        s = app.extensions["agentview"].library.get(SID)
        with s.lock:
            assert queries.agent_statuses(s) == {"agent-ab12": "stopped"} and len(failed.unanswered(s)) == 1
            assert "calls" not in s.__dict__
            s.add(result("late-a", "main", "toolu_A", "parse() and lex()"), 10**6)
            assert queries.agent_statuses(s) == {"agent-ab12": "done"}
            s.add(result("late-b", "main", "toolu_B", "built", name="Bash"), 10**6 + 1)
            assert failed.unanswered(s) == []
    finally:
        close_app(app)


def test_a_woken_sessions_calls_answered_in_its_files_after_the_restart_are_shown(kept):
    folder, cache, main = kept
    app = create_app(folder, watch=False, cache_dir=str(cache))
    try:
        client = app.test_client()
        assert statuses(client) == {"main": None, "agent-ab12": "stopped"}
        answer(main, "toolu_A", "toolu_B")
        app.extensions["agentview"].library.scan()
        assert statuses(client) == {"main": None, "agent-ab12": "done"}
        page = parse(client.get(f"/s/{SID}").data)
        assert page.by_id("av-failures-0") is None or "failed" not in page.by_id("av-failures-0").text
        fresh, fresh_app = shown(folder)
        close_app(fresh_app)
        assert {"page": client.get(f"/s/{SID}").data, "json": client.get(f"/api/sessions/{SID}").data} == fresh
    finally:
        close_app(app)


@pytest.mark.parametrize("ended_when_kept", [True, False])
def test_the_unanswered_calls_of_a_session_kept_before_it_ended_are_found_in_its_calls_once_it_has(tmp_path,
                                                                                                  ended_when_kept):
    """A session kept while it runs keeps none (it would find them for no page): woken once it has ended, its page
    counts them from its calls, as a read of its file does; one kept once it ended takes them back."""
    write_events(tmp_path / "logs" / "run.jsonl", [
        created("m0", "root"), say("m1", "root", "go"), calls("m2", "root", tool_call("c1", "fetch")),
        result("m3", "root", "c1", "fetched", name="fetch"), calls("m4", "root", tool_call("c2", "fetch"))])
    then = time.time() - 60  # still for a minute: kept (a session is kept once still for a moment)
    os.utime(tmp_path / "logs" / "run.jsonl", (then, then))
    ended, running = Tuning(settle_after=0.0), Tuning(settle_after=3600.0)
    first = Library(tmp_path / "logs", cache=SessionCache(str(tmp_path / "cache"),
                                                          host=Host(ended if ended_when_kept else running)))
    first.scan()
    while background.step(first):
        pass
    assert failed.finished(first.listing()[0]) is ended_when_kept
    app = create_app(tmp_path / "logs", watch=False, cache_dir=str(tmp_path / "cache"), tuning=ended)
    fresh = create_app(tmp_path / "logs", watch=False, tuning=ended)
    try:
        s = app.extensions["agentview"].library.get("run")
        assert s.asleep is None and "calls" not in s.__dict__  # woken from its entry
        page = app.test_client().get("/s/run").data
        assert ("calls" in s.__dict__) is not ended_when_kept  # read for its unanswered calls only if not kept
        ordinal = app.test_client().get("/api/sessions/run").get_json()["agents"][0]["ordinal"]
        assert "1 failed" in parse(page).by_id(f"av-failures-{ordinal}").text
        assert page == fresh.test_client().get("/s/run").data
    finally:
        close_app(app)
        close_app(fresh)
