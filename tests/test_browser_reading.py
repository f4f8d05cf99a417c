"""How the pages read: light and dark, phones, finding one's way, accessibility; a real Chromium on every page kind."""

import pytest
from playwright.sync_api import expect

from page_kinds import PAGE_KINDS

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


def test_the_chosen_theme_persists_across_pages_and_wins_over_the_system(live_server, page):
    page.emulate_media(color_scheme="light")
    page.goto(f"{live_server.url}/s/research_team")
    choice = page.get_by_label("Colour theme")
    expect(choice).to_have_value("system")
    choice.select_option("dark")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    assert background(page) != "rgb(255, 255, 255)"
    page.goto(f"{live_server.url}/s/research_team/chart")  # another page: set before the first paint
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    expect(page.get_by_label("Colour theme")).to_have_value("dark")
    page.emulate_media(color_scheme="dark")
    page.get_by_label("Colour theme").select_option("light")
    assert background(page) == "rgb(255, 255, 255)"  # light chosen in a dark system
    page.get_by_label("Colour theme").select_option("system")
    page.reload()
    assert page.evaluate("document.documentElement.dataset.theme") is None
    assert background(page) != "rgb(255, 255, 255)"  # the system's dark again


def test_no_page_scrolls_sideways_on_a_phone(live_server, page):
    page.set_viewport_size({"width": 360, "height": 740})
    wide = {}
    for kind, path in PAGE_KINDS.items():
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 360:
            wide[kind] = width
    assert wide == {}


def test_the_header_folds_into_a_menu_on_a_phone(live_server, page):
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(f"{live_server.url}/s/research_team")
    search = page.get_by_role("searchbox")
    menu = page.get_by_role("button", name="Menu")
    expect(search).to_be_hidden()
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(search).to_be_focused()
    expect(page.get_by_label("Colour theme")).to_be_visible()
    page.set_viewport_size({"width": 1440, "height": 900})
    expect(menu).to_be_hidden()
    expect(search).to_be_visible()


def test_a_diff_is_stacked_on_a_phone_and_side_by_side_on_a_desktop(live_server, page):
    page.goto(f"{live_server.url}/s/research_team/messages/msg_113")
    diff = page.locator("#av-provenance .side-by-side").first
    original, delivered = diff.locator(".diff-original"), diff.locator(".diff-delivered")
    assert original.bounding_box()["y"] == delivered.bounding_box()["y"]
    page.set_viewport_size({"width": 360, "height": 740})
    assert delivered.bounding_box()["y"] > original.bounding_box()["y"]
