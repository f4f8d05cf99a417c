"""What a person sees and clicks: a real Chromium against `agentview serve` on a temp folder."""

import os
import time

import pytest
from playwright.sync_api import expect

from conftest import REPO, write_events

pytestmark = pytest.mark.browser
SCREENSHOT = REPO / "docs" / "session-page.png"


def node(page, agent_id):
    return page.locator(f'li.node[data-agent="{agent_id}"]')


def test_expand_and_collapse_the_tree(live_server, page):
    page.goto(f"{live_server.url}/s/research_team")
    scout = node(page, "agent_researcher_scout")
    reader_link = node(page, "agent_scout_reader").locator("a.agent-name")
    expect(reader_link).to_be_visible()
    page.get_by_role("button", name="Collapse all").click()
    expect(reader_link).to_be_hidden()
    expect(node(page, "agent_researcher").locator("a.agent-name").first).to_be_hidden()
    node(page, "agent_root").locator("summary").first.click()  # open one level
    expect(node(page, "agent_researcher").locator("a.agent-name").first).to_be_visible()
    expect(scout.locator("a.agent-name").first).to_be_hidden()
    page.get_by_role("button", name="Expand all").click()
    expect(reader_link).to_be_visible()


def test_navigate_tree_to_agent_to_message(live_server, page):
    page.goto(f"{live_server.url}/s/example1_jack_and_jill")
    node(page, "agent_jill").locator("a.agent-name").click()
    expect(page).to_have_url(f"{live_server.url}/s/example1_jack_and_jill/agents/agent_jill")
    expect(page.locator("h1")).to_contain_text("Jill")
    heard = page.locator('[id="msg_017"]')
    expect(heard).to_contain_text("from Jack")
    heard.locator("a.msg", has_text="msg_015").click()
    expect(page).to_have_url(f"{live_server.url}/s/example1_jack_and_jill/messages/msg_015")
    expect(page.locator("ol.references")).to_contain_text("msg_017")


def test_choose_agents_and_open_their_dialog(live_server, page):
    page.goto(f"{live_server.url}/s/example1_jack_and_jill")
    page.get_by_label("Jack").check()
    page.get_by_label("Jill").check()
    page.get_by_role("button", name="Show dialog").click()
    expect(page).to_have_url(f"{live_server.url}/s/example1_jack_and_jill/dialog?agents=agent_jack&agents=agent_jill")
    items = page.locator("#av-dialog > article")
    expect(items).to_have_count(3)
    assert items.evaluate_all("els => els.map(e => e.id)") == ["msg_012", "msg_015", "msg_018"]


def test_appended_lines_appear_live_without_a_reload(live_server, page):
    path = live_server.folder / "example1_jack_and_jill.jsonl"
    page.goto(f"{live_server.url}/s/example1_jack_and_jill/agents/agent_jack")
    page.evaluate("window.__notReloaded = true")
    page.locator("#av-poller").wait_for(state="attached")
    start = time.monotonic()
    write_events(path, [{"message_id": "msg_021", "event_type": "transcript_entry", "agent_id": "agent_jack",
                         "role": "assistant", "content": "Shall we order coffee?"}], mode="a")
    page.wait_for_selector('[id="msg_021"]', timeout=5000)
    latency = time.monotonic() - start
    print(f"live latency: {latency:.2f}s")
    expect(page.locator('[id="msg_021"]')).to_contain_text("Shall we order coffee?")
    assert page.evaluate("window.__notReloaded") is True
    assert latency < 3.0  # the target is 1.5 s; the slack keeps a busy CI machine from flaking


def test_new_agents_appear_in_the_tree_and_open_state_is_kept(live_server, page):
    path = live_server.folder / "example1_jack_and_jill.jsonl"
    page.goto(f"{live_server.url}/s/example1_jack_and_jill")
    page.evaluate("window.__notReloaded = true")
    jack = node(page, "agent_jack").locator("details").first
    jack.evaluate("d => d.open = false")  # the user collapsed Jack
    write_events(path, [
        {"message_id": "msg_021", "event_type": "transcript_entry", "agent_id": "agent_jill", "role": "assistant",
         "tool_calls": [{"id": "c9", "function": {"name": "task", "arguments": "{\"name\": \"Muse\"}"}}]},
        {"message_id": "msg_022", "event_type": "agent_created", "agent_id": "agent_muse", "cause": "msg_021",
         "name": "Muse"},
    ], mode="a")
    muse = node(page, "agent_jill").locator('li.node[data-agent="agent_muse"]')
    expect(muse).to_contain_text("Muse", timeout=5000)
    expect(muse).to_contain_text("task(name=Muse)")
    expect(node(page, "agent_jill").locator("#av-count-2")).to_have_text("5")
    assert jack.evaluate("d => d.open") is False
    expect(page.get_by_label("Muse")).to_be_visible()  # and in the dialog picker
    assert page.evaluate("window.__notReloaded") is True


