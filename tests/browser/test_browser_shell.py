"""The frame of every page in a real Chromium: one header bar, controls drawn by the stylesheet, a session named by
its title, times said as people say them, and the keyboard map."""

import json
import re
import time
import urllib.request
from datetime import datetime, timezone

import pytest
from playwright.sync_api import expect

from claude_lines import Transcript
from conftest import open_on_a_phone, wait_for
from page_kinds import PAGE_KINDS

pytestmark = pytest.mark.browser

SID = "fe5e1c67-53e7-4b1a-9c2d-3e4f5a6b7c8d"
TITLE = "/orchestrator create TODO app by Next.js"
CONTROLS = """() => Array.from(document.querySelectorAll('input:not([type=hidden]), select, button, textarea'))
  .filter((e) => getComputedStyle(e).appearance !== 'none')
  .map((e) => e.outerHTML.slice(0, 120))"""


def claude_session(folder, minutes_ago=(50, 3)):
    """A Claude Code session titled by its ai-title record, run from `minutes_ago[0]` to `minutes_ago[1]` minutes
    before now; its id as the viewer names it."""
    t = Transcript(SID)
    t.user("Create a TODO app with Next.js, please.")
    t.response("msg_1", [{"type": "text", "text": "On it: scaffolding the app."}])
    t.user("Add a dark mode too.")
    t.response("msg_2", [{"type": "text", "text": "Done."}])
    t.raw({"type": "ai-title", "aiTitle": TITLE, "sessionId": SID})
    start, end = (time.time() - m * 60 for m in minutes_ago)
    stamped = [line for line in t.lines if "timestamp" in line]
    for i, line in enumerate(stamped):
        moment = start + (end - start) * i / (len(stamped) - 1)
        line["timestamp"] = datetime.fromtimestamp(moment, timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"
    t.write(folder / "-home-dev-todo" / f"{SID}.jsonl")
    return start, end


def session_id(server) -> str:
    def found():
        with urllib.request.urlopen(f"{server.url}/api/sessions", timeout=5) as response:
            rows = [s for s in json.load(response)["sessions"] if s["title"] == TITLE]
        return rows[0]["id"] if rows and rows[0]["events"] else None
    return wait_for(found, timeout=10)


def test_no_page_has_a_native_unstyled_control(live_server, page):
    claude_session(live_server.folder)
    sid = session_id(live_server)
    for kind, path in {**PAGE_KINDS, "claude code session": f"/s/{sid}"}.items():
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
        menu = page.get_by_role("button", name="Menu")
        menu.click()  # the menu's radios and buttons too
        expect(page.get_by_role("radio", name="Dark")).to_be_visible()
        assert page.evaluate(CONTROLS) == [], kind


def test_a_claude_code_session_is_named_by_its_title_everywhere(live_server, page):
    claude_session(live_server.folder)
    sid = session_id(live_server)
    page.goto(live_server.url + "/")
    row = page.locator(f'[id="av-session-{sid}"]')
    expect(row.locator("a.session-link")).to_have_text(TITLE)
    row.locator("a.session-link").click()
    expect(page.locator("h1")).to_have_text(TITLE)
    expect(page).to_have_title(f"{TITLE} · agentview")
    expect(page.locator(".session-details")).to_contain_text(sid)  # the id: in the URL and the details line only
    expect(page.get_by_role("navigation", name="Breadcrumb")).to_contain_text(TITLE)
    page.goto(f"{live_server.url}/search?q=dark")
    expect(page.locator("li.search-hit a.hit-session").first).to_have_text(TITLE)


def test_times_are_said_relative_with_the_exact_time_on_hover(live_server, page):
    start, end = claude_session(live_server.folder)
    sid = session_id(live_server)
    page.goto(live_server.url + "/")
    row = page.locator(f'[id="av-session-{sid}"]')
    last = row.locator("td.when time").last
    expect(last).to_have_text("3 min ago")
    iso = datetime.fromtimestamp(end, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    expect(last).to_have_attribute("datetime", iso)
    expect(last).to_have_attribute("title", re.compile(re.escape(f"({iso})") + "$"))
    started = row.locator("td.when time").first
    expect(started).to_have_text(re.compile(r"^(50 min ago)$"))
    expect(row.locator(".duration")).to_have_text("47 min")
    page.goto(f"{live_server.url}/s/{sid}")
    stats = page.locator("#av-session-stats")
    expect(stats.locator("time").last).to_have_text("3 min ago")
    expect(stats.locator(".duration")).to_have_text("47 min")


def test_the_header_is_one_bar_at_360_px_and_its_menu_holds_the_rest(live_server, page):
    page.set_viewport_size({"width": 360, "height": 740})
    for path in PAGE_KINDS.values():
        page.goto(live_server.url + path)
        header = page.locator("header.top").bounding_box()
        assert header["height"] <= 56, path
        for part in ("a.brand", "#av-search-q", ".menu-button"):
            box = page.locator(f"header.top {part}").bounding_box()
            assert box and box["y"] >= header["y"] and box["y"] + box["height"] <= header["y"] + header["height"], (path, part)
        assert page.evaluate("document.documentElement.scrollWidth") <= 360, path
    menu = page.get_by_role("button", name="Menu")
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_role("radio", name="System")).to_be_focused()
    expect(page.get_by_role("button", name="Keys")).to_be_visible()
    page.keyboard.press("Escape")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_role("radio", name="System")).to_be_hidden()


