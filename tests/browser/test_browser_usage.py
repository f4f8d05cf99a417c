"""The usage page in a real Chromium: bars drawn where usage was logged, a click on a bar listing the sessions
behind it, a filter set and removed, the page following a growing folder, and a phone in both colour schemes."""

from __future__ import annotations

import pytest
from claude_lines import Transcript
from playwright.sync_api import expect

from conftest import open_on_a_phone, serve
from test_usage_page import PLANTED, _write

pytestmark = pytest.mark.browser


@pytest.fixture
def server(tmp_path):
    _write(tmp_path)
    with serve(tmp_path) as live:
        yield live


def test_a_bar_lists_the_sessions_behind_it_and_a_row_narrows_to_its_project(server, page):
    page.goto(server.url + "/")
    page.locator("a.nav-usage").click()
    expect(page.locator("h1")).to_have_text("Usage")
    bars = page.locator("svg.usage-bars a.bar")
    expect(bars).to_have_count(30)
    heights = {bar.get_attribute("data-from"): bar.locator("rect:not(.hit)").count() for bar in bars.all()}
    assert {day for day, parts in heights.items() if parts} == {"2025-02-20", "2025-03-03", "2025-03-05"}
    tall = page.locator('a.bar[data-from="2025-03-03"] rect:not(.hit)').first.bounding_box()
    assert tall["height"] > 20, "the day with the most cost is drawn tall"
    page.locator('a.bar[data-from="2025-03-03"] rect.hit').click()
    expect(page).to_have_url(f"{server.url}/usage?from=2025-03-03&to=2025-03-03")
    expect(page.locator(".usage-sessions .session-link")).to_have_count(1)
    expect(page.locator(".usage-sessions .session-path")).to_contain_text(PLANTED[0][1])
    page.goto(server.url + "/usage")
    page.locator("section[aria-labelledby='av-by-project'] a", has_text="beta").click()
    expect(page.locator(".chip code")).to_have_text("beta")
    expect(page.locator(".usage-sessions .session-link")).to_have_count(1)
    page.locator(".chip a").click()
    expect(page.locator(".chip")).to_have_count(0)
    expect(page.locator(".usage-sessions .session-link")).to_have_count(3)


def test_the_page_follows_a_growing_folder(server, page):
    page.goto(server.url + "/usage")
    sessions = page.locator(".usage-totals .usage-sessions")
    expect(sessions).to_have_text("3")
    t = Transcript("a3000000-0000-4000-8000-000000000004")
    t.user("late question")["timestamp"] = "2025-03-04T10:00:00.000Z"
    for line in t.response("msg_late", [{"type": "text", "text": "late"}], model="claude-opus-4-1",
                           usage={"input_tokens": 7000, "output_tokens": 3000}):
        line["timestamp"] = "2025-03-04T10:00:00.000Z"
    t.write(server.folder / "alpha" / "late.jsonl")
    expect(sessions).to_have_text("4", timeout=15000)
    expect(page.locator('a.bar[data-from="2025-03-04"] rect:not(.hit)')).to_have_count(1)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_a_phone_nothing_scrolls_sideways_and_the_bars_are_seen(server, page, scheme):
    open_on_a_phone(page, server.url + "/usage", scheme)
    expect(page.locator("svg.usage-bars a.bar")).to_have_count(30)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    chart = page.locator("svg.usage-bars").bounding_box()
    assert chart["width"] <= 360 and chart["x"] >= 0
    fills = {page.locator(f"rect.series-{i}").first.evaluate("r => getComputedStyle(r).fill") for i in (0, 1)}
    assert len(fills) == 2 and "rgba(0, 0, 0, 0)" not in fills, "each model its own visible colour"
    background = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
    assert background == ("rgb(255, 255, 255)" if scheme == "light" else "rgb(15, 18, 23)")
