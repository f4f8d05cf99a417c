"""How the pages read: light and dark, phones, finding one's way, accessibility; a real Chromium on every page kind."""

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from page_kinds import PAGE_KINDS, wider_than_the_screen

pytestmark = pytest.mark.browser


def background(page):
    return page.evaluate("getComputedStyle(document.documentElement).backgroundColor")


def test_dark_mode_follows_the_system_on_every_page_kind(live_server, page):
    for kind, path in PAGE_KINDS.items():
        page.emulate_media(color_scheme="light")
        page.goto(live_server.url + path)
        light = background(page)
        page.emulate_media(color_scheme="dark")
        dark = background(page)
        assert light == "rgb(255, 255, 255)", kind
        assert dark != light, kind
        # The pictures follow too: the chart's lane names and the spawn graph's boxes are drawn in theme colours.
        if kind in ("chart", "spawn-graph"):
            shape = page.locator("svg .lane-name, svg .spawn-node rect").first
            page.emulate_media(color_scheme="light")
            light_fill = shape.evaluate("e => getComputedStyle(e).fill")
            page.emulate_media(color_scheme="dark")
            assert shape.evaluate("e => getComputedStyle(e).fill") != light_fill, kind


def theme_choice(page, name):
    """The menu's theme radio `name`, the menu opened first."""
    menu = page.get_by_role("button", name="Menu")
    if menu.get_attribute("aria-expanded") != "true":
        menu.click()
    return page.get_by_role("group", name="Colour theme").get_by_role("radio", name=name)


def test_the_chosen_theme_persists_across_pages_and_wins_over_the_system(live_server, page):
    page.emulate_media(color_scheme="light")
    page.goto(f"{live_server.url}/s/research_team")
    expect(theme_choice(page, "System")).to_be_checked()
    theme_choice(page, "Dark").check()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    assert background(page) != "rgb(255, 255, 255)"
    page.goto(f"{live_server.url}/s/research_team/chart")  # another page: set before the first paint
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    expect(theme_choice(page, "Dark")).to_be_checked()
    page.emulate_media(color_scheme="dark")
    theme_choice(page, "Light").check()
    assert background(page) == "rgb(255, 255, 255)"  # light chosen in a dark system
    theme_choice(page, "System").check()
    page.reload()
    assert page.evaluate("document.documentElement.dataset.theme") is None
    assert background(page) != "rgb(255, 255, 255)"  # the system's dark again


def test_no_page_scrolls_sideways_on_a_phone(live_server, page):
    long_named = {"session named in one long word": "/s/example3_hook_intervention",
                  "its problems": "/s/example3_hook_intervention/problems"}
    assert wider_than_the_screen(page, live_server.url, {**PAGE_KINDS, **long_named}.values()) == {}


def test_the_header_keeps_its_search_field_and_folds_the_rest_into_a_menu_on_a_phone(live_server, page):
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(f"{live_server.url}/s/research_team")
    search = page.get_by_role("searchbox")
    menu = page.get_by_role("button", name="Menu")
    expect(search).to_be_visible()
    expect(page.get_by_role("group", name="Colour theme")).to_be_hidden()
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_role("group", name="Colour theme")).to_be_visible()
    page.set_viewport_size({"width": 1440, "height": 900})
    expect(menu).to_be_visible()
    expect(search).to_be_visible()


def test_a_diff_is_stacked_on_a_phone_and_side_by_side_on_a_desktop(live_server, page):
    page.goto(f"{live_server.url}/s/research_team/messages/msg_113")
    diff = page.locator("#av-provenance .side-by-side").first
    original, delivered = diff.locator(".diff-original"), diff.locator(".diff-delivered")
    assert original.bounding_box()["y"] == delivered.bounding_box()["y"]
    page.set_viewport_size({"width": 360, "height": 740})
    assert delivered.bounding_box()["y"] > original.bounding_box()["y"]


def agent_colour(locator):
    return locator.evaluate("e => getComputedStyle(e).getPropertyValue('--agent').trim()")


