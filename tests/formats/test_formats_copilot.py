"""GitHub Copilot CLI sessions: one events.jsonl with its sub-agents inline (two levels), a failed sub-agent marked.

The file is sample_sessions/copilot, written by its generate_samples.py in the shapes github/copilot-sdk's
session-events.ts defines (see there for the source of each shape)."""

import json

import pytest
from events import copy_samples, scanned
from test_formats_claude_replay import read_whole_and_live

from viewer import formats
from viewer.export import text
from viewer.formats import copilot
from viewer.index import usage
from viewer.reads import queries
from viewer.reads.dialogs import dialog
from viewer.search import query as search

UUID = "b7e3c1d2-4a5f-4b6c-9d8e-0f1a2b3c4d5e"
SESSION = f"{UUID}:events"
EVENTS = f"{UUID}/events.jsonl"
EXPLORE, DUCK, FAILED = "agent-toolu_02", "agent-toolu_04", "agent-toolu_05"


@pytest.fixture
def library(tmp_path):
    return scanned(copy_samples("copilot", tmp_path / "session-state"))


def test_a_session_is_detected_by_content_and_listed_with_its_project_and_title(library):
    s = library.get(SESSION)
    assert len(library.listing()) == 1 and s.format is formats.COPILOT and s.format.label == "GitHub Copilot CLI"
    assert (s.name, s.project, s.title) == (UUID, "shop", "Checkout totals off by a cent")


def test_inline_sub_agents_two_levels_deep_sit_under_the_calls_that_started_them(library):
    s = library.get(SESSION)
    (root,) = queries.tree(s)
    assert [(c["agent_id"], c["name"]) for c in root["children"]] == [
        (EXPLORE, "Explore Agent"), (FAILED, "General Purpose Agent")]
    assert [(c["agent_id"], c["name"]) for c in root["children"][0]["children"]] == [(DUCK, "Rubber Duck")]
    assert queries.created_by(s, s.agents[DUCK])["call_id"] == "toolu_04"
    assert s.agents[DUCK].language_model == "gpt-5-mini"  # its events carry its instance id (agentId)
    # the task given stands for the spawning call; the call's result for the sub-agent's final answer
    prompt = next(s.events[p] for p in s.agents[EXPLORE].entries if s.events[p].get("role") == "user")
    assert prompt["content"] == "Find every place totals are rounded" and prompt["substance"] == s.agents[EXPLORE].cause
    answer = next(e for e in s.events if e.get("tool_call_id") == "toolu_02")
    assert answer["agent_id"] == "main" and s.event(answer["substance"])["agent_id"] == EXPLORE


def test_a_failed_sub_agent_and_a_failed_tool_are_marked(library):
    s = library.get(SESSION)
    assert [(p.kind, p.detail) for p in s.problems] == [
        ("subagent_failed", "sub-agent General Purpose Agent (agent-toolu_05) failed: model call failed (500)")]
    own = [s.events[p] for p in s.agents[FAILED].entries]
    assert own[-1]["markers"] == ["failed"] and "is_error" not in own[-1]  # counted once: on its call's result  # older versions: data.parentToolCallId
    assert "Editing src/totals.py." in [e["content"] for e in own]
    bash = next(e for e in s.events if e.get("tool_call_id") == "toolu_06")
    assert bash["is_error"] and bash["markers"] == ["failed"] and bash["content"] == "1 failed: test_cent_rounding"


def test_usage_per_response_reasoning_and_calls_paired(library):
    s = library.get(SESSION)
    main = usage.for_agent(s, "main")
    assert main["output_tokens"] == 120 + 60 + 30 + 25 + 45  # assistant.usage repeats the 120 already stated
    assert main["input_tokens"] == 5200 and main["cache_read_input_tokens"] == 4000
    first = next(e for e in s.events if e.get("role") == "assistant")
    assert first["thinking"] == ["Totals are summed somewhere: read that first."]
    did = [i for i in queries.perspective(s, "main")["items"] if i["kind"] == "did"]
    assert [(c.get("name") or c["call"]["function"]["name"], len(c["results"])) for i in did for c in i["calls"]] == [
        ("view", 1), ("task", 1), ("task", 1), ("bash", 1)]