def test_the_keyboard_map_reaches_the_search_and_the_sessions(live_server, page):
    """j/k, o, [ ] and ? on transcripts are tests/browser/test_browser_search.py's; here the shell's keys."""
    page.goto(f"{live_server.url}/s/research_team/agents/agent_writer")
    entries = page.locator("#av-entries > .entry")
    page.keyboard.press("j")
    expect(entries.nth(0)).to_have_class(re.compile("kb-current"))
    page.keyboard.press("Control+k")
    expect(page.locator("#av-search-q")).to_be_focused()
    page.keyboard.press("Escape")
    page.keyboard.press("?")
    keys = page.get_by_role("dialog", name="Keyboard")
    expect(keys).to_contain_text("go to the sessions")
    page.keyboard.press("Escape")
    expect(keys).to_be_hidden()
    page.keyboard.press("g")
    page.keyboard.press("s")
    expect(page).to_have_url(f"{live_server.url}/")
    page.wait_for_load_state("load")  # a key pressed before the new page's handlers exist is lost
    page.keyboard.press("j")  # on the sessions, j picks the newest and o opens it
    first = page.locator("#av-sessions tr.session-row").first
    expect(first).to_have_class(re.compile("kb-current"))
    href = first.locator("a.session-link").get_attribute("href")
    page.keyboard.press("o")
    expect(page).to_have_url(live_server.url + href)


def test_the_first_message_is_three_tab_stops_away(live_server, page):
    page.goto(f"{live_server.url}/s/research_team/agents/agent_writer")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to the transcript")
    expect(skip).to_be_focused()
    page.keyboard.press("Enter")
    # The jump made and handled before the next Tab, else that Tab is undone: by the page, which marks and focuses
    # the linked element once the hash has changed, and by the browser, whose focus of a jump's target may wait for
    # the next frame (while the page's layout is not done): a frame drawn after both.
    entries = page.locator("#av-entries")
    expect(entries).to_have_class(re.compile("kb-current"))
    expect(entries).to_be_focused()
    page.evaluate("() => new Promise((drawn) => requestAnimationFrame(() => requestAnimationFrame(drawn)))")
    expect(entries).to_be_focused()
    page.keyboard.press("Tab")
    first = page.locator("#av-entries > .entry").first
    assert page.evaluate("document.activeElement.closest('#av-entries > .entry') !== null"), page.evaluate("document.activeElement.outerHTML.slice(0, 300)")
    assert first.evaluate("e => e.contains(document.activeElement)")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"


