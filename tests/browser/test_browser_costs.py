"""Costs in a real browser: on the session page's tree nodes (live as responses arrive), the agent page with its
context bars and peak, and `/`; prices from a user's file given with --prices."""

import json
from importlib.metadata import version

import pytest
from playwright.sync_api import expect

from claude_lines import Transcript
from conftest import serve
from test_costs import SESSION, SID, tokens, write_session

pytestmark = pytest.mark.browser


def test_costs_on_the_tree_the_agent_page_and_the_sessions_list(tmp_path, page):
    folder = tmp_path / "logs"
    write_session(folder)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"prices_as_of": "2026-11-01", "models": {
        "mystery-model-1": {"input": 50_000, "output": 50_000, "cache_write": 0, "cache_read": 0,
                            "context_window": 40}}}))
    with serve(folder, "--prices", str(prices)) as server:
        server.wait_for_session(SID, events=12)
        page.goto(server.url + "/")
        expect(page.locator(f'[id="av-session-{SID}"] td.session-cost')).to_have_text("$1.21")  # $0.2055 + 20 tokens at $50,000 a million
        page.goto(f"{server.url}/s/{SID}")
        expect(page.locator("#av-cost")).to_contain_text(
            f"prices as of each response's time, prices.json (as of 2026-11-01) over genai-prices {version('genai-prices')}")
        main = page.locator('li.node[data-agent="main"] > .node-row .node-cost')
        expect(main).to_have_text("$0.1005 · $1.21 with sub-agents")
        deep = page.locator('li.node[data-agent="agent-cd34"] > .node-row .node-cost')
        expect(deep).to_have_text("$1.00")
        helper_file = folder / "-home-dev-app" / SESSION / "subagents" / "agent-ab12.jsonl"
        more = Transcript(SESSION, "hq")
        more.n = 40
        more.response("msg_h2", [{"type": "text", "text": "One more look."}], model="claude-haiku-4-5",
                      usage=tokens(1_234_000, 0))
        with helper_file.open("a") as f:
            f.write(more.text())
        helper = page.locator('li.node[data-agent="agent-ab12"] > .node-row .node-cost')
        expect(helper).to_have_text("$1.34 · $2.34 with sub-agents")  # live: 1,234,000 more input tokens at $1 a million
        expect(main).to_have_text("$0.1005 · $2.44 with sub-agents")
        late = Transcript(SESSION, "lt")  # a sub-agent appearing while the page is open comes with its cost
        late.n = 50
        late.user("Help audit", isSidechain=True, agentId="ef99")
        late.response("msg_l1", [{"type": "text", "text": "Late."}], model="claude-haiku-4-5",
                      usage=tokens(500_000, 0))
        late.write(folder / "-home-dev-app" / SESSION / "subagents" / "agent-ef99.jsonl")
        expect(page.locator('li.node[data-agent="agent-ef99"] > .node-row .node-cost')).to_have_text("$0.5000")
        page.goto(f"{server.url}/s/{SID}/agents/agent-cd34")
        expect(page.locator("#av-cost .peak-context")).to_contain_text("peak context 10 of 40 tokens")
        expect(page.locator(".entry .context meter.context-fill")).to_have_count(1)
        expect(page.locator(".entry .context")).to_contain_text("25% context")


def test_an_agent_pages_rail_shows_each_agents_cost_live(tmp_path, page):
    folder = tmp_path / "logs"
    write_session(folder)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"prices_as_of": "2026-11-01", "models": {
        "mystery-model-1": {"input": 50_000, "output": 50_000, "cache_write": 0, "cache_read": 0}}}))
    with serve(folder, "--prices", str(prices)) as server:
        server.wait_for_session(SID, events=12)
        page.set_viewport_size({"width": 1440, "height": 900})
        page.goto(f"{server.url}/s/{SID}/agents/agent-cd34")
        rail = page.get_by_role("navigation", name="Agents", exact=True)

        def cost(agent):
            return rail.locator(f"li:has(> a.agent-name[href$='/agents/{agent}']) > .node-cost")

        expect(cost("main")).to_have_text("$0.1005 · $1.21 with sub-agents")  # as the session page's tree says
        expect(cost("agent-ab12")).to_have_text("$0.1050 · $1.10 with sub-agents")
        expect(cost("agent-cd34")).to_have_text("$1.00")
        more = Transcript(SESSION, "hq")  # its parent answers: this page's transcript has nothing new
        more.n = 40
        more.response("msg_h2", [{"type": "text", "text": "One more look."}], model="claude-haiku-4-5",
                      usage=tokens(1_234_000, 0))
        with (folder / "-home-dev-app" / SESSION / "subagents" / "agent-ab12.jsonl").open("a") as f:
            f.write(more.text())
        expect(cost("agent-ab12")).to_have_text("$1.34 · $2.34 with sub-agents")
        expect(cost("main")).to_have_text("$0.1005 · $2.44 with sub-agents")
        expect(cost("agent-cd34")).to_have_text("$1.00")
