"""A newcomer watches the demo: a real Chromium on `agentview serve` while `agentview demo` writes into
the served folder; agents and messages appear without a reload."""

from __future__ import annotations

import subprocess
import sys

import pytest
from playwright.sync_api import expect

from conftest import REPO

pytestmark = pytest.mark.browser

# Ids in the demo are deterministic: the Writer's inner voice is the fifth agent, created two thirds
# of the way in; the coordinator's closing message is the last of 67 events.
INNER, LAST = "agent_005", "msg_067"


def not_reloaded(page):
    page.evaluate("window.__notReloaded = true")


def test_watch_the_demo_unfold_live(live_server, page):
    page.goto(live_server.url + "/")
    not_reloaded(page)
    # Speed 5: the demo takes about 13 s, so the pages below are open long before its end.
    demo = subprocess.Popen([sys.executable, "-m", "viewer", "demo", str(live_server.folder), "--speed", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO)
    try:
        row = page.locator("#av-session-demo")
        expect(row).to_be_visible(timeout=10_000)  # the new file appears on the sessions page
        assert page.evaluate("window.__notReloaded") is True
        row.get_by_role("link", name="demo").click()
        expect(page).to_have_url(f"{live_server.url}/s/demo")
        not_reloaded(page)
        tree = page.locator("li.node")
        expect(page.locator('li.node[data-agent="agent_001"]')).to_contain_text("Coordinator")
        inner = page.locator(f'li.node[data-agent="{INNER}"]')
        assert inner.count() == 0, "the demo ended before the page opened: nothing left to see live"

        coordinator = page.context.new_page()
        coordinator.goto(f"{live_server.url}/s/demo/agents/agent_001")
        not_reloaded(coordinator)
        last = coordinator.locator(f'[id="{LAST}"]')
        assert last.count() == 0

        # The tree grows: the Writer creates its inner voice, nested under the Writer.
        expect(inner).to_contain_text("Inner", timeout=30_000)
        expect(page.locator('li.node[data-agent="agent_002"]').locator(f'li.node[data-agent="{INNER}"]')) \
            .to_have_count(1)
        expect(tree).to_have_count(5)
        # Messages arrive in the coordinator's perspective, the closing post last.
        expect(last).to_contain_text("Here is the launch post", timeout=30_000)
        expect(coordinator.locator("body")).to_contain_text("[REDACTED]")
        assert page.evaluate("window.__notReloaded") is True
        assert coordinator.evaluate("window.__notReloaded") is True
        assert demo.wait(timeout=30) == 0
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