def test_the_sessions_are_one_click_away_in_the_rail_newest_first_and_filterable(live_server, page):
    claude_session(live_server.folder)
    sid = session_id(live_server)
    page.goto(f"{live_server.url}/s/research_team/agents/agent_writer")
    page.locator(".switcher > summary").click()
    rows = page.locator(".switcher-list > li")
    expect(rows.first).to_be_visible()
    listed = rows.count()
    assert listed >= 5
    expect(rows.filter(has_text="research_team").locator("a")).to_have_attribute("aria-current", "page")
    page.locator(".switcher-filter").fill("todo next")
    expect(rows.locator("visible=true")).to_have_count(1)
    row = rows.locator("visible=true")
    expect(row).to_contain_text("3 min ago")
    expect(row).to_contain_text("-home-dev-todo")  # its project
    row.get_by_role("link", name=TITLE).click()
    expect(page).to_have_url(f"{live_server.url}/s/{sid}")
    expect(page.locator("h1")).to_have_text(TITLE)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_session_pages_agent_tree_is_a_drawer_on_a_phone(live_server, page, scheme):
    url = f"{live_server.url}/s/research_team"
    open_on_a_phone(page, url, scheme)
    rail = page.locator("#av-rail")
    opener = page.locator("header.top").get_by_role("button", name="Agents of this session")
    expect(rail).to_be_hidden()  # not stacked under the content: folded away until asked for
    expect(opener).to_be_visible()
    opener.click()
    expect(opener).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_role("dialog", name="Who created whom")).to_be_in_viewport()  # open, it is a modal dialog
    expect(rail.locator("a.agent-name").first).to_be_focused()
    box = rail.bounding_box()
    assert box["x"] == 0 and box["y"] == 0 and box["width"] < 360  # over the page, at its left edge
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    page.keyboard.press("Escape")
    expect(rail).to_be_hidden()
    expect(opener).to_be_focused()
    page.keyboard.press("Enter")  # the keyboard opens it as well
    expect(rail.locator("a.agent-name").first).to_be_focused()
    rail.get_by_role("button", name="Close the agents").click()
    expect(rail).to_be_hidden()
    expect(opener).to_be_focused()
    opener.click()
    page.mouse.click(350, 560)  # beside the drawer, over the dialog picker: closes it, and does nothing else
    expect(rail).to_be_hidden()
    expect(opener).to_be_focused()
    assert page.locator("#av-picker input:checked").count() == 0 and page.url == url
    opener.click()
    rail.get_by_role("link", name="Critic").click()
    expect(page).to_have_url(f"{url}/agents/agent_critic")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    page.goto(url + "#av-tree")  # "Skip to the agents" opens the drawer
    expect(rail).to_be_visible()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_session_whose_path_is_one_long_word_keeps_the_list_within_a_phone(tmp_path, page, scheme):
    """A Codex rollout's path (dated folders, then one long file name) ends in "…" in its card at 360 px."""
    from conftest import serve, write_events
    from events import created, say

    deep = tmp_path / "codex" / "2026" / "03" / "01" / ("rollout-2026-03-01T09-15-00-" + "0199a1b2-3c4d-7e5f-8a9b" * 3)
    write_events(deep.with_suffix(".jsonl"), [created("m1", "main"), say("m2", "main", "done")])
    with serve(tmp_path) as server:
        open_on_a_phone(page, server.url + "/", scheme)
        path = page.locator(".session-path")
        expect(path).to_have_count(1)
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        box = path.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 360
        assert path.evaluate("p => p.scrollWidth > p.clientWidth"), "the path is cut, not wrapped or overflowing"


def focused_in(page, selector: str) -> bool:
    return page.evaluate(f"document.activeElement.closest({selector!r}) !== null")


