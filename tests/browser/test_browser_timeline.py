"""The timeline in a real Chromium: lanes nested as the tree, a failed call red, a click on a bar opening its
entry, the labels staying while the lanes scroll at a phone's width, both colour schemes."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from conftest import open_on_a_phone, serve
from test_timeline import session as timed_session  # noqa: F401  (a fixture)

pytestmark = pytest.mark.browser


@pytest.fixture
def server(timed_session):  # noqa: F811
    with serve(timed_session.parent) as live:
        live.wait_for_session("run", events=14)
        yield live


def test_lanes_nest_and_a_bar_opens_its_entry(server, page):
    page.goto(server.url + "/s/run")
    page.locator("#av-timeline-link").click()
    lanes = page.locator(".timeline .lane[data-agent]")
    expect(lanes).to_have_count(2)
    expect(lanes.nth(0)).to_have_class("lane depth-0")
    expect(lanes.nth(1)).to_have_class("lane depth-1")
    lead_label, worker_label = (lanes.nth(i).locator(".lane-label a.agent").bounding_box() for i in (0, 1))
    assert worker_label["x"] > lead_label["x"], "a sub-agent's label is indented under its parent's"
    failed = lanes.nth(0).locator("rect.bar.tool.failed")
    expect(failed).to_have_count(1)
    assert page.evaluate("getComputedStyle(document.querySelector('rect.bar.failed')).fill") != page.evaluate(
        "getComputedStyle(document.querySelector('rect.bar.tool:not(.failed)')).fill")
    expect(failed.locator("title")).to_have_text("Lead: 1 tool call, 1 failed; longest 3 s")
    failed.click()
    expect(page).to_have_url(f"{server.url}/s/run/agents/lead#a2")
    expect(page.locator('[id="a2"]')).to_contain_text("make")


# Every element that scrolls sideways (its content wider than it, and overflow-x letting it scroll).
SIDEWAYS = """() => [...document.querySelectorAll('*')].filter(e => e.scrollWidth > e.clientWidth + 1
    && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX)).map(e => e.className || e.tagName)"""

# Each lane label's box, and whether what is drawn at its middle is the label (not a bar scrolled over it).
LABELS = """box => [...box.querySelectorAll('.lane[data-agent] .lane-label')].map(l => {
    const r = l.getBoundingClientRect(), hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return {left: r.left, right: r.right, shown: l.contains(hit)}; })"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_a_phone_the_lanes_scroll_and_the_labels_stay(server, page, scheme):
    open_on_a_phone(page, server.url + "/s/run/timeline", scheme)
    box = page.locator(".timeline")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    assert box.evaluate("b => b.scrollWidth > b.clientWidth"), "the lanes scroll inside their box"
    assert page.evaluate(SIDEWAYS) == ["timeline"], "nothing but the lanes' own box scrolls sideways"
    page.evaluate("window.scrollTo(200, 0)")
    assert page.evaluate("window.scrollX") == 0, "the page itself does not move sideways"
    left = box.evaluate("b => b.getBoundingClientRect().left")
    before = box.evaluate(LABELS)
    assert len(before) == 2 and all(label["shown"] for label in before)
    for scrolled in ("300", "b.scrollWidth"):  # part way, then as far as it goes
        box.evaluate(f"b => b.scrollLeft = {scrolled}")
        assert box.evaluate("b => b.scrollLeft") > 0
        labels = box.evaluate(LABELS)
        for label, was in zip(labels, before):
            assert abs(label["left"] - was["left"]) < 1 and label["left"] >= left - 1, "each label stays in place"
            assert label["right"] <= 360 and label["shown"], "in view, above the bars that scroll under it"
    label = page.locator(".lane[data-agent='lead'] .lane-label")
    background = label.evaluate("l => getComputedStyle(l).backgroundColor")
    assert background.startswith("rgb("), "opaque: the lanes scroll under it unseen"
    brightness = sum(int(part) for part in background[4:-1].split(","))
    assert brightness > 600 if scheme == "light" else brightness < 150, background

def test_a_deleted_session_s_timeline_says_so_and_keeps_its_chart(server, timed_session, page):  # noqa: F811
    page.goto(server.url + "/s/run/timeline")
    expect(page.locator(".timeline .lane[data-agent]")).to_have_count(2)
    timed_session.unlink()
    expect(page.locator("#av-gone")).to_contain_text("gone", timeout=15000)
    expect(page.locator(".timeline .lane[data-agent]")).to_have_count(2)  # what it showed stays readable
