"""Every input format in a real browser: the session page, an agent page, and live updates."""

import json
import shutil

import pytest
from playwright.sync_api import expect

from conftest import SAMPLES, serve, write_events

pytestmark = pytest.mark.browser
CLAUDE = "-home-dev-src-parser:5b1e8c2a-audit"
BADGES = {"legacy": "legacy event stream", "claude_code": "Claude Code", "weakincentives": "weakincentives",
          "ai_agent": "ai-agent snapshot"}  # sample folder -> the format badge its sessions carry


@pytest.fixture
def formats_server(tmp_path):
    folder = tmp_path / "logs"
    for name in ("legacy", "claude_code", "weakincentives", "ai_agent"):
        shutil.copytree(SAMPLES / name, folder / name, ignore=shutil.ignore_patterns("*.py"))
    write_events(folder / "notes.jsonl", [{"title": "not a log"}])
    with serve(folder) as server:
        yield server


def test_index_shows_each_format_and_the_unrecognized_file(formats_server, page):
    page.goto(formats_server.url + "/")
    table = page.locator("#av-sessions")
    for label in ("legacy event stream", "Claude Code", "weakincentives", "ai-agent snapshot", "unrecognized"):
        expect(table.locator(".badge.format", has_text=label).first).to_be_visible()
    expect(table.locator("tr.project", has_text="-home-dev-src-parser")).to_be_visible()
    expect(page.locator('[id="av-session-notes"]')).to_contain_text("none of the fields")


@pytest.mark.parametrize("session_id, agent_id, text", [
    ("legacy:example2_inner_monologue", "agent_jill_inner", "Be friendly but not over-eager"),
    (f"claude_code:{CLAUDE}", "agent-dee9c0de", "load() accepts a str or a Path."),
    ("weakincentives:review.transcript.TranscriptEntry", "subagent:9f2c", "Yes: main() always divides by zero."),
    ("weakincentives:fix-tests.log", "subagent:b7", "test_empty fails"),
    ("ai_agent:4b9e-web-research.json.gz", "sess-child-1", "Netdata monitors systems"),
    ("ai_agent:7d21-stock-check.json", "sess-stock", "How many widgets are left?"),
])
def test_session_and_agent_pages_of_each_format(formats_server, page, session_id, agent_id, text):
    page.goto(f"{formats_server.url}/s/{session_id}")
    expect(page.locator(".meta .badge.format")).to_have_text(BADGES[session_id.split(":")[0]])
    link = page.locator(f'li.node[data-agent="{agent_id}"] a.agent-name').first
    expect(link).to_be_visible()
    link.click()
    expect(page.locator("main")).to_contain_text(text)


def test_claude_code_agent_page_shows_usage_thinking_and_raw(formats_server, page):
    page.goto(f"{formats_server.url}/s/claude_code:{CLAUDE}/agents/main")
    expect(page.locator("#av-usage")).to_contain_text("claude-opus-4-1")
    thinking = page.locator("details.thinking").first
    expect(thinking.locator("pre")).to_be_hidden()  # collapsed until opened
    thinking.locator("summary").click()
    expect(thinking.locator("pre")).to_contain_text("in parallel")
    expect(page.locator(".badge.marker", has_text="compact_boundary")).to_be_visible()
    expect(page.locator(".images .inline-image")).to_have_count(1)  # the sample carries one (a PNG signature only)


def test_a_new_claude_code_sub_agent_file_appears_in_the_open_tree(formats_server, page):
    project = formats_server.folder / "claude_code" / "-home-dev-src-parser"
    page.goto(f"{formats_server.url}/s/claude_code:{CLAUDE}")
    page.locator("#av-tree").wait_for()
    write_events(project / "5b1e8c2a-audit.jsonl", [{
        "type": "assistant", "uuid": "late-2", "parentUuid": None, "isSidechain": False, "sessionId": "5b1e8c2a-audit",
        "timestamp": "2026-02-01T10:01:01.000Z", "requestId": "req_L",
        "message": {"id": "msg_L", "role": "assistant", "model": "claude-opus-4-1", "content": [
            {"type": "tool_use", "id": "toolu_NEW", "name": "Agent", "input": {"description": "Late helper", "prompt": "Help late"}}]}}],
        mode="a")
    sub = project / "5b1e8c2a-audit" / "subagents"
    (sub / "agent-1a7e.meta.json").write_text(json.dumps({"description": "Late helper", "toolUseId": "toolu_NEW"}))
    write_events(sub / "agent-1a7e.jsonl", [{
        "type": "user", "uuid": "late-3", "parentUuid": None, "isSidechain": True, "agentId": "1a7e",
        "sessionId": "5b1e8c2a-audit", "timestamp": "2026-02-01T10:01:02.000Z",
        "message": {"role": "user", "content": "Help late"}}])
    expect(page.locator('li.node[data-agent="main"] li.node[data-agent="agent-1a7e"]')).to_contain_text(
        "Late helper", timeout=8000)