def test_a_new_file_appears_on_the_sessions_page(live_server, page):
    page.goto(live_server.url + "/")
    expect(page.locator("#av-sessions")).to_contain_text("research_team")
    write_events(live_server.folder / "later" / "fresh.jsonl", [
        {"message_id": "m1", "event_type": "agent_created", "agent_id": "a", "name": "Fresh"}])
    expect(page.locator("#av-sessions")).to_contain_text("fresh", timeout=5000)
    expect(page.locator("#av-sessions")).to_contain_text("later/fresh.jsonl")


def test_dialog_grows_live(live_server, page):
    path = live_server.folder / "example1_jack_and_jill.jsonl"
    page.goto(f"{live_server.url}/s/example1_jack_and_jill/dialog?agents=agent_jack,agent_jill")
    expect(page.locator("#av-dialog > article")).to_have_count(3)
    write_events(path, [
        {"message_id": "msg_021", "event_type": "transcript_entry", "agent_id": "agent_jack", "role": "assistant",
         "content": "Coffee?"},
        {"message_id": "msg_022", "event_type": "transcript_entry", "agent_id": "agent_jill", "role": "user",
         "content": "[Jack]: Coffee?", "substance": "msg_021"},
    ], mode="a")
    expect(page.locator("#av-dialog > article")).to_have_count(4, timeout=5000)
    expect(page.locator('[id="msg_021"] .recipients')).to_contain_text("Jill")


def test_copy_link_and_anchor(live_server, page):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{live_server.url}/s/example1_jack_and_jill/agents/agent_jill#msg_017")
    expect(page.locator('[id="msg_017"]')).to_be_in_viewport()
    expect(page.locator('[id="msg_017"] .copy-link').first).to_be_hidden()  # in the entry's menu, not on its face
    page.locator('[id="msg_017"] > details.entry-menu > summary').click()
    page.locator('[id="msg_017"] .copy-link').first.click()
    expect(page.locator('[id="msg_017"] .copy-link').first).to_have_text("copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == f"{live_server.url}/s/example1_jack_and_jill/agents/agent_jill#msg_017"


def test_screenshot_of_the_session_page_for_the_readme(live_server, page, tmp_path):
    """Writes docs/session-page.png when AGENTVIEW_UPDATE_SCREENSHOTS=1, else a scratch copy (no churn)."""
    target = SCREENSHOT if os.environ.get("AGENTVIEW_UPDATE_SCREENSHOTS") == "1" else tmp_path / SCREENSHOT.name
    page.set_viewport_size({"width": 1280, "height": 760})
    page.goto(f"{live_server.url}/s/research_team")
    expect(node(page, "agent_writer_inner")).to_be_visible()
    page.get_by_label("Writer", exact=False).and_(page.locator('[value="agent_writer"]')).check()
    page.locator('#av-picker input[value="agent_critic"]').check()
    target.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(target))
    assert target.read_bytes().startswith(b"\x89PNG") and target.stat().st_size > 10_000


def test_secrets_are_masked_until_this_browser_reveals_them(live_server, page):
    write_events(live_server.folder / "keys.jsonl", [
        {"message_id": "m1", "event_type": "transcript_entry", "agent_id": "a", "role": "user",
         "content": "deploy with OPENAI key sk-proj-Zq8Lm2Nx7Rt5Vw3Yb1Cd9Fg and Authorization: Bearer abc.def.ghi"}])
    live_server.wait_for_session("keys")
    url = f"{live_server.url}/s/keys/agents/a"
    page.goto(url)
    entry = page.locator('[id="m1"]')
    expect(entry).to_contain_text("sk-p…[masked]")
    expect(entry).not_to_contain_text("Zq8Lm2Nx7Rt5Vw3Yb1Cd9Fg")
    page.get_by_role("button", name="Menu").click()  # the secrets toggle is in the menu
    page.get_by_role("button", name="Show secrets").click()
    expect(entry).to_contain_text("sk-proj-Zq8Lm2Nx7Rt5Vw3Yb1Cd9Fg")
    expect(entry).to_contain_text("Bearer abc.def.ghi")
    expect(page.get_by_text("secrets shown")).to_be_visible()
    assert page.url == url  # nothing in the link: a colleague opening it sees the masked page
    other = page.context.browser.new_context().new_page()  # another browser profile, same link
    other.goto(url)
    expect(other.locator('[id="m1"]')).not_to_contain_text("Zq8Lm2Nx7Rt5Vw3Yb1Cd9Fg")
    other.context.close()
    page.get_by_role("button", name="Menu").click()  # the secrets toggle is in the menu
    page.get_by_role("button", name="Hide secrets").click()
    expect(entry).not_to_contain_text("Zq8Lm2Nx7Rt5Vw3Yb1Cd9Fg")