def test_an_agent_page_has_the_tree_beside_its_transcript_and_a_drawer_on_a_phone(live_server, page):
    page.goto(f"{live_server.url}/s/research_team/agents/agent_writer")
    tree = page.get_by_role("navigation", name="Agents", exact=True)
    current = tree.locator("a[aria-current=page]")
    expect(current).to_have_text("Writer")
    assert tree.bounding_box()["x"] + tree.bounding_box()["width"] <= page.locator("h1").bounding_box()["x"]
    expect(tree.locator("a.agent-name")).to_have_count(8)
    tree.get_by_role("link", name="Critic").click()
    expect(page).to_have_url(f"{live_server.url}/s/research_team/agents/agent_critic")
    page.set_viewport_size({"width": 360, "height": 740})
    tree = page.get_by_role("navigation", name="Agents", exact=True)
    expect(tree).to_be_hidden()
    page.get_by_role("button", name="Agents of this session").click()
    expect(tree).to_be_visible()
    expect(tree.locator("a[aria-current=page]")).to_be_focused()


def test_the_header_stays_in_view_and_next_agent_says_what_it_follows(live_server, page):
    page.set_viewport_size({"width": 1440, "height": 600})
    page.goto(f"{live_server.url}/s/research_team/agents/agent_writer")
    page.mouse.wheel(0, 5000)
    page.wait_for_function("window.scrollY > 1000")
    header = page.locator("header.top")
    assert header.bounding_box()["y"] == 0
    expect(header.get_by_role("searchbox")).to_be_in_viewport()
    expect(header.get_by_role("navigation", name="Breadcrumb")).to_contain_text("Writer")
    nav = page.get_by_role("navigation", name="Agents in tree order")
    expect(nav).to_contain_text("previous / next in the tree, read top to bottom")
    expect(nav.locator("a[rel=next]")).to_have_attribute("title", "next agent in the tree, read top to bottom ( ] )")
    page.set_viewport_size({"width": 360, "height": 700})  # a phone: the links' titles say it, the first message comes sooner
    expect(nav.locator(".hint")).to_be_hidden()
    expect(nav.locator("a[rel=next]")).to_be_visible()


def test_each_agent_has_one_colour_on_every_page(live_server, page):
    base = f"{live_server.url}/s/research_team"
    page.goto(base)
    writer = agent_colour(page.locator('li.node[data-agent="agent_writer"] .agent-name').first)
    critic = agent_colour(page.locator('li.node[data-agent="agent_critic"] .agent-name').first)
    assert writer and critic and writer != critic
    page.goto(f"{base}/agents/agent_writer")
    assert agent_colour(page.locator("h1")) == writer
    assert agent_colour(page.locator("ul.agent-tree a", has_text="Critic")) == critic
    page.goto(f"{base}/chart")
    assert agent_colour(page.locator('#av-chart a.lane-head[data-agent="agent_writer"] .lane-name')) == writer
    page.goto(f"{base}/spawn")
    assert agent_colour(page.locator('#av-spawn-graph a.spawn-node[data-agent="agent_critic"] rect')) == critic


def test_the_chart_keeps_its_lane_headers_in_view_while_it_scrolls(live_server, page):
    page.set_viewport_size({"width": 1440, "height": 700})
    page.goto(f"{live_server.url}/s/research_team/chart")
    box = page.locator(".figure.chart-box")
    head = page.locator('#av-chart a.lane-head[data-agent="agent_root"] .lane-name')
    top = box.bounding_box()["y"]
    box.evaluate("b => { b.scrollTop = 1500; b.dispatchEvent(new Event('scroll')); }")
    assert box.evaluate("b => b.scrollTop") > 1000
    assert abs(head.bounding_box()["y"] - (top + 8)) < 20
    assert page.evaluate("document.documentElement.scrollWidth") <= 1440


