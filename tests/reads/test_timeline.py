"""The timeline on sessions written with known times: lanes nested as the tree, each model call, tool call and
wait where it was, failures marked, a sub-agent's lane marked where its call created it; the order of events
when a log has no times; a range; and a lane of thousands of calls drawn in at most one bar per unit."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import write_events
from events import calls, created, entry, result, say, tool_call, user
from viewer.library.library import Library
from viewer.reads.session_viewer import load_index
from viewer.reads.timeline import LANES, TIME, WIDTH, timeline

T0 = 1769940000.0  # 2026-02-01T10:00:00Z


def at(seconds: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(T0 + seconds, timezone.utc).isoformat().replace("+00:00", "Z")


def timed(event: dict, seconds: float) -> dict:
    return {**event, "timestamp": at(seconds)}


@pytest.fixture
def session(tmp_path) -> Path:
    """A lead asked at 0 s answers with a task call at 2 s (a worker, created at 3 s, works 3-9 s); the task's
    result at 10 s; a shell call at 12 s fails at 15 s; the lead answers at 16 s, a person writes again at 40 s
    (a wait), the lead answers at 41 s."""
    return write_events(tmp_path / "run.jsonl", [
        timed(created("c0", "lead", name="Lead"), 0),
        timed(user("u1", "lead", "Fix the build"), 0),
        timed(calls("a1", "lead", tool_call("t1", "task", name="Worker")), 2),
        timed(created("c1", "worker", cause="a1", name="Worker"), 3),
        timed(user("w1", "worker", "Find the failing test", substance="a1"), 3),
        timed(calls("w2", "worker", tool_call("g1", "grep", pattern="FAIL")), 5),
        timed(result("w3", "worker", "g1", "tests/test_x.py: FAIL", name="grep"), 8),
        timed(say("w4", "worker", "test_x fails"), 9),
        timed(result("r1", "lead", "t1", "test_x fails"), 10),
        timed(calls("a2", "lead", tool_call("b1", "bash", command="make")), 12),
        timed(entry("r2", "lead", "tool", "make: *** [all] Error 2", tool_call_id="b1", name="bash", is_error=True), 15),
        timed(say("a3", "lead", "The build fails in test_x."), 16),
        timed(user("u2", "lead", "Then fix test_x"), 40),
        timed(say("a4", "lead", "Done."), 41),
    ])


def units(seconds: float, low: float = 0, high: float = 41) -> float:
    return round(seconds / (high - low) * WIDTH, 2)


def test_bars_stand_where_the_log_says_they_happened(session):
    data = timeline(load_index(session))
    assert data["axis"] == TIME and (data["start"], data["end"]) == (T0, T0 + 41)
    lead, worker = data["lanes"]
    assert (lead["name"], lead["depth"], worker["name"], worker["depth"]) == ("Lead", 0, "Worker", 1)
    got = {(bar["kind"], bar["x"], round(bar["w"], 1), bar["failed"]) for bar in lead["bars"]}
    assert got == {
        ("model", units(0), round(units(2), 1), 0), ("model", units(10), round(units(2), 1), 0),
        ("model", units(15), round(units(1), 1), 0), ("model", units(40), round(units(1), 1), 0),
        ("tool", units(2), round(units(8), 1), 0), ("tool", units(12), round(units(3), 1), 1),
        ("wait", units(16), round(units(24), 1), 0),
    }
    assert lead["failures"] == 1 and worker["failures"] == 0
    assert worker["spawned_at"] == units(2)  # the lead's task call that created it
    assert {(bar["kind"], bar["x"]) for bar in worker["bars"]} == {("model", units(3)), ("tool", units(5)),
                                                                  ("model", units(8))}
    longest = [(call["name"], call["length"], call["failed"]) for call in data["longest"]]
    assert longest[0] == ("task", 8.0, False)
    assert set(longest[1:3]) == {("grep", 3.0, False), ("bash", 3.0, True)}  # as long as each other
    assert longest[3] == ("model", 2.0, False) and len(longest) == 9  # 6 model calls, 3 tool calls


def test_a_range_keeps_what_overlaps_it(session):
    data = timeline(load_index(session), T0 + 11, T0 + 20)
    lead, worker = data["lanes"]
    assert worker["bars"] == [] and worker["spawned_at"] is None
    assert {bar["kind"] for bar in lead["bars"]} == {"tool", "model", "wait"}
    failed = next(bar for bar in lead["bars"] if bar["failed"])
    assert (failed["x"], round(failed["w"], 2)) == (round(1 / 9 * WIDTH, 2), round(3 / 9 * WIDTH, 2))
    assert [call["name"] for call in data["longest"]] == ["bash", "model", "model"]  # what overlaps the range
    assert all(0 <= tick["x"] <= WIDTH for tick in data["ticks"])


def test_without_times_the_axis_is_the_order_of_events(tmp_path):
    path = write_events(tmp_path / "plain.jsonl", [
        created("c0", "lead", name="Lead"), user("u1", "lead", "go"),
        calls("a1", "lead", tool_call("t1", "search", q="x")), result("r1", "lead", "t1", "found"),
        say("a2", "lead", "done")])
    data = timeline(load_index(path), width=1000)
    assert data["axis"] == "order" and (data["first"], data["last"]) == (0.0, 4.0)
    assert {(bar["kind"], bar["x"]) for bar in data["lanes"][0]["bars"]} == {
        ("model", 250.0), ("tool", 500.0), ("model", 750.0)}


def test_thousands_of_calls_are_drawn_in_at_most_one_bar_a_unit(tmp_path):
    events = [timed(created("c0", "lead", name="Lead"), 0)]
    for n in range(3000):
        events += [timed(calls(f"a{n}", "lead", tool_call(f"t{n}", "read", path=str(n))), n),
                   timed(result(f"r{n}", "lead", f"t{n}", "ok", name="read"), n + 0.5)]
    data = timeline(load_index(write_events(tmp_path / "many.jsonl", events)), width=200)
    tools = [bar for bar in data["lanes"][0]["bars"] if bar["kind"] == "tool"]
    assert len(tools) <= 200 and sum(bar["count"] for bar in tools) == 3000


def test_lanes_come_a_page_at_a_time_and_the_longest_calls_from_all(tmp_path):
    events = [timed(created("c0", "lead", name="Lead"), 0)]
    for n in range(LANES + 5):  # each agent's call a second longer: the last agent's the longest
        events += [timed(calls(f"a{n}", "lead", tool_call(f"t{n}", "task", name=f"W{n}")), n * 10),
                   timed(created(f"c{n + 1}", f"w{n}", cause=f"a{n}", name=f"W{n}"), n * 10),
                   timed(calls(f"x{n}", f"w{n}", tool_call(f"s{n}", "sleep")), n * 10 + 1),
                   timed(result(f"y{n}", f"w{n}", f"s{n}", "ok", name="sleep"), n * 10 + 22 + n)]
    path = write_events(tmp_path / "wide.jsonl", events)
    first = timeline(load_index(path))
    assert (first["lanes_total"], len(first["lanes"]), first["first_lane"]) == (LANES + 6, LANES, 0)
    rest = timeline(load_index(path), first_lane=LANES)
    assert [lane["name"] for lane in rest["lanes"]] == [f"W{n}" for n in range(LANES - 1, LANES + 5)]
    assert first["longest"][0]["agent_name"] == f"W{LANES + 4}" == rest["longest"][0]["agent_name"]


def test_a_grown_session_s_timeline_is_drawn_again_as_a_fresh_reading_draws_it(session):
    """The bars are kept per reading: asked again unchanged, the kept ones answer; once the file grew (a result
    ending a call drawn open, a longer call, a new agent), nothing stale is left in the lanes or the longest list."""
    library = Library(session.parent)
    library.scan()
    s = library.get("run")
    write_events(session, [timed(calls("a5", "lead", tool_call("b2", "bash", command="make test")), 42)], mode="a")
    library.refresh(str(session))
    before = timeline(s)
    kept = s.timeline_drawn
    assert timeline(s) == before and s.timeline_drawn is kept  # nothing new: nothing built again
    write_events(session, [timed(created("c9", "late", cause="a5", name="Latecomer"), 43),
                           timed(calls("l1", "late", tool_call("z1", "sleep")), 44),
                           timed(result("l2", "late", "z1", "ok", name="sleep"), 70),
                           timed(result("r3", "lead", "b2", "ok", name="bash"), 90)], mode="a")
    library.refresh(str(session))
    fresh = load_index(session)
    for args in ((), (T0 + 41, T0 + 60), (T0, T0 + 90, 50, 1, 1)):
        assert timeline(s, *args) == timeline(fresh, *args), args
    grown = timeline(s)
    assert grown["longest"][0]["name"] == "bash" and grown["longest"][0]["length"] == 48.0  # ended by its result
    assert [lane["name"] for lane in grown["lanes"]] == ["Lead", "Worker", "Latecomer"]


def test_times_logged_as_epoch_numbers_place_the_bars_too(tmp_path):
    """A log writing its times as milliseconds since the epoch is drawn on time, as ISO times are (core/times.py)."""
    ms = int(T0 * 1000)
    path = write_events(tmp_path / "ms.jsonl", [
        {**created("c0", "lead", name="Lead"), "timestamp": ms}, {**user("u1", "lead", "go"), "timestamp": ms},
        {**calls("a1", "lead", tool_call("t1", "search", q="x")), "timestamp": ms + 2000},
        {**result("r1", "lead", "t1", "found"), "timestamp": ms + 10_000},
        {**say("a2", "lead", "done"), "timestamp": ms + 12_000}])
    data = timeline(load_index(path))
    assert data["axis"] == TIME and (data["first"], data["last"]) == (T0, T0 + 12)
    assert [(call["name"], call["length"]) for call in data["longest"]][0] == ("search", 8.0)


def test_a_response_the_api_failed_is_a_failed_model_call(tmp_path):
    """An error the model's API answered in place of a response (core/failures.py: api error) marks its bar red,
    as a failed result marks its tool call's."""
    path = write_events(tmp_path / "api.jsonl", [
        timed(created("c0", "lead", name="Lead"), 0), timed(user("u1", "lead", "go"), 0),
        timed({**say("a1", "lead", "API Error: 529 overloaded"), "failure": "api error"}, 30),
        timed(user("u2", "lead", "again"), 31), timed(say("a2", "lead", "done"), 32)])
    data = timeline(load_index(path))
    bars = [(bar["x"], bar["failed"]) for bar in data["lanes"][0]["bars"] if bar["kind"] == "model"]
    assert bars == [(0.0, 1), (units(31, 0, 32), 0)]
    assert data["lanes"][0]["failures"] == 1
    assert [(call["message_id"], call["failed"]) for call in data["longest"]] == [("a1", True), ("a2", False)]