@pytest.mark.parametrize("path", ["/s/research_team", "/s/research_team/agents/agent_writer"])
def test_an_open_drawer_keeps_focus_as_a_modal_dialog_does(live_server, page, path):
    """Tab and Shift-Tab cycle inside the open drawer; Esc, its close button and a tap beside it close it, and
    focus goes back to the header's button."""
    open_on_a_phone(page, live_server.url + path, "light")
    opener = page.locator("header.top").get_by_role("button", name="Agents of this session")
    opener.click()
    drawer = page.get_by_role("dialog", name=re.compile("Who created whom|Agents of this session"))
    expect(drawer).to_have_attribute("aria-modal", "true")
    stops = drawer.evaluate("""d => Array.from(d.querySelectorAll('a[href], button, summary'))
        .filter((e) => e.getClientRects().length > 0).length""")
    for _ in range(stops + 2):  # once round and beyond: never out of it
        page.keyboard.press("Tab")
        assert focused_in(page, "#av-rail"), page.evaluate("document.activeElement.outerHTML.slice(0, 120)")
    drawer.get_by_role("button", name="Close the agents").focus()
    for _ in range(stops + 2):
        page.keyboard.press("Shift+Tab")
        assert focused_in(page, "#av-rail"), page.evaluate("document.activeElement.outerHTML.slice(0, 120)")
    expect(drawer).to_be_visible()
    page.locator("a.brand").evaluate("a => a.focus()")  # focus sent outside (a script, a screen reader) comes back
    assert focused_in(page, "#av-rail")
    for close in (lambda: page.keyboard.press("Escape"),
                  lambda: drawer.get_by_role("button", name="Close the agents").click(),
                  lambda: page.mouse.click(350, 700)):
        expect(drawer).to_be_visible()
        close()
        expect(page.locator("#av-rail")).to_be_hidden()
        expect(page.get_by_role("dialog")).to_have_count(0)  # closed, it is the page's rail again
        expect(opener).to_be_focused()
        opener.click()
    assert page.url == live_server.url + path  # the tap beside it did nothing else
    page.set_viewport_size({"width": 1440, "height": 800})  # widened while open: the rail again, not a dialog
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(page.locator("#av-rail")).to_be_visible()
    page.set_viewport_size({"width": 360, "height": 800})
    expect(page.locator("#av-rail")).to_be_hidden()


@pytest.mark.parametrize("width", [360, 1440])
def test_the_keys_move_between_agents_at_any_width(live_server, page, width):
    """On a phone the session's tree is in a closed drawer: ] and j open it at the first agent, then move on."""
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(f"{live_server.url}/s/research_team")
    names = page.locator("#av-tree a.agent-name")
    page.keyboard.press("]")
    expect(names.nth(0)).to_be_focused()
    page.keyboard.press("]")
    expect(names.nth(1)).to_be_focused()
    page.keyboard.press("[")
    expect(names.nth(0)).to_be_focused()
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(names.nth(2)).to_be_focused()
    expect(names.nth(2)).to_be_in_viewport()
    page.keyboard.press("o")
    expect(page).to_have_url(f"{live_server.url}/s/research_team/agents/agent_researcher")
    page.wait_for_load_state("load")  # a key pressed before the new page's handlers exist is lost
    page.keyboard.press("]")  # an agent page: to the next agent's page
    expect(page).to_have_url(f"{live_server.url}/s/research_team/agents/agent_researcher_scout")
    page.wait_for_load_state("load")
    page.keyboard.press("j")
    first = page.locator("#av-entries > .entry").first
    expect(first).to_have_class(re.compile("kb-current"))
    expect(first).to_be_in_viewport()
    page.keyboard.press("j")
    expect(page.locator("#av-entries > .entry").nth(1)).to_be_focused()


def test_a_tab_pressed_before_the_jump_is_handled_is_not_undone(live_server, page):
    # The race a fast Tab after "Skip to the transcript" runs into, made certain: focus moves into the target
    # first, then the hash's change is told.
    page.goto(f"{live_server.url}/s/research_team/agents/agent_writer")
    page.evaluate("history.replaceState(null, '', '#av-entries')")
    page.locator("#av-entries > .entry").first.focus()
    expect(page.locator("#av-entries > .entry").first).to_be_focused()
    page.evaluate("window.dispatchEvent(new HashChangeEvent('hashchange'))")
    expect(page.locator("#av-entries > .entry").first).to_be_focused()
    expect(page.locator("#av-entries")).to_have_class(re.compile("kb-current"))
    # a jump with nothing focused inside its target still focuses it
    page.evaluate("document.activeElement.blur(); window.dispatchEvent(new HashChangeEvent('hashchange'))")
    expect(page.locator("#av-entries")).to_be_focused()