def test_the_spawn_graph_opens_fitted_and_centred_and_zooms(live_server, page):
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(f"{live_server.url}/s/research_team/spawn")
    box = page.locator(".figure.spawn-box")
    svg = page.locator("#av-spawn-graph")
    fitted = svg.bounding_box()["width"]
    assert fitted <= box.evaluate("b => b.clientWidth") + 1
    root = page.locator("#av-spawn-graph a.spawn-node.root rect").bounding_box()
    centre = box.bounding_box()["x"] + box.bounding_box()["width"] / 2
    assert abs(root["x"] + root["width"] / 2 - centre) < 20
    page.get_by_role("button", name="Zoom in").click()
    page.get_by_role("button", name="Zoom in").click()
    assert svg.bounding_box()["width"] > fitted * 1.5
    assert page.evaluate("document.documentElement.scrollWidth") <= 360  # the box scrolls, not the page
    page.get_by_role("button", name="Fit").click()
    assert abs(svg.bounding_box()["width"] - fitted) < 2


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1440, 360])  # a desktop's, where nothing is folded away, and a phone's
def test_axe_finds_nothing_serious_and_headings_go_in_order_on_any_page_kind(live_server, page, scheme, width):
    axe = Axe()
    page.set_viewport_size({"width": width, "height": 900 if width > 1000 else 740})
    page.emulate_media(color_scheme=scheme)
    found = {}
    kinds = list(PAGE_KINDS.items())
    if width < 1000:  # a phone folds the agent tree into a drawer: checked open too
        kinds += [("agent, its drawer open", PAGE_KINDS["agent"]), ("session, its drawer open", PAGE_KINDS["session"])]
    kinds.append(("session, the header's menu open", PAGE_KINDS["session"]))
    for kind, path in kinds:
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
        if kind.endswith("drawer open"):
            page.get_by_role("button", name="Agents of this session").click()
            expect(page.locator("#av-rail a.agent-name").first).to_be_visible()
        if kind.endswith("menu open"):
            page.get_by_role("button", name="Menu").click()
            expect(page.get_by_role("group", name="Colour theme")).to_be_visible()
        violations = axe.run(page).response["violations"]
        serious = [f"{v['id']}: {[n['target'] for n in v['nodes'][:3]]}" for v in violations
                   if v["impact"] in ("serious", "critical") or v["id"] == "heading-order"]
        if serious:
            found[kind] = serious
    assert found == {}


def test_a_skip_link_leads_to_the_content_and_focus_is_visible(live_server, page):
    page.goto(f"{live_server.url}/s/research_team/agents/agent_writer")
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()
    page.keyboard.press("Tab")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"


def test_docs_hold_a_screenshot_of_every_page_kind_at_both_widths_in_both_themes():
    """docs/screenshots.py (`python3 dev.py screenshots`) writes them; this keeps the set complete."""
    from conftest import REPO

    folder = REPO / "docs" / "screenshots"
    missing = [f"{kind}-{device}-{theme}.png" for kind in PAGE_KINDS for device in ("phone", "desktop")
               for theme in ("light", "dark") if not (folder / f"{kind}-{device}-{theme}.png").is_file()]
    assert missing == []
    readme = (REPO / "README.md").read_text()
    assert "python3 dev.py screenshots" in readme and "docs/screenshots/agent-desktop-dark.png" in readme


def test_a_crowded_spawn_graph_folds_children_past_the_limit(live_server, page):
    from events import calls, created, tool_call
    from viewer.reads.pictures import CHILD_LIMIT

    from conftest import write_events

    kids = [f"kid{i:02d}" for i in range(CHILD_LIMIT + 20)]
    events = [created("m0", "root"), calls("m1", "root", *(tool_call(f"c{i}", name=k) for i, k in enumerate(kids))),
              *(created(f"m{i + 2}", k, cause="m1", name=k) for i, k in enumerate(kids))]
    write_events(live_server.folder / "crowd.jsonl", events)
    live_server.wait_for_session("crowd", events=len(events))
    page.goto(f"{live_server.url}/s/crowd/spawn")
    graph = page.locator("#av-spawn-graph")
    expect(graph.locator("a.spawn-node")).to_have_count(CHILD_LIMIT)  # the root and the first CHILD_LIMIT - 1
    more = graph.locator("a.spawn-more")
    expect(more).to_contain_text(f"+{len(kids) - CHILD_LIMIT + 1} more")
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
    more.click()
    expect(page).to_have_url(f"{live_server.url}/s/crowd#av-node-0")
    expect(page.locator("#av-tree li.node")).to_have_count(len(kids) + 1)
