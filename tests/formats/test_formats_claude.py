"""Claude Code transcripts: one session per main file and its sub-agent files, in all three layouts."""

import json

import pytest

from conftest import write_events
from events import copy_samples, scanned
from viewer.reads import dialogs, live_updates, queries
from viewer.index import usage

PROJECT = "-home-dev-src-parser"
CURRENT = f"{PROJECT}:5b1e8c2a-audit"
BESIDE = f"{PROJECT}:9c04d7b3-docs"
INLINE = f"{PROJECT}:1a2b3c4d-legacy"


@pytest.fixture
def projects(tmp_path):
    return copy_samples("claude_code", tmp_path / "projects")


@pytest.fixture
def library(projects):
    return scanned(projects)


def shape(node):
    return (node["agent_id"], node["name"], [shape(c) for c in node["children"]])


def test_each_session_is_one_entry_grouped_by_project(library):
    sessions = library.listing()
    assert [s.id for s in sessions] == [INLINE, CURRENT, BESIDE]
    assert {s.format.name for s in sessions} == {"claude-code"}
    assert {s.project for s in sessions} == {PROJECT}
    assert len(library.get(CURRENT).members) == 4 and len(library.get(BESIDE).members) == 2
    assert all(s.problems == [] for s in sessions)


def test_tree_nests_sub_agents_named_from_their_meta(library):
    (root,) = queries.tree(library.get(CURRENT))
    assert shape(root) == ("main", "main agent", [
        ("agent-7e575a11", "Check tests", []),
        ("agent-a11ce5ca", "Scan parser", [("agent-dee9c0de", "Read load()", [])])])
    s = library.get(CURRENT)
    assert s.agents["agent-a11ce5ca"].language_model == "claude-haiku-4-5"
    assert "parent_inferred" not in s.agents["agent-a11ce5ca"].flags  # the meta names the call


@pytest.mark.parametrize("session_id, child, links", [
    (BESIDE, "agent-d0c5a9e1", {"d0c5a9e1-0001": "9c04d7b3-0002", "9c04d7b3-0003": "d0c5a9e1-0002"}),
    (INLINE, "sidechain-1a2b3c4d", {"1a2b3c4d-0101": "1a2b3c4d-0002", "1a2b3c4d-0201": "1a2b3c4d-0102"})])
def test_older_layouts_link_sub_agents_by_their_prompt(library, session_id, child, links):
    s = library.get(session_id)
    (root,) = queries.tree(s)
    assert [c["agent_id"] for c in root["children"]] == [child]
    assert "parent_inferred" in s.agents[child].flags
    # the sub-agent's first prompt stands for the spawning call, the call's result for the sub-agent's answer
    assert {m: s.event(m)["substance"] for m in links} == links
    assert s.agents[child].cause == next(iter(links.values()))


def test_lines_of_one_response_are_one_message_with_usage_counted_once(library):
    s = library.get(CURRENT)
    first = s.event("5b1e8c2a-0002")
    assert first["content"] == "I'll look at the code and the tests in parallel."
    assert [c["id"] for c in first["tool_calls"]] == ["toolu_SCAN", "toolu_TEST"]
    assert first["thinking"] == ["Two independent questions: scan the code and check the tests, in parallel."]
    assert len(first["raw"]) == 4
    assert usage.for_agent(s, "main")["input_tokens"] == 1200 + 900
    total = usage.for_session(s)
    assert total["responses"] == 8 and total["output_tokens"] == 310 + 60 + 90 + 20 + 40 + 12 + 30 + 25
    assert total["models"] == ["claude-haiku-4-5", "claude-opus-4-1", "claude-sonnet-4-5"]


def test_transcript_pairs_tool_results_and_marks_compaction_images_and_unknown_types(library):
    s = library.get(CURRENT)
    view = queries.perspective(s, "main")
    kinds = [(i["kind"], i["event"].get("markers") or None) for i in view["items"]]
    assert kinds == [("system", ["record", "file-history-snapshot"]), ("heard", None), ("did", None),
                     ("system", ["compact_boundary"]), ("system", ["compact summary"]), ("heard", None),
                     ("said", None), ("system", ["record", "ai-title"]), ("system", ["record", "queue-operation"])]
    did = view["items"][2]
    assert [len(c["results"]) for c in did["calls"]] == [1, 1]
    assert [c["spawned"][0]["agent_id"] for c in did["calls"]] == ["agent-a11ce5ca", "agent-7e575a11"]
    image = view["items"][5]
    assert "[image: image/png]" in image["content"] and "iVBOR" not in image["content"]
    error = s.event("7e575a11-0003")
    assert error["is_error"] and s.call_position_for_result(s.by_id["7e575a11-0003"]) == s.by_id["7e575a11-0002"]


