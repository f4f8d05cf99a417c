"""The flow views as a person sees and clicks them: a real Chromium against `agentview serve`."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_a_modified_delivery_shows_its_word_diff(live_server, page):
    page.goto(f"{live_server.url}/s/research_team/hooks")
    expect(page.locator("#av-hook-counts tbody tr")).to_have_count(2)
    writer = page.locator('section.hook-group[data-agent="agent_writer"]')
    expect(writer.locator(".diff-original del")).to_have_text(["sk-live-51Hx9fQ2aZ7rL0mN3vB8cT4yW6"])
    expect(writer.locator(".diff-delivered ins")).to_have_text(["[Researcher]: ", "[REDACTED]"])
    writer.locator("a.msg", has_text="msg_113").first.click()
    expect(page).to_have_url(f"{live_server.url}/s/research_team/messages/msg_113")
    expect(page.locator("#av-provenance .diff-delivered ins").nth(1)).to_have_text("[REDACTED]")
    expect(page.locator("#av-provenance .diff-original del")).to_have_text("sk-live-51Hx9fQ2aZ7rL0mN3vB8cT4yW6")
