"""Comparing two runs: real demo runs written by the demo's own writer, one of them changed where a person
would change it (a prompt), with ids rewritten, agents added, or cut short; and the alignment itself."""

from __future__ import annotations

import json
import os
import random
import re
import time
from pathlib import Path

import pytest

from aio import write_demo
from conftest import write_events
from events import calls, created, say, tool_call, user
from viewer.reads.alignment import align
from viewer.reads.asof import snapshot
from viewer.reads.compare import Run, compare, normalised
from viewer.reads.session_viewer import load_index

PROMPT = "Analyst: the beta numbers the post can quote, please."
CHANGED = "Analyst: only the rating, please."


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory) -> tuple[Path, Path]:
    """Two runs of the demo, each in a folder of its own."""
    first = write_demo(tmp_path_factory.mktemp("run1"))
    second = write_demo(tmp_path_factory.mktemp("run2"))
    return first, second


def rewritten(source: Path, folder: Path, *replacements: tuple[str, str], regex: bool = False) -> Path:
    text = source.read_text(encoding="utf-8")
    for old, new in replacements:
        text = re.sub(old, new, text) if regex else text.replace(old, new)
    folder.mkdir(exist_ok=True)
    path = folder / source.name
    path.write_text(text, encoding="utf-8")
    return path


def test_two_runs_of_the_same_script_agree(demo_runs):
    data = compare(Run(load_index(demo_runs[0])), Run(load_index(demo_runs[1])))
    assert data["agree"] is True and data["first_divergence"] is None
    assert [(p["a"]["name"], p["b"]["name"], p["matched_by"], p["same"]) for p in data["pairs"]] == [
        ("Coordinator", "Coordinator", "name", True), ("Writer", "Writer", "name", True),
        ("Inner", "Inner", "name", True), ("Analyst", "Analyst", "name", True),
        ("Reviewer", "Reviewer", "name", True)]
    assert data["totals"]["a"] == data["totals"]["b"]
    assert data["totals"]["a"]["agents"] == 5 and data["totals"]["a"]["entries"] == 56


def test_a_changed_prompt_is_the_first_divergence(demo_runs, tmp_path):
    assert PROMPT in demo_runs[1].read_text()
    changed = rewritten(demo_runs[1], tmp_path / "b", (PROMPT, CHANGED))
    a, b = load_index(demo_runs[0]), load_index(changed)
    data = compare(Run(a), Run(b))
    assert data["agree"] is False
    first = data["first_divergence"]
    # The coordinator's call that carries the prompt, then the Analyst hearing it: nothing else differs.
    assert first["a"]["name"] == "Coordinator" and first["a_entry"]["tools"] == ["discuss"]
    assert PROMPT in first["a_entry"]["text"] and CHANGED in first["b_entry"]["text"]
    assert a.events[first["a_entry"]["position"]]["message_id"] == first["a_entry"]["message_id"]
    changes = {p["a"]["name"]: [h for h in p["hunks"] if not h["equal"]] for p in data["pairs"]}
    assert {name: len(hunks) for name, hunks in changes.items()} == {
        "Coordinator": 1, "Writer": 0, "Inner": 0, "Analyst": 1, "Reviewer": 0}
    heard = changes["Analyst"][0]
    assert [e["kind"] for e in heard["a"]] == ["heard"] and heard["b"][0]["text"] == CHANGED
    assert (heard["a_end"] - heard["a_start"], heard["b_end"] - heard["b_start"]) == (1, 1)


def test_agents_are_matched_by_name_and_place_never_by_id(demo_runs, tmp_path):
    renamed = rewritten(demo_runs[1], tmp_path / "b", (r"agent_0*(\d+)", r"worker-\1"), (r"msg_0*(\d+)", r"m\1"),
                        regex=True)
    b = load_index(renamed)
    assert "agent_001" not in b.agents
    data = compare(Run(load_index(demo_runs[0])), Run(b))
    assert data["agree"] is True
    assert [(p["a"]["agent_id"], p["b"]["agent_id"]) for p in data["pairs"]][:2] == [
        ("agent_001", "worker-1"), ("agent_002", "worker-2")]
    # A sub-agent named otherwise in B is still its counterpart: the same place under the same parent.
    other = rewritten(demo_runs[1], tmp_path / "c", ('"name": "Inner"', '"name": "Muse"'))
    data = compare(Run(load_index(demo_runs[0])), Run(load_index(other)))
    pair = next(p for p in data["pairs"] if p["a"]["name"] == "Inner")
    assert pair["b"]["name"] == "Muse" and pair["matched_by"] == "place" and pair["same"]
    assert not data["only_in_a"] and not data["only_in_b"]