def test_substance_links_join_prompts_and_answers_across_agents(library):
    s = library.get(CURRENT)
    assert s.event("a11ce5ca-0001")["substance"] == "5b1e8c2a-0002"  # the prompt of the spawning call
    assert s.event("5b1e8c2a-0006")["substance"] == "a11ce5ca-0006"  # the result carries the final answer
    assert s.event("a11ce5ca-0005")["substance"] == "dee9c0de-0004"  # nested
    dialog = dialogs.dialog(s, ["main", "agent-a11ce5ca", "agent-dee9c0de"])
    prompt = next(i for i in dialog["items"] if i["message_id"] == "5b1e8c2a-0002")
    assert prompt["recipients"] == ["agent-a11ce5ca"] and not prompt["deliveries"][0]["modified"]
    said = [i["content"] for i in dialog["items"] if i["event"]["role"] == "assistant" and i["content"]]
    assert "load() accepts a str or a Path." in said


def test_live_appends_to_main_and_sub_agent_files_and_a_new_sub_agent_file(projects, library):
    folder = projects / PROJECT
    s = library.get(CURRENT)
    before = s.count
    sub = folder / "5b1e8c2a-audit" / "subagents"
    write_events(sub / "agent-7e575a11.jsonl", [{
        "type": "user", "uuid": "late-1", "parentUuid": None, "isSidechain": True, "agentId": "7e575a11",
        "sessionId": "5b1e8c2a-audit", "timestamp": "2026-02-01T10:01:00.000Z",
        "message": {"role": "user", "content": "one more thing"}}], mode="a")
    library.refresh(str(sub / "agent-7e575a11.jsonl"))
    assert s.count == before + 1 and s.event("late-1")["agent_id"] == "agent-7e575a11"
    write_events(folder / "5b1e8c2a-audit.jsonl", [{
        "type": "assistant", "uuid": "late-2", "parentUuid": None, "isSidechain": False, "sessionId": "5b1e8c2a-audit",
        "timestamp": "2026-02-01T10:01:01.000Z", "requestId": "req_L",
        "message": {"id": "msg_L", "role": "assistant", "model": "claude-opus-4-1", "content": [
            {"type": "tool_use", "id": "toolu_NEW", "name": "Agent", "input": {"description": "Late helper", "prompt": "Help late"}}],
            "usage": {"input_tokens": 1, "output_tokens": 1}}}], mode="a")
    library.refresh(str(folder / "5b1e8c2a-audit.jsonl"))
    (sub / "agent-1a7e.meta.json").write_text(json.dumps({"agentType": "Explore", "description": "Late helper",
                                                          "toolUseId": "toolu_NEW"}))
    write_events(sub / "agent-1a7e.jsonl", [{
        "type": "user", "uuid": "late-3", "parentUuid": None, "isSidechain": True, "agentId": "1a7e",
        "sessionId": "5b1e8c2a-audit", "timestamp": "2026-02-01T10:01:02.000Z",
        "message": {"role": "user", "content": "Help late"}}])
    library.refresh(str(sub / "agent-1a7e.jsonl"))
    assert library.get(CURRENT) is s and len(library.listing()) == 3
    assert s.agents["agent-1a7e"].parent_id == "main" and s.agents["agent-1a7e"].name == "Late helper"
    assert s.event("late-3")["substance"] == "late-2"


def test_a_rewritten_sub_agent_file_rereads_the_whole_session(projects, library):
    s = library.get(CURRENT)
    count = s.count
    path = projects / PROJECT / "5b1e8c2a-audit" / "subagents" / "agent-dee9c0de.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:1]))
    library.refresh(str(path))
    assert s.epoch == 1 and s.count < count
    assert s.agents["agent-dee9c0de"].parent_id == "agent-a11ce5ca"


