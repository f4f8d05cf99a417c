"""Inline sidechains (Claude Code 2.0.x writes them into the main file, each line naming its `agentId`): one agent
even where the parentUuid chain breaks, joined to the Task call whose result names it (the result line's own
`agentId`, or `toolUseResult.agentId`), also where only some of its lines carry that `agentId`. Lines as
claude-code-log's test data `sidechain_integrated.jsonl` has them: invented content first, then that file as it is
(its order, uuids and ids; text shortened)."""

from __future__ import annotations

import json

from events import scanned
from test_formats_claude_replay import read_whole_and_live
from viewer.reads import queries

SESSION = "88a8d761-7b9a-4bf1-a8ca-c1febe6bf358"


def envelope(uuid, parent, kind, time, sidechain, **extra):
    return {"parentUuid": parent, "isSidechain": sidechain, "userType": "external", "cwd": "/src/app",
            "sessionId": SESSION, "version": "2.0.46", "uuid": uuid, "timestamp": f"2025-11-19T22:{time}.000Z",
            "isMeta": None, "type": kind, **extra}


def assistant(uuid, parent, time, sidechain, msg_id, blocks, **extra):
    return envelope(uuid, parent, "assistant", time, sidechain, requestId=f"req_{msg_id}", message={
        "id": msg_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
        "content": blocks, "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 3, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 0,
                  "output_tokens": 10}}, **extra)


def result(uuid, parent, time, sidechain, call, text, **extra):
    return envelope(uuid, parent, "user", time, sidechain, message={"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call, "content": [{"type": "text", "text": text}], "is_error": None,
         "agentId": None}]}, **extra)


def lines(result_names_it: dict):
    return [
        envelope("u-0", None, "user", "53:30", False, message={"role": "user", "content": "Look into the borders"}),
        assistant("m-1", "u-0", "53:34", False, "msg_main1", [{"id": "toolu_TASK", "name": "Task", "type": "tool_use",
                  "input": {"subagent_type": "general-purpose", "description": "Research border colours",
                            "prompt": "Research how data-border-color is used"}}]),
        # the sidechain: its first line an assistant's (no prompt line), each line naming its agent
        assistant("s-1", None, "53:39", True, "msg_side1", [{"type": "text", "text": "I'll research it."}],
                  agentId="e1c84ba5"),
        assistant("s-2", "s-1", "53:40", True, "msg_side1", [{"id": "toolu_GREP", "name": "Grep", "type": "tool_use",
                  "input": {"pattern": "data-border-color"}}], agentId="e1c84ba5"),
        # its chain breaks here: this line's parent was never written
        result("s-3", "718670f5-3e6b-4b3e-9a70-bc3e5ac90f92", "54:57", True, "toolu_GREP", "renderer.py:3130",
               agentId="e1c84ba5"),
        assistant("s-4", "s-3", "55:20", True, "msg_side2", [{"type": "text", "text": "Used in renderer.py only."}],
                  agentId="e1c84ba5"),
        result("r-1", "m-1", "55:34", False, "toolu_TASK", "Used in renderer.py only.", **result_names_it),
        assistant("m-2", "r-1", "55:40", False, "msg_main2", [{"type": "text", "text": "Excellent research!"}]),
    ]


def write(folder, records):
    path = folder / "-src-app" / f"{SESSION}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def check_one_sidechain_joined_to_its_call(s):
    assert sorted(s.agents) == ["agent-e1c84ba5", "main"]
    side = s.agents["agent-e1c84ba5"]
    assert side.parent_id == "main" and side.cause == "m-1" and "parent_inferred" in side.flags
    assert [s.events[p]["message_id"] for p in side.entries] == ["s-1", "s-3", "s-4"]
    assert s.event("r-1")["substance"] == "s-4"  # the result carries the sidechain's final answer
    did = next(i for i in queries.perspective(s, "main")["items"] if i["message_id"] == "m-1")
    assert [a["agent_id"] for a in did["calls"][0]["spawned"]] == ["agent-e1c84ba5"]


def test_a_sidechain_split_by_a_broken_chain_is_one_agent_joined_by_the_results_own_agent_id(tmp_path):
    write(tmp_path, lines({"agentId": "e1c84ba5", "toolUseResult": {"oldString": None, "newString": None}}))
    check_one_sidechain_joined_to_its_call(scanned(tmp_path).get(f"-src-app:{SESSION}"))


def test_the_same_joined_by_tool_use_result_agent_id(tmp_path):
    write(tmp_path, lines({"toolUseResult": {"agentId": "e1c84ba5", "status": "completed"}}))
    check_one_sidechain_joined_to_its_call(scanned(tmp_path).get(f"-src-app:{SESSION}"))


def test_sidechain_lines_without_agent_ids_still_follow_their_chain(tmp_path):
    records = [r for r in lines({}) if r["uuid"] != "s-3"]
    for r in records:
        r.pop("agentId", None)
    next(r for r in records if r["uuid"] == "s-4")["parentUuid"] = "s-2"  # s-4 follows s-2
    write(tmp_path, records)
    s = scanned(tmp_path).get(f"-src-app:{SESSION}")
    (side,) = [a for a in s.agents if a != "main"]
    assert side == "sidechain-s-1" and [s.events[p]["message_id"] for p in s.agents[side].entries] == ["s-1", "s-4"]