def test_an_agent_only_one_run_has_is_listed_with_its_subtree(demo_runs, tmp_path):
    extra = [
        {"message_id": "x1", "event_type": "transcript_entry", "agent_id": "agent_001", "role": "assistant",
         "tool_calls": [{"id": "call_fact", "function": {"name": "task", "arguments": '{"name": "FactChecker"}'}}]},
        {"message_id": "x2", "event_type": "agent_created", "agent_id": "agent_fc", "cause": "x1",
         "name": "FactChecker"},
        {"message_id": "x3", "event_type": "transcript_entry", "agent_id": "agent_fc", "role": "assistant",
         "content": "All numbers check out."},
        {"message_id": "x4", "event_type": "transcript_entry", "agent_id": "agent_fc", "role": "assistant",
         "tool_calls": [{"id": "call_sub", "function": {"name": "task", "arguments": '{"name": "Sub"}'}}]},
        {"message_id": "x5", "event_type": "agent_created", "agent_id": "agent_sub", "cause": "x4", "name": "Sub"},
    ]
    longer = rewritten(demo_runs[1], tmp_path / "b")
    write_events(longer, extra, mode="a")
    data = compare(Run(load_index(demo_runs[0])), Run(load_index(longer)))
    assert [agent["name"] for agent in data["only_in_b"]] == ["FactChecker", "Sub"] and not data["only_in_a"]
    assert data["totals"]["b"]["agents"] == data["totals"]["a"]["agents"] + 2
    coordinator = data["pairs"][0]
    assert coordinator["metrics"]["b"]["agents_spawned"] == coordinator["metrics"]["a"]["agents_spawned"] + 1
    inserted = [h for h in coordinator["hunks"] if not h["equal"]]
    assert len(inserted) == 1 and not inserted[0]["a"] and inserted[0]["b"][0]["message_id"] == "x1"
    assert data["first_divergence"]["a_entry"] is None and data["first_divergence"]["b_entry"]["message_id"] == "x1"
    # The other way round, the agents are A's alone.
    data = compare(Run(load_index(longer)), Run(load_index(demo_runs[0])))
    assert [agent["name"] for agent in data["only_in_a"]] == ["FactChecker", "Sub"]


def test_one_session_as_of_two_points(demo_runs):
    s = load_index(demo_runs[0])
    data = compare(Run(snapshot(s, 30)), Run(s))
    assert data["agree"] is False and data["a"]["as_of"] == 30 and data["b"]["as_of"] is None
    assert data["totals"]["a"]["entries"] < data["totals"]["b"]["entries"]
    for pair in data["pairs"]:  # what A has is where B has it: B only goes on further
        assert all(h["equal"] or not h["a"] for h in pair["hunks"]), pair["a"]["name"]
    first = data["first_divergence"]
    assert first["a_entry"] is None and first["b_entry"]["position"] >= 29


def test_a_subtree_compared_with_a_subtree(demo_runs):
    a, b = load_index(demo_runs[0]), load_index(demo_runs[1])
    data = compare(Run(a, "agent_002"), Run(b, "agent_002"))
    assert [p["a"]["name"] for p in data["pairs"]] == ["Writer", "Inner"] and data["agree"]


def test_ids_times_and_spacing_are_not_differences_but_words_are(tmp_path):
    def session(folder: str, text: str, result: dict) -> Path:
        return write_events(tmp_path / folder / "s.jsonl", [
            {"message_id": "m1", "event_type": "agent_created", "agent_id": "root", "name": "Root"},
            {"message_id": "m2", "event_type": "transcript_entry", "agent_id": "root", "role": "user", "content": text},
            {"message_id": "m3", "event_type": "transcript_entry", "agent_id": "root", "role": "assistant",
             "tool_calls": [{"id": "c1", "function": {"name": "run", "arguments": "{}"}}]},
            {"message_id": "m4", "event_type": "transcript_entry", "agent_id": "root", "role": "tool",
             "tool_call_id": "c1", **result},
        ])

    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir(), (tmp_path / "c").mkdir()
    a = session("a", "Run job 0b7e3f2a-1c44-4a59-9d0e-5f1a2b3c4d5e at 2025-09-03T00:52:31.217Z  now",
                {"content": "ok"})
    b = session("b", "Run job 9a8b7c6d-0000-4111-8222-333344445555 at 2026-01-01T10:00:00Z now",
                {"content": "ok"})
    c = session("c", "Run job 9a8b7c6d-0000-4111-8222-333344445555 at 2026-01-01T10:00:00Z later",
                {"content": "failed: disk full", "is_error": True})
    assert compare(Run(load_index(a)), Run(load_index(b)))["agree"] is True
    data = compare(Run(load_index(a)), Run(load_index(c)))
    assert data["agree"] is False and data["first_divergence"]["a_entry"]["message_id"] == "m2"
    assert (data["totals"]["a"]["failures"], data["totals"]["b"]["failures"]) == (0, 1)
    assert normalised("a  b\n\tc") == "a b c"


