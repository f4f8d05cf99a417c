"""Unlinked Claude Code sub-agents in a real browser: listed under the main agent with their badge, and moved
under their call, live, when their `.meta.json` is written after their file."""

import json

import pytest
from playwright.sync_api import expect

from conftest import serve
from test_formats_claude_unlinked import SESSION, SID, main_file, sub_file, subagents

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
