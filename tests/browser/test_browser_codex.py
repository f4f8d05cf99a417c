"""A Codex CLI sessions folder in a real browser: the session's tree with the sub-agent thread, the agent page with
its calls, reasoning and token counts, and a thread appended live."""

import json
import shutil

import pytest
from playwright.sync_api import expect

from conftest import SAMPLES, serve

pytestmark = pytest.mark.browser
ROOT = "0199a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b"
SESSION = f"2026:03:01:rollout-2026-03-01T09-15-00-{ROOT}"
THREAD = "thread-1d2e3f4a5b6c"


@pytest.fixture
def codex_server(tmp_path):
    folder = tmp_path / "sessions"
    shutil.copytree(SAMPLES / "codex", folder, ignore=shutil.ignore_patterns("*.py"))
    with serve(folder) as server:
        yield server


def test_the_codex_session_and_agent_pages(codex_server, page):
    page.goto(codex_server.url + "/")
    expect(page.locator("#av-sessions .badge.format", has_text="Codex CLI").first).to_be_visible()
    page.goto(f"{codex_server.url}/s/{SESSION}")
    expect(page.locator(".meta .badge.format")).to_have_text("Codex CLI")
    child = page.locator(f'li.node[data-agent="main"] li.node[data-agent="{THREAD}"] a.agent-name').first
    expect(child).to_contain_text("Lovelace")
    child.click()
    expect(page.locator("main")).to_contain_text("no test covers the last token")
    expect(page.locator("#av-usage")).to_contain_text("gpt-5-codex-mini")
    page.goto(f"{codex_server.url}/s/{SESSION}/agents/main")
    expect(page.locator("main")).to_contain_text("Fixed: the loop in parse() stopped one token early")
    expect(page.locator(".call .tool", has_text="apply_patch").first).to_be_visible()
    thinking = page.locator("details.thinking").first
    thinking.locator("summary").click()
    expect(thinking.locator("pre")).to_contain_text("Locating parse()")
    expect(page.locator(".badge.marker", has_text="token_count").first).to_be_visible()


def test_a_turn_appended_to_the_rollout_shows_on_the_open_page(codex_server, page):
    path = next((codex_server.folder / "2026" / "03" / "01").glob(f"*{ROOT}.jsonl"))
    page.goto(f"{codex_server.url}/s/{SESSION}/agents/main")
    page.locator("#av-poller").wait_for(state="attached")
    with open(path, "a") as f:
        f.write(json.dumps({"timestamp": "2026-03-01T09:20:00.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "One more thing."}]}})
                + "\n")
    expect(page.locator("main")).to_contain_text("One more thing.", timeout=10000)