def test_search_the_dialog_and_the_markdown_export_cross_the_agents(library):
    s = library.get(SESSION)
    hits = search.search(library.listing(), "Decimals")["hits"]
    assert {h["agent_id"] for h in hits} >= {DUCK, EXPLORE}
    items = dialog(s, ["main", EXPLORE, DUCK])["items"]
    said = [i["event"]["content"] for i in items]
    assert "Yes: floats lose the cent; sum Decimals." in said and "Why are checkout totals off by a cent?" in said
    assert "Is summing floats the bug?" not in said  # the task handed over is the spawning call's message, once
    markdown = text.perspective_markdown(s, "main", include_subagents=True)
    assert "Why are checkout totals off by a cent?" in markdown and "sum Decimals" in markdown


def test_looks_like_from_the_documented_shapes():
    start = {"id": "e1", "timestamp": "2026-05-11T14:00:00.000Z", "parentId": None, "type": "session.start",
             "data": {"sessionId": UUID}}
    assert copilot.looks_like(start) and formats.detect_record(start)[0] is formats.COPILOT
    assert not copilot.looks_like({"type": "session_meta", "payload": {}})  # Codex
    assert not copilot.looks_like({"type": "user", "data": {}})


def test_a_broken_line_is_a_problem_and_hides_nothing_else(tmp_path):
    folder = copy_samples("copilot", tmp_path / "session-state")
    lines = (folder / EVENTS).read_bytes().splitlines(keepends=True)
    lines.insert(4, b'{"id": "x", "type": "assistant.message", "data": {"content": "cut\n')
    (folder / EVENTS).write_bytes(b"".join(lines))
    s = scanned(folder).get(SESSION)
    assert sorted(p.kind for p in s.problems) == ["invalid_json", "subagent_failed"]
    assert len(s.agents) == 4 and s.title == "Checkout totals off by a cent"


def test_a_sub_agent_logging_its_task_as_its_own_prompt_shows_it_once(tmp_path):
    folder = copy_samples("copilot", tmp_path / "session-state")
    lines = (folder / EVENTS).read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"subagent.started"' in line) + 1
    lines.insert(at, json.dumps({"id": "own", "timestamp": "2026-05-11T14:00:09.500Z", "parentId": None,
                                 "agentId": "sa-explore", "type": "user.message",
                                 "data": {"content": "Find every place totals are rounded"}}) + "\n")
    (folder / EVENTS).write_text("".join(lines))
    s = scanned(folder).get(SESSION)
    prompts = [s.events[p]["content"] for p in s.agents[EXPLORE].entries if s.events[p].get("role") == "user"]
    assert prompts == ["Find every place totals are rounded"]


def test_an_event_appended_while_the_viewer_reads_shows(tmp_path):
    folder = copy_samples("copilot", tmp_path / "session-state")
    library = scanned(folder)
    with open(folder / EVENTS, "a") as f:
        f.write(json.dumps({"id": "late", "timestamp": "2026-05-11T14:05:00.000Z", "parentId": None, "agentId": "sa-duck",
                            "type": "assistant.message", "data": {"messageId": "m", "content": "A late thought.",
                                                                  "toolRequests": []}}) + "\n")
    library.refresh(str(folder / EVENTS))
    s = library.get(SESSION)
    assert s.event("late")["agent_id"] == DUCK and s.event("late")["content"] == "A late thought."


@pytest.mark.parametrize("seed", [1, 2])
def test_a_whole_read_and_a_live_read_show_the_same(tmp_path, seed):
    source = copy_samples("copilot", tmp_path / "source")
    whole = read_whole_and_live(source, tmp_path / "live", seed)
    assert whole.get(SESSION).format is formats.COPILOT and len(whole.get(SESSION).agents) > 1