def test_secrets_in_compared_entries_are_masked(demo_runs, tmp_path):
    from viewer.core.redact import masking

    secret = "sk-ant-api03-" + "Q" * 40
    changed = rewritten(demo_runs[1], tmp_path / "b", (PROMPT, f"use {secret} for the dashboard"))
    with masking(True):
        shown = json.dumps(compare(Run(load_index(demo_runs[0])), Run(load_index(changed))))
    assert secret not in shown and "use " in shown


def lcs_length(a, b) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        previous = 0
        for j, y in enumerate(b):
            previous, row[j + 1] = row[j + 1], previous + 1 if x == y else max(row[j + 1], row[j])
    return row[-1]


def test_the_alignment_is_a_longest_common_subsequence():
    rng = random.Random(7)
    for _ in range(2000):
        a = [rng.randint(0, 3) for _ in range(rng.randint(0, 14))]
        b = [rng.randint(0, 3) for _ in range(rng.randint(0, 14))]
        aligned = align(a, b)
        at_a = at_b = equal = 0
        for run in aligned.runs:
            assert (run.a_start, run.b_start) == (at_a, at_b)
            if run.equal:
                assert a[run.a_start:run.a_end] == b[run.b_start:run.b_end]
                equal += run.a_end - run.a_start
            at_a, at_b = run.a_end, run.b_end
        assert (at_a, at_b) == (len(a), len(b))
        assert aligned.exact and equal == lcs_length(a, b), (a, b)
        assert all(x.equal != y.equal for x, y in zip(aligned.runs, aligned.runs[1:]))


def test_past_the_most_differences_the_alignment_says_it_is_approximate():
    rng = random.Random(3)
    a, b = [rng.random() for _ in range(900)], [rng.random() for _ in range(900)]
    aligned = align(a, b, most=50)
    assert aligned.exact is False and aligned.runs == [aligned.runs[0]] and not aligned.runs[0].equal
    assert align(list(range(900)), list(range(450)) + [-1] + list(range(450, 900)), most=50).exact


def test_each_agent_s_time_and_the_run_s_are_from_first_entry_to_last(tmp_path):
    def at(seconds):
        return f"2026-02-01T10:00:{seconds:02d}Z"

    def run(name, last, agent_id=None):
        return Run(load_index(write_events(tmp_path / f"{name}.jsonl", [
            {**created("c0", "lead", name="Lead"), "timestamp": at(0)},
            {**user("u1", "lead", "go"), "timestamp": at(1)},
            {**created("c1", "helper", cause="u1", name="Helper"), "timestamp": at(2)},
            {**say("h1", "helper", "alone"), "timestamp": at(5)},
            {**say("a1", "lead", "done"), "timestamp": at(last)},
            {**say("x1", "quiet", "no time")}])), agent_id)

    data = compare(run("a", 20), run("b", 50))
    seconds = {p["a"]["name"]: (p["metrics"]["a"]["seconds"], p["metrics"]["b"]["seconds"]) for p in data["pairs"]}
    assert seconds == {"Lead": (19.0, 49.0), "Helper": (0.0, 0.0), "quiet": (None, None)}
    # the run: from its first entry (in file order) to its last, which has no time here
    assert (data["totals"]["a"]["seconds"], data["totals"]["b"]["seconds"]) == (None, None)
    led = compare(run("a", 20, "lead"), run("b", 50, "lead"))["totals"]  # the lead's subtree: all timed
    assert (led["a"]["seconds"], led["b"]["seconds"]) == (19.0, 49.0)


def test_times_with_and_without_a_zone_subtract_as_logged(tmp_path):
    """A log mixing "Z" times with times without a zone (taken as UTC) still has a length (core/times.py)."""
    path = write_events(tmp_path / "mixed.jsonl", [
        created("c0", "lead", name="Lead"), {**user("u1", "lead", "go"), "timestamp": "2026-02-01T10:00:00"},
        {**say("a1", "lead", "done"), "timestamp": "2026-02-01T10:00:30.5Z"}])
    data = compare(Run(load_index(path)), Run(load_index(path)))
    assert data["pairs"][0]["metrics"]["a"]["seconds"] == 30.5 == data["totals"]["a"]["seconds"]


def test_a_call_left_unanswered_when_the_run_ended_counts_as_a_failure(tmp_path):
    """As the tree and the Failures page count them (index/failed.py): a call no result answered once the session
    ended is a failure of its agent; while the session may still go on, it is not."""
    def run(name, ended):
        path = write_events(tmp_path / f"{name}.jsonl", [
            created("c0", "lead", name="Lead"), user("u1", "lead", "go"),
            calls("a1", "lead", tool_call("t1", "fetch", url="x"))])
        if ended:
            os.utime(path, (time.time() - 7200, time.time() - 7200))
        return Run(load_index(path))

    data = compare(run("going", False), run("ended", True))
    assert (data["pairs"][0]["metrics"]["a"]["failures"], data["pairs"][0]["metrics"]["b"]["failures"]) == (0, 1)
    assert (data["totals"]["a"]["failures"], data["totals"]["b"]["failures"]) == (0, 1)
