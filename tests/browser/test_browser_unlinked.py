"""Unlinked Claude Code sub-agents in a real browser: listed under the main agent with their badge, and moved
under their call, live, when their `.meta.json` is written after their file; 2.0.x agent files beside several
sessions each under its own session's main agent, on a phone."""

import json

import pytest
from playwright.sync_api import expect

from conftest import serve
from test_formats_claude_unlinked import (PROJECT, SESSION, SID, WARMED, main_file, sub_file, subagents,
                                         write_warmed_sessions)

pytestmark = pytest.mark.browser


def test_an_unlinked_sub_agent_sits_under_main_and_joins_its_call_when_its_meta_arrives(tmp_path, page):
    main = main_file(tmp_path)
    main.response("msg_2", [{"type": "tool_use", "id": "toolu_TEST", "name": "Task",
                             "input": {"description": "Run the tests", "prompt": "Run pytest"}}])
    main.write(tmp_path / "-home-dev-app" / f"{SESSION}.jsonl")
    sub_file("A prompt no call carries", "ef56").write(subagents(tmp_path) / "agent-ef56.jsonl")
    with serve(tmp_path) as server:
        server.wait_for_session(SID, events=7)
        page.goto(f"{server.url}/s/{SID}")
        node = page.locator('#av-tree > li.node[data-agent="main"] li.node[data-agent="agent-ef56"]')
        expect(node.locator(".badge.unlinked")).to_have_text("unlinked sub-agent")
        expect(page.locator('#av-tree > li.node')).to_have_count(1)  # one root: the main agent
        meta = subagents(tmp_path) / "agent-ef56.meta.json"
        written = meta.with_suffix(".tmp")
        written.write_text(json.dumps({"description": "Tests", "toolUseId": "toolu_TEST"}))
        written.replace(meta)  # as editors and Claude Code write files: a temporary file renamed
        expect(node.locator(".badge.unlinked")).to_have_count(0)
        expect(node.locator("a.agent-name")).to_have_text("Tests")
        expect(node.locator(".created-by")).to_contain_text("Task")


def test_agent_files_of_several_sessions_sit_under_their_own_main_agent_badged_on_a_phone(tmp_path, page):
    write_warmed_sessions(tmp_path)
    page.set_viewport_size({"width": 360, "height": 740})
    with serve(tmp_path) as server:
        for session, (agent_id, _) in WARMED.items():
            sid = f"{PROJECT}:{session}"
            server.wait_for_session(sid, events=6)
            page.goto(f"{server.url}/s/{sid}")
            expect(page.locator("#av-tree > li.node")).to_have_count(1)  # one root: the main agent
            page.get_by_role("button", name="Agents of this session").click()  # a phone shows the tree in a drawer
            node = page.locator(f'#av-tree > li.node[data-agent="main"] li.node[data-agent="agent-{agent_id}"]')
            badge = node.locator(".badge.unlinked")
            expect(badge).to_have_text("unlinked sub-agent")
            expect(badge).to_be_visible()
            assert page.evaluate("document.documentElement.scrollWidth") <= 360
            tree = json.loads(page.request.get(f"{server.url}/api/sessions/{sid}").text())
            flags = {a["agent_id"]: (a["parent_id"], a["flags"]) for a in tree["agents"]}
            assert flags == {"main": (None, []), f"agent-{agent_id}": ("main", ["unlinked"])}