# As claude-code-log's `test/test_data/sidechain_integrated.jsonl` (Claude Code 2.0.46) has them, in its order: the
# Task result (naming the sidechain by its own `agentId`) before the sidechain, whose first two lines carry no
# `agentId` and whose third, the first to carry one, has a parentUuid never written. Uuids and ids as there.
TASK, RESULT, SIDE = "83a7cabd-3642-45d6-ba73-9b9f843b9ab1", "97965533-18f3-41b7-aa07-0c438f2a5893", "b674eedd"


def as_written(result_names_it: dict):
    first, second, third = f"{SIDE}-0d9d-49e7-8116-1f092cd750ed", "3c78114e-3de3-471e-b80f-0c86adb361c4", \
        "4899826e-499f-4f24-ae6e-f2ac31cddfd4"
    return [
        assistant(TASK, "8ae40e91-fa63-40a9-969d-70c0c1d6175e", "53:34", False, "msg_01H4wg8bFy2psdmQvJMU6kpD", [{
            "id": "toolu_01JA2mLseQCAW3MdwPE4qWEk", "name": "Task", "type": "tool_use",
            "input": {"subagent_type": "general-purpose", "description": "Research data-border-color usage",
                      "prompt": "Research how data-border-color is used in the code"}}]),
        result(RESULT, TASK, "55:34", False, "toolu_01JA2mLseQCAW3MdwPE4qWEk", "Perfect! Now I have a complete "
               "understanding.", **result_names_it),
        assistant(first, None, "53:39", True, "msg_017zj75dqWUNqVxCUrhqbTkf",
                  [{"citations": None, "text": "I'll research how data-border-color is used", "type": "text"}]),
        assistant(second, first, "53:39", True, "msg_017zj75dqWUNqVxCUrhqbTkf", [{
            "id": "toolu_01BWgwmyj8gGuqFNHMPqqtN2", "name": "Grep", "type": "tool_use",
            "input": {"pattern": "data-border-color", "output_mode": "files_with_matches"}}]),
        result(third, "718670f5-3e6b-4b3e-9a70-bc3e5ac90f92", "54:57", True, "toolu_011V1hetiJ3pC79EoLTY53Ni",
               "3130  # Simplified: no Tool Result heading", agentId="e1c84ba5",
               toolUseResult={"type": "text", "file": {"filePath": "renderer.py", "numLines": 50}}),
        assistant("91c82c1c-29b0-4149-a261-e5582d944ac6", RESULT, "55:40", False, "msg_011b5A5rZCXR7eBYR4VbohVZ",
                  [{"citations": None, "text": "Excellent research!", "type": "text"}]),
    ]


def check_the_sidechain_as_written_is_one_agent_under_its_call(s):
    side = f"sidechain-{SIDE}"
    assert sorted(s.agents) == ["main", side] and s.roots == ["main"]
    agent = s.agents[side]
    assert agent.parent_id == "main" and agent.cause == TASK and "unlinked" not in agent.flags
    assert agent.name == "Research data-border-color usage"
    assert [s.events[p]["message_id"] for p in agent.entries] == [
        f"{SIDE}-0d9d-49e7-8116-1f092cd750ed", "4899826e-499f-4f24-ae6e-f2ac31cddfd4"]
    did = next(i for i in queries.perspective(s, "main")["items"] if i["message_id"] == TASK)
    assert [a["agent_id"] for a in did["calls"][0]["spawned"]] == [side]


def test_a_sidechain_naming_its_agent_id_on_some_lines_only_is_one_agent_joined_to_the_call_naming_it(tmp_path):
    write(tmp_path, as_written({"toolUseResult": {"oldString": None, "newString": None}, "agentId": "e1c84ba5"}))
    check_the_sidechain_as_written_is_one_agent_under_its_call(scanned(tmp_path).get(f"-src-app:{SESSION}"))


def test_the_same_named_by_tool_use_result_agent_id(tmp_path):
    write(tmp_path, as_written({"toolUseResult": {"agentId": "e1c84ba5", "status": "completed"}}))
    check_the_sidechain_as_written_is_one_agent_under_its_call(scanned(tmp_path).get(f"-src-app:{SESSION}"))


def test_the_same_with_the_result_written_after_the_sidechain(tmp_path):
    records = as_written({"agentId": "e1c84ba5"})
    records.append(records.pop(1))  # as Claude Code writes it live: the result once the sidechain answered
    records[-1], records[-2] = records[-2], records[-1]
    write(tmp_path / "whole", records)
    whole = read_whole_and_live(tmp_path / "whole", tmp_path / "live", seed=4)  # the same read as it is written
    check_the_sidechain_as_written_is_one_agent_under_its_call(whole.get(f"-src-app:{SESSION}"))


def test_a_line_without_agent_id_whose_chain_breaks_stays_with_the_latest_sidechain(tmp_path):
    records = lines({"agentId": "e1c84ba5"})
    late = next(r for r in records if r["uuid"] == "s-4")
    del late["agentId"]
    late["parentUuid"] = "9d0c7e9a-5f0e-4a55-b1c3-2f1d1f0a8e11"  # never written
    write(tmp_path, records)
    check_one_sidechain_joined_to_its_call(scanned(tmp_path).get(f"-src-app:{SESSION}"))