def test_an_ai_agent_snapshot_replaced_on_disk_reloads_the_open_page(formats_server, page):
    path = formats_server.folder / "ai_agent" / "7d21-stock-check.json"
    page.goto(f"{formats_server.url}/s/ai_agent:7d21-stock-check.json/agents/sess-stock")
    expect(page.locator(".badge.marker", has_text="in progress").first).to_be_visible()
    data = json.loads(path.read_text())
    data["opTree"]["turns"][0]["ops"][2].update(endedAt=1767261609000, status="ok", response={"payload": "W-1 costs 4 EUR"})
    temporary = path.with_name("7d21-stock-check.json.tmp")
    temporary.write_text(json.dumps(data))
    temporary.replace(path)
    expect(page.locator("main")).to_contain_text("W-1 costs 4 EUR", timeout=10000)


def test_ai_agent_operation_shows_cost_latency_logs_and_masks_secrets(formats_server, page):
    page.goto(f"{formats_server.url}/s/ai_agent:4b9e-web-research.json.gz/agents/sess-root")
    expect(page.locator(".cost").first).to_contain_text("$0.0090")
    expect(page.locator(".latency").first).to_contain_text("880 ms")
    logs = page.locator("details.logs", has_text="TRC").first
    logs.locator("summary").click()
    expect(logs).to_contain_text("Authorization")
    assert "sk-live-0123456789abcdefghij" not in page.content()
    page.goto(f"{formats_server.url}/s/ai_agent:4b9e-web-research.json.gz")
    expect(page.locator("#av-format-summary")).to_contain_text("0.0213")


def test_a_claude_code_response_growing_live_is_redrawn_in_place(formats_server, page):
    path = formats_server.folder / "claude_code" / "-home-dev-src-parser" / "9c04d7b3-docs.jsonl"

    def line(uuid, block):
        return {"type": "assistant", "uuid": uuid, "parentUuid": None, "isSidechain": False,
                "sessionId": "9c04d7b3-docs", "timestamp": "2026-02-01T10:00:30.000Z", "requestId": "req_G",
                "message": {"id": "msg_G", "role": "assistant", "model": "claude-sonnet-4-5", "content": [block]}}
    # read first: a page asked of a session still being read waits and reloads itself once it is there
    formats_server.wait_for_session("claude_code:-home-dev-src-parser:9c04d7b3-docs", events=8)
    page.goto(f"{formats_server.url}/s/claude_code:-home-dev-src-parser:9c04d7b3-docs/agents/main")
    page.evaluate("window.__notReloaded = true")
    page.locator("#av-poller").wait_for(state="attached")
    write_events(path, [line("g1", {"type": "text", "text": "Now the changelog."})], mode="a")
    expect(page.locator('[id="g1"]')).to_contain_text("Now the changelog.", timeout=10_000)  # a watcher, a poll, a swap
    write_events(path, [line("g2", {"type": "tool_use", "id": "toolu_G", "name": "Edit",
                                    "input": {"file_path": "CHANGELOG.md"}})], mode="a")
    expect(page.locator('[id="g1"] .call .tool')).to_have_text("Edit", timeout=10_000)
    assert page.locator('[id="g1"]').count() == 1
    assert page.evaluate("window.__notReloaded") is True


@pytest.mark.parametrize("left_alone", [False, True], ids=["live", "resumed after an idle hour"])
def test_a_claude_code_session_written_to_shows_its_new_entry_without_a_reload(tmp_path, page, left_alone):
    """Live, and also when its files were left alone long enough for it to settle (read again from its start when
    resumed): every entry read before is where it was, so the open page takes the new one in place."""
    import os
    import time

    folder = tmp_path / "logs"
    shutil.copytree(SAMPLES / "claude_code", folder / "claude_code", ignore=shutil.ignore_patterns("*.py"))
    when = time.time() - (7200 if left_alone else 0)
    for path in folder.rglob("*"):
        os.utime(path, (when, when))
    path = folder / "claude_code" / "-home-dev-src-parser" / "9c04d7b3-docs.jsonl"
    with serve(folder) as server:
        server.wait_for_session("claude_code:-home-dev-src-parser:9c04d7b3-docs", events=8)  # opened once read
        page.goto(f"{server.url}/s/claude_code:-home-dev-src-parser:9c04d7b3-docs/agents/main")
        page.evaluate("window.__notReloaded = true")
        page.locator("#av-poller").wait_for(state="attached")
        write_events(path, [{"type": "user", "uuid": "r1", "parentUuid": None, "isSidechain": False,
                             "sessionId": "9c04d7b3-docs", "timestamp": "2026-02-01T11:00:00.000Z",
                             "message": {"role": "user", "content": "Back after lunch: go on"}}], mode="a")
        expect(page.locator('[id="r1"]')).to_contain_text("Back after lunch")
        assert page.evaluate("window.__notReloaded") is True
