"""Comparing two runs of the demo in a real Chromium: from a session page to the comparison, the planted
divergence on top and a click to its entry, at a phone's width in both colour schemes."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import pytest
from playwright.sync_api import expect

from conftest import REPO, open_on_a_phone, serve, wait_for

pytestmark = pytest.mark.browser

PROMPT = "Analyst: the beta numbers the post can quote, please."
CHANGED = "Analyst: only the rating, please."


@pytest.fixture
def server(tmp_path):
    """run-a holds the demo as written, run-b the same demo run again with one prompt changed."""
    for name in ("run-a", "run-b"):  # the demo's own process: this test's thread runs playwright's event loop
        subprocess.run([sys.executable, "-m", "viewer", "demo", str(tmp_path / name), "--speed", "1000"],
                       check=True, capture_output=True, cwd=REPO, timeout=60)
    second = tmp_path / "run-b" / "demo.jsonl"
    second.write_text(second.read_text().replace(PROMPT, CHANGED))
    with serve(tmp_path) as live:
        def listed():
            with urllib.request.urlopen(live.url + "/api/sessions", timeout=5) as response:
                return {row["id"] for row in json.load(response)["sessions"]} >= {"run-a:demo", "run-b:demo"}
        wait_for(listed, timeout=30)
        yield live


def test_the_first_divergence_is_found_where_it_was_planted_and_opens(server, page):
    page.goto(server.url + "/s/run-a:demo")
    page.locator("#av-compare").click()
    page.locator('select[name="b"]').select_option("run-b:demo")
    page.get_by_role("button", name="Compare").click()
    expect(page).to_have_url(f"{server.url}/compare?a=run-a%3Ademo&b=run-b%3Ademo")
    verdict = page.locator("#divergence")
    expect(verdict).to_contain_text("The runs differ")
    expect(verdict).to_contain_text("First divergence: Coordinator, entry 14")
    expect(verdict.locator(".compare-entry").first).to_contain_text(PROMPT)
    expect(verdict.locator(".compare-entry").nth(1)).to_contain_text(CHANGED)
    # Only the two agents that saw the prompt differ; the others are folded as the same.
    expect(page.locator("details.compare-pair[open]")).to_have_count(2)
    expect(page.locator("details.compare-pair:not([open])")).to_have_count(3)
    verdict.locator(".compare-entry a").first.click()
    expect(page).to_have_url(f"{server.url}/s/run-a:demo/agents/agent_001#msg_036")
    expect(page.locator('[id="msg_036"]')).to_be_in_viewport()
    expect(page.locator('[id="msg_036"]')).to_contain_text("the beta numbers")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_comparison_fits_a_phone_in_both_schemes(server, page, scheme):
    open_on_a_phone(page, server.url + "/compare?a=run-a:demo&b=run-b:demo", scheme)
    expect(page.locator("#divergence")).to_contain_text("The runs differ")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    sides = page.locator("#divergence .compare-side")
    first, second = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
    assert second["y"] >= first["y"] + first["height"] - 1, "stacked on a phone, A above B"
    background = page.evaluate("getComputedStyle(document.getElementById('divergence')).backgroundColor")
    assert background == {"light": "rgb(255, 241, 220)", "dark": "rgb(58, 42, 20)"}[scheme]  # --warn-bg
