"""Claude Code sub-agents whose parent the log does not name (yet): listed under the main agent as "unlinked
sub-agents", not as roots above it; joined to their call once a result names them; and a `.meta.json` written
after its agent file re-resolves the parent as a whole read would (the "inferred parent" badge goes). Files laid
out as 2.1.x writes them: `<session>/subagents/agent-<id>.jsonl` beside `agent-<id>.meta.json`."""

from __future__ import annotations

import json

from claude_lines import Transcript
from events import scanned

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
