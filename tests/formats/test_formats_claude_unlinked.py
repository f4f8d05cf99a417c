"""Claude Code sub-agents whose parent the log does not name (yet): listed under the main agent as "unlinked
sub-agents", not as roots above it; joined to their call once a result names them; and a `.meta.json` written
after its agent file re-resolves the parent as a whole read would (the "inferred parent" badge goes). Files laid
out as 2.1.x writes them: `<session>/subagents/agent-<id>.jsonl` beside `agent-<id>.meta.json`; and as 2.0.x did,
`agent-<id>.jsonl` beside several sessions' main files, each under its own session's main agent."""

from __future__ import annotations

import json

from claude_lines import Transcript
from events import scanned
from test_formats_claude_replay import read_whole_and_live

SESSION = "5e55a1e0-link"
SID = f"-home-dev-app:{SESSION}"


def main_file(folder):
    t = Transcript(SESSION, "mn")
    t.user("Audit the app")
    t.response("msg_1", [{"type": "tool_use", "id": "toolu_SCAN", "name": "Task",
                          "input": {"description": "Scan the code", "prompt": "Scan src/ for parsers",
                                    "subagent_type": "Explore"}}])
    return t


def sub_file(prompt: str, agent_id: str):
    t = Transcript(SESSION, agent_id[:2])
    t.n = 10  # after the main file's spawning call
    t.user(prompt, isSidechain=True, agentId=agent_id)
    t.response(f"msg_{agent_id}", [{"type": "text", "text": "Found parse() and load()."}])
    return t


def subagents(folder):
    return folder / "-home-dev-app" / SESSION / "subagents"


def test_a_sub_agent_nothing_names_is_listed_under_the_main_agent_until_a_result_names_it(tmp_path):
    main = main_file(tmp_path)
    path = main.write(tmp_path / "-home-dev-app" / f"{SESSION}.jsonl")
    sub_file("Something no call asked for", "ab12").write(subagents(tmp_path) / "agent-ab12.jsonl")
    library = scanned(tmp_path)
    s = library.get(SID)
    assert s.roots == ["main"]
    assert s.agents["agent-ab12"].parent_id == "main" and "unlinked" in s.agents["agent-ab12"].flags
    assert s.agents["main"].children == ["agent-ab12"]
    main.n = 30
    main.result("toolu_SCAN", "Found parse() and load().", toolUseResult={"agentId": "ab12", "status": "completed"})
    path.write_text(main.text())
    library.refresh(str(path))
    agent = s.agents["agent-ab12"]
    assert agent.parent_id == "main" and agent.cause == "mn-0002" and s.agents["main"].children == ["agent-ab12"]
    assert "unlinked" not in agent.flags and "parent_inferred" in agent.flags
    assert s.spawned["mn-0002"] == ["agent-ab12"]


def test_a_meta_json_written_after_its_agent_file_re_resolves_the_parent_as_a_whole_read_does(tmp_path):
    main_file(tmp_path).write(tmp_path / "-home-dev-app" / f"{SESSION}.jsonl")
    sub = sub_file("Scan src/ for parsers", "cd34").write(subagents(tmp_path) / "agent-cd34.jsonl")
    library = scanned(tmp_path)
    s = library.get(SID)
    live = s.agents["agent-cd34"]
    assert live.parent_id == "main" and "parent_inferred" in live.flags  # matched by its prompt, badged
    assert live.name == "Scan the code"
    meta = subagents(tmp_path) / "agent-cd34.meta.json"
    meta.write_text(json.dumps({"agentType": "Explore", "description": "Scan for parsers", "toolUseId": "toolu_SCAN"}))
    library.refresh(str(meta))
    assert live.flags == [] and live.parent_id == "main" and live.name == "Scan for parsers"
    whole = scanned(tmp_path).get(SID)  # read whole, the meta there from the start
    assert {a: (n.parent_id, n.cause, n.flags, n.name) for a, n in whole.agents.items()} == {
        a: (n.parent_id, n.cause, n.flags, n.name) for a, n in s.agents.items()}
    assert whole.shown_count == s.shown_count
    assert sub.exists()


