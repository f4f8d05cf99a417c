"""Search, filters and keys in a real Chromium against `agentview serve` on a temp folder."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from conftest import write_events
from events import say

pytestmark = pytest.mark.browser


def test_search_box_finds_and_opens_a_message(live_server, page):
    page.goto(f"{live_server.url}/s/research_team/agents/agent_writer")
    box = page.get_by_role("searchbox", name="Search this session")
    expect(box).to_be_visible()
    box.fill('"rotate it" agent:critic')
    box.press("Enter")
    expect(page).to_have_url(re.compile(r"/search\?q=.*&session=research_team$"))
    hits = page.get_by_role("list", name="Search results").locator("li.search-hit")
    expect(hits).to_have_count(1)
    expect(hits.first.locator("mark")).to_have_text("rotate it")
    expect(hits.first).to_contain_text("Critic")
    hits.first.locator("a.hit-link").click()
    expect(page).to_have_url(f"{live_server.url}/s/research_team/agents/agent_critic#msg_115")
    expect(page.locator('[id="msg_115"]')).to_be_in_viewport()
    # unticking "only this session" searches every session
    page.get_by_role("searchbox").fill("jill")
    page.get_by_label("only this session").uncheck()
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("li.search-hit a.hit-session").first).to_have_text("example1_jack_and_jill")


def test_a_new_matching_event_appears_in_the_results_live(live_server, page):
    page.goto(f"{live_server.url}/search?q=espresso")
    expect(page.locator("main")).to_contain_text("No hits")
    page.evaluate("window.__notReloaded = true")
    page.locator("#av-poller").wait_for(state="attached")
    write_events(live_server.folder / "example1_jack_and_jill.jsonl",
                 [say("msg_021", "agent_jack", "Shall we order an espresso?"), say("msg_022", "agent_jack", "Tea?")],
                 mode="a")
    hit = page.locator("li.search-hit")
    expect(hit).to_have_count(1, timeout=5000)
    expect(hit.locator("mark")).to_have_text("espresso")
    expect(page.get_by_role("status").filter(has_text="new hit")).to_have_text("1 new hit arrived")
    assert page.evaluate("window.__notReloaded") is True
    hit.locator("a.hit-link").click()
    expect(page.locator('[id="msg_021"]')).to_contain_text("Shall we order an espresso?")


def test_a_hit_in_long_collapsed_text_opens_it(live_server, page):
    long_text = "filler words. " * 80 + "the hidden needle is here"
    write_events(live_server.folder / "long.jsonl", [say("m1", "agent_x", long_text)])
    live_server.wait_for_session("long")
    page.goto(f"{live_server.url}/search?q=needle")
    page.locator("li.search-hit a.hit-link").click()
    expect(page).to_have_url(f"{live_server.url}/s/long/agents/agent_x#m1")
    details = page.locator('[id="m1"] details.long')
    expect(details).to_have_attribute("open", "")
    expect(details.locator("pre.content")).to_contain_text("the hidden needle is here")


def test_a_hit_on_an_agent_opens_its_collapsed_tree_nodes(live_server, page):
    page.goto(f"{live_server.url}/s/research_team")
    page.get_by_role("button", name="Collapse all").click()
    reader = page.locator('li.node[data-agent="agent_scout_reader"] a.agent-name')
    expect(reader).to_be_hidden()
    page.goto(f"{live_server.url}/search?q=paperreader+role:created&session=research_team")
    url = page.locator("li.search-hit a.hit-link").first.get_attribute("href")
    assert url.startswith("/s/research_team#av-node-")
    page.go_back()
    page.get_by_role("button", name="Collapse all").click()
    expect(reader).to_be_hidden()
    page.evaluate("url => { window.location.hash = url.split('#')[1]; }", url)  # same page: only the hash moves
    expect(reader).to_be_visible()
    expect(reader).to_be_focused()


def test_a_filtered_view_is_a_shareable_link(live_server, page, context):
    page.goto(f"{live_server.url}/s/research_team/agents/agent_writer")
    page.locator("details.filter-panel > summary").click()  # folded until a filter is in force
    filters = page.get_by_role("form", name="Filter messages")
    filters.get_by_label("heard").check()
    filters.get_by_label("modified deliveries only").check()
    filters.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"kind=heard"))
    query = parse_qs(urlsplit(page.url).query)
    assert query == {"kind": ["heard"], "modified": ["1"]}
    expect(page.locator("#av-entries > article")).to_have_count(1)
    expect(page.locator("#av-entries > article").first).to_have_id("msg_113")
    shared = context.new_page()  # a colleague opening the link
    shared.goto(page.url)
    expect(shared.locator("#av-entries > article")).to_have_count(1)
    expect(shared.get_by_label("modified deliveries only")).to_be_checked()
    shared.get_by_role("link", name="clear filters").click()
    expect(shared.locator("#av-entries > article")).not_to_have_count(1)


def test_keyboard_keys(live_server, page):
    page.goto(f"{live_server.url}/s/example2_inner_monologue/agents/agent_jill")
    entries = page.locator("#av-entries > article")
    page.keyboard.press("j")
    expect(entries.nth(0)).to_be_focused()
    expect(entries.nth(0)).to_have_class(re.compile("kb-current"))
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(entries.nth(2)).to_be_focused()
    page.keyboard.press("k")
    expect(entries.nth(1)).to_be_focused()
    expect(entries.nth(0)).not_to_have_class(re.compile("kb-current"))
    # ? shows the keys; Escape closes them
    page.keyboard.press("?")
    help_dialog = page.get_by_role("dialog", name="Keyboard")
    expect(help_dialog).to_be_visible()
    expect(help_dialog).to_contain_text("previous / next agent in the tree")
    page.keyboard.press("Escape")
    expect(help_dialog).to_be_hidden()
    # / focuses the search box; typing there does not move between messages
    page.keyboard.press("/")
    box = page.get_by_role("searchbox")
    expect(box).to_be_focused()
    page.keyboard.type("jk")
    expect(box).to_have_value("jk")
    page.keyboard.press("Escape")
    # ] and [ walk the tree top to bottom: Jill -> Inner -> Jill
    page.keyboard.press("]")
    expect(page).to_have_url(f"{live_server.url}/s/example2_inner_monologue/agents/agent_jill_inner")
    page.wait_for_load_state("load")  # a key pressed before the new page's handlers exist is lost
    page.keyboard.press("[")
    expect(page).to_have_url(f"{live_server.url}/s/example2_inner_monologue/agents/agent_jill")
    page.wait_for_load_state("load")
    # o on a message opens its message page when it has no collapsed text
    page.keyboard.press("j")
    page.keyboard.press("o")
    expect(page).to_have_url(re.compile(r"/s/example2_inner_monologue/messages/"))


def test_keyboard_opens_collapsed_text_and_search_hits(live_server, page):
    write_events(live_server.folder / "long.jsonl", [say("m1", "agent_x", "many words. " * 100),
                                                     say("m2", "agent_x", "short")])
    live_server.wait_for_session("long", events=2)
    page.goto(f"{live_server.url}/s/long/agents/agent_x")
    details = page.locator('[id="m1"] details.long')
    expect(details).not_to_have_attribute("open", "")
    page.keyboard.press("j")
    page.keyboard.press("o")
    expect(details).to_have_attribute("open", "")
    page.keyboard.press("Enter")
    expect(details).not_to_have_attribute("open", "")
    page.goto(f"{live_server.url}/search?q=short")
    page.keyboard.press("j")
    expect(page.locator("li.search-hit").first).to_be_focused()
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{live_server.url}/s/long/agents/agent_x#m2")