def test_a_response_whose_lines_arrive_in_two_reads_stays_one_message(tmp_path):
    def line(uuid, block, **message):
        return {"type": "assistant", "uuid": uuid, "parentUuid": None, "isSidechain": False, "sessionId": "s",
                "timestamp": "2026-02-01T10:00:01.000Z", "requestId": "req_1",
                "message": {"id": "msg_1", "role": "assistant", "model": "claude-opus-4-1", "content": [block],
                            "usage": {"input_tokens": 10, "output_tokens": 5}, **message}}
    path = write_events(tmp_path / "s.jsonl", [
        {"type": "user", "uuid": "u", "parentUuid": None, "isSidechain": False, "sessionId": "s",
         "timestamp": "2026-02-01T10:00:00.000Z", "message": {"role": "user", "content": "go"}},
        line("a1", {"type": "text", "text": "Running it."})])
    library = scanned(tmp_path)
    s = library.get("s")
    write_events(path, [{"type": "progress", "uuid": "p", "sessionId": "s", "data": {"type": "hook_progress"}},
                        line("a2", {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}})],
                 mode="a")
    library.refresh(str(path))
    write_events(path, [{"type": "user", "uuid": "r", "parentUuid": "a2", "isSidechain": False, "sessionId": "s",
                         "timestamp": "2026-02-01T10:00:02.000Z", "message": {"role": "user", "content": [
                             {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]}}], mode="a")
    library.refresh(str(path))
    message = s.event("a1")
    assert message["content"] == "Running it." and [c["id"] for c in message["tool_calls"]] == ["toolu_1"]
    assert len(message["raw"]) == 2 and usage.for_session(s)["input_tokens"] == 10
    assert s.problems == [] and s.call_position_for_result(s.by_id["r"]) == s.by_id["a1"]
    view = queries.perspective(s, "main")
    assert [i["kind"] for i in view["items"]] == ["heard", "did", "system"]  # the progress record: after it
    updates = live_updates.perspective_updates(s, "main", False, s.by_id["a1"] + 1)
    assert [g["message_id"] for g in updates["grown"]] == ["a1"]


def test_serving_one_project_folder_names_the_project(projects):
    library = scanned(projects / PROJECT)
    assert [s.id for s in library.listing()] == ["1a2b3c4d-legacy", "5b1e8c2a-audit", "9c04d7b3-docs"]
    assert {s.project for s in library.listing()} == {PROJECT}


def test_sessions_are_titled_from_their_own_records(library):
    assert library.get(CURRENT).title == "Parser audit"  # its ai-title record
    assert library.get(BESIDE).title == "Write a docstring for parse()."  # no title record: the first prompt


def test_session_viewer_and_export_read_a_main_file_with_its_sub_agents(projects):
    from viewer.reads.session_viewer import SessionViewer

    viewer = SessionViewer(projects / PROJECT / "5b1e8c2a-audit.jsonl")
    assert set(viewer.list_agents()) == {"main", "agent-7e575a11", "agent-a11ce5ca", "agent-dee9c0de"}
    beside = SessionViewer(projects / PROJECT / "9c04d7b3-docs.jsonl")
    assert set(beside.list_agents()) == {"main", "agent-d0c5a9e1"}


def test_a_sub_agent_no_call_matched_is_linked_by_the_result_naming_it(tmp_path):
    def line(kind, uuid, seconds, content, **extra):
        return {"type": kind, "uuid": uuid, "parentUuid": None, "isSidechain": "agentId" in extra, "sessionId": "s",
                "timestamp": f"2026-02-01T10:00:{seconds:02d}.000Z", "message": {"role": kind, "content": content},
                **extra}
    write_events(tmp_path / "s.jsonl", [
        line("user", "u", 0, "go"),
        {**line("assistant", "a", 1, [{"type": "tool_use", "id": "toolu_X", "name": "Task",
                                        "input": {"description": "Helper", "prompt": "Do X"}}]), "requestId": "r"},
        line("user", "r", 5, [{"type": "tool_result", "tool_use_id": "toolu_X", "content": "X done"}],
             toolUseResult={"agentId": "77", "status": "completed"}),
    ])
    write_events(tmp_path / "agent-77.jsonl", [  # its prompt was reworded: no match by prompt, no meta
        line("user", "q1", 2, "Please do X now", agentId="77"),
        {**line("assistant", "q2", 3, [{"type": "text", "text": "X done"}], agentId="77"), "requestId": "r2"}])
    library = scanned(tmp_path)
    s = library.get("s")
    assert s.agents["agent-77"].parent_id == "main" and "parent_inferred" in s.agents["agent-77"].flags
    assert queries.created_by(s, s.agents["agent-77"])["call_id"] == "toolu_X"
    assert s.event("r")["substance"] == "q2"
    assert s.problems == []


def test_the_dialog_shows_each_task_a_call_message_delivered(projects):
    from viewer.web.app import create_app
    from dom import parse

    client = create_app(projects, watch=False).test_client()
    url = f"/s/{CURRENT}/dialog?agents=main,agent-a11ce5ca,agent-7e575a11"
    item = parse(client.get(url).data).by_id("5b1e8c2a-0002")
    quoted = {div.find_all("a")[0].text: div.find_all("pre")[0].text for div in item.find_all("div") if div.attrs.get("class") == "quoted"}
    assert quoted == {"Scan parser": "List the parser's entry points.",
                      "Check tests": "Which parser functions have tests?"}