def test_a_meta_naming_another_call_moves_an_unlinked_sub_agent_under_it(tmp_path):
    main = main_file(tmp_path)
    main.response("msg_2", [{"type": "tool_use", "id": "toolu_TEST", "name": "Task",
                             "input": {"description": "Run the tests", "prompt": "Run pytest"}}])
    main.write(tmp_path / "-home-dev-app" / f"{SESSION}.jsonl")
    sub_file("A prompt no call carries", "ef56").write(subagents(tmp_path) / "agent-ef56.jsonl")
    library = scanned(tmp_path)
    s = library.get(SID)
    assert "unlinked" in s.agents["agent-ef56"].flags
    meta = subagents(tmp_path) / "agent-ef56.meta.json"
    meta.write_text(json.dumps({"description": "Tests", "toolUseId": "toolu_TEST"}))
    library.refresh(str(meta))
    agent = s.agents["agent-ef56"]
    assert agent.flags == [] and agent.cause == "mn-0003" and agent.parent_id == "main" and agent.name == "Tests"
    assert s.agents["main"].children == ["agent-ef56"]


# Claude Code 2.0.x wrote each session's "Warmup" sub-agent beside the main files, as `agent-<id>.jsonl` carrying
# the session's sessionId, before the session's first prompt, and no Task result names it. Lines shaped as
# cctrace's `agent-ad24572.jsonl` (2.0.76) and the flat-layout `agent-ac0c74c.jsonl` (2.0.67) quoted in public
# projects' notes: a "Warmup" prompt, then the answer with its thinking (ids and times as there).
PROJECT = "-mnt-c-python-cctrace"
WARMED = {"132b2f66-ee5f-46f6-8904-32d9dc4d36c3": ("ad24572", "2026-01-06T09:15"),
          "9b23a108-3213-4a2e-83a7-71f23ef8096e": ("ac0c74c", "2026-01-06T09:40")}


def warmup_lines(session: str, agent_id: str, minute: str) -> list[dict]:
    envelope = {"isSidechain": True, "userType": "external", "cwd": "/mnt/c/python/cctrace", "sessionId": session,
                "version": "2.0.76", "gitBranch": "master", "agentId": agent_id}
    return [{"parentUuid": None, **envelope, "type": "user", "message": {"role": "user", "content": "Warmup"},
             "uuid": f"{agent_id}-4358ea05-e9f1-4c0a", "timestamp": f"{minute}:14.695Z"},
            {"parentUuid": f"{agent_id}-4358ea05-e9f1-4c0a", **envelope, "message": {
                "model": "claude-opus-4-5-20251101", "id": f"msg_{agent_id}", "type": "message", "role": "assistant",
                "content": [{"type": "thinking", "thinking": "The user just said Warmup.", "signature": "EqQB"},
                            {"type": "text", "text": "Ready to help."}],
                "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                          "output_tokens": 40, "service_tier": "standard"}},
             "requestId": f"req_{agent_id}", "type": "assistant", "uuid": f"{agent_id}-a1",
             "timestamp": f"{minute}:18.020Z"}]


def write_warmed_sessions(folder):
    """Two sessions of one project folder, each with its warmup agent file beside it."""
    for session, (agent_id, minute) in WARMED.items():
        t = Transcript(session)
        t.user("Plan the import of old sessions")
        t.response(f"msg_main_{agent_id}", [{"type": "text", "text": "Here is the plan."}])
        for n, line in enumerate(t.lines):  # 2.0.x lines, written after the warmup
            line.update(version="2.0.76", cwd="/mnt/c/python/cctrace", timestamp=f"{minute}:5{n}.000Z")
        t.write(folder / PROJECT / f"{session}.jsonl")
        path = folder / PROJECT / f"agent-{agent_id}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in warmup_lines(session, agent_id, minute)))


def test_agent_files_beside_several_sessions_named_by_no_result_sit_under_their_own_main_agent(tmp_path):
    write_warmed_sessions(tmp_path / "whole")
    library = read_whole_and_live(tmp_path / "whole", tmp_path / "live", seed=5)  # the same read as written
    assert len(library.listing()) == 2
    for session, (agent_id, _) in WARMED.items():
        s = library.get(f"{PROJECT}:{session}")
        assert s.roots == ["main"] and s.agents["main"].children == [f"agent-{agent_id}"]
        agent = s.agents[f"agent-{agent_id}"]
        assert agent.parent_id == "main" and agent.flags == ["unlinked"]
        assert [s.events[p]["content"] for p in agent.entries] == ["Warmup", "Ready to help."]
        assert [s.events[p]["content"] for p in s.agents["main"].entries] == ["Plan the import of old sessions",
                                                                               "Here is the plan."]
