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


def test_the_spawn_graph_has_one_edge_per_spawned_agent_and_opens_agents(live_server, page):
    page.goto(f"{live_server.url}/s/research_team")
    page.get_by_role("link", name="spawn graph").click()
    graph = page.locator("#av-spawn-graph")
    expect(graph.locator("g.spawn-edge")).to_have_count(7)
    expect(graph.locator("a.spawn-node")).to_have_count(8)
    graph.locator('a.spawn-node[data-agent="agent_scout_reader"]').click()
    expect(page).to_have_url(f"{live_server.url}/s/research_team/agents/agent_scout_reader")
    lineage = page.get_by_role("navigation", name="Why this agent exists")
    expect(lineage.locator("li")).to_have_count(4)
    lineage.locator("a.call").nth(1).click()
    expect(page).to_have_url(f"{live_server.url}/s/research_team/messages/msg_063")
