"""What a session cost: genai-prices' prices (a user's file over them), models neither names said to have no price,
costs rolled up per agent, spawn subtree and session, and how full each response's context was."""

from __future__ import annotations

import json
from importlib.metadata import version

import pytest

from claude_lines import Transcript
from viewer.reads import costs, queries
from viewer.core import pricing
from viewer.index import usage

SESSION = "5e55c057-cost"
SID = f"-home-dev-app:{SESSION}"


def tokens(i, o, cw=0, cr=0):
    return {"input_tokens": i, "output_tokens": o, "cache_creation_input_tokens": cw, "cache_read_input_tokens": cr}


def write_session(folder):
    """main (Sonnet 4.5) spawns a helper (Haiku 4.5), which spawns one on a model no table names."""
    project = folder / "-home-dev-app"
    main = Transcript(SESSION, "mn")
    main.user("Audit the app")
    main.response("msg_1", [{"type": "tool_use", "id": "toolu_H", "name": "Task",
                             "input": {"description": "Helper", "prompt": "Help audit", "subagent_type": "general"}}],
                  model="claude-sonnet-4-5-20250929", usage=tokens(1000, 500, 10_000, 50_000))
    main.n = 30  # the helper's lines (10:00:11 on) and its own helper's (10:00:21 on) come before the result
    main.result("toolu_H", "done", toolUseResult={"agentId": "ab12", "status": "completed"})
    main.response("msg_3", [{"type": "text", "text": "All audited."}], model="claude-sonnet-4-5-20250929",
                  usage=tokens(2000, 100, 0, 100_000))
    main.write(project / f"{SESSION}.jsonl")
    subagents = project / SESSION / "subagents"
    helper = Transcript(SESSION, "hp")
    helper.n = 10
    helper.user("Help audit", isSidechain=True, agentId="ab12")
    helper.response("msg_h1", [{"type": "tool_use", "id": "toolu_D", "name": "Task",
                                "input": {"description": "Deep", "prompt": "Dig deeper"}}],
                    model="claude-haiku-4-5", usage=tokens(100_000, 1000))
    helper.result("toolu_D", "dug")
    helper.write(subagents / "agent-ab12.jsonl")
    (subagents / "agent-ab12.meta.json").write_text(json.dumps({"agentType": "general", "description": "Helper",
                                                                "toolUseId": "toolu_H"}))
    deep = Transcript(SESSION, "dp")
    deep.n = 20
    deep.user("Dig deeper", isSidechain=True, agentId="cd34")
    deep.response("msg_d1", [{"type": "text", "text": "Dug."}], model="mystery-model-1", usage=tokens(10, 10))
    deep.write(subagents / "agent-cd34.jsonl")
    (subagents / "agent-cd34.meta.json").write_text(json.dumps({"description": "Deep", "toolUseId": "toolu_D"}))


SHIPPED = pricing.load()  # genai-prices alone, whatever AGENTVIEW_PRICES says where the tests run
SONNET_INPUT = 3.0  # USD per million input tokens of Claude Sonnet 4.5 (Anthropic's list price, up to 200k)


@pytest.fixture
def session(tmp_path):
    from viewer.web.app import create_app

    write_session(tmp_path)
    app = create_app(tmp_path, watch=False, prices=SHIPPED)
    return app, app.extensions["agentview"].library.get(SID)


def test_genai_prices_resolves_providers_aliases_and_cloud_ids_and_guesses_nothing():
    prices = SHIPPED
    assert prices.source == f"genai-prices {version('genai-prices')}" and prices.as_of == "each response's time"
    tenth = tokens(100_000, 0)  # a tenth of a million: under the 200k tokens above which Sonnet costs more
    assert prices.cost("claude-sonnet-4-5-20250929", tenth) == pytest.approx(SONNET_INPUT / 10)
    for same in ("claude-sonnet-4-5", "claude-sonnet-4.5", "anthropic/claude-sonnet-4-5", "claude-sonnet-4-5@20250929"):
        assert prices.cost(same, tenth) == pytest.approx(SONNET_INPUT / 10), same
    # Bedrock's id is its own provider's model: regional endpoints cost a tenth more
    assert prices.cost("us.anthropic.claude-sonnet-4-5-20250929-v1:0", tenth) == pytest.approx(0.33)
    assert prices.cost("gpt-5-codex", tokens(0, 1_000_000)) == pytest.approx(10.0)  # GPT-5's output price
    for unknown in ("claude-sonnet-9", "mystery-model-1", "<synthetic>", "opencode/big-pickle", "", None, 7):
        assert prices.cost(unknown, tenth) is None, unknown  # no guessing from a similar name
    assert prices.window("gpt-5-codex") == 400_000 and prices.window("nope") is None


def test_a_user_file_overrides_and_adds_models_and_a_bad_one_is_refused(tmp_path, monkeypatch):
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps({"prices_as_of": "2026-11-01", "models": {
        "mystery-model-1": {"input": 1000, "output": 1000, "cache_write": 0, "cache_read": 0, "context_window": 20},
        "claude-haiku-4-5": {"input": 2, "output": 10, "cache_write": 2.5, "cache_read": 0.2}}}))
    prices = pricing.load(str(mine))
    assert prices.source == f"mine.json (as of 2026-11-01) over genai-prices {version('genai-prices')}"
    assert prices.window("mystery-model-1") == 20 and prices.cost("mystery-model-1", tokens(1000, 0)) == 1.0
    assert prices.cost("claude-haiku-4-5-20251001", tokens(1_000_000, 0, 1_000_000, 1_000_000)) == 2 + 2.5 + 0.2
    assert prices.cost("claude-opus-4-1", tokens(1_000_000, 0)) == pytest.approx(15.0)  # the rest: genai-prices'
    for bad in ('{"models": {"x": {"input": "cheap"}}}', "[]", "not json",
                '{"models": {"x": {"input": 1, "output": 1, "cache_write": 1, "cache_read": 1, '
                '"cache_write_1h": -1}}}'):
        mine.write_text(bad)
        with pytest.raises(pricing.PriceFileError):
            pricing.load(str(mine))
    monkeypatch.setenv(pricing.ENV, str(tmp_path / "missing.json"))
    with pytest.raises(pricing.PriceFileError):
        pricing.load(str(tmp_path / "missing.json"))


def test_costs_roll_up_per_agent_subtree_and_session_and_unknown_models_have_no_price(session):
    _, s = session
    rolled = costs.tree_costs(s)
    main, helper, deep = rolled["main"], rolled["agent-ab12"], rolled["agent-cd34"]
    assert main["own"]["cost_usd"] == pytest.approx(0.063 + 0.0375) and main["own"]["unpriced_models"] == []
    assert helper["own"]["cost_usd"] == pytest.approx(0.105)
    assert deep["own"] == {"cost_usd": None, "unpriced_models": ["mystery-model-1"]}
    assert helper["subtree"] == {"cost_usd": pytest.approx(0.105), "unpriced_models": ["mystery-model-1"]}
    assert main["subtree"]["cost_usd"] == pytest.approx(0.2055)
    assert main["subtree"]["unpriced_models"] == ["mystery-model-1"]
    assert costs.session_cost(s) == {"cost_usd": pytest.approx(0.2055), "unpriced_models": ["mystery-model-1"]}
    assert costs.usd(0.2055) == "$0.2055" and costs.usd(1234.5) == "$1,234.50" and costs.usd(None) == "no price"


def test_context_fill_per_response_and_the_peak_per_agent(session):
    _, s = session
    first = s.event("mn-0002")
    assert usage.context_fill(first, SHIPPED) == {"tokens": 61_000, "window": 200_000, "percent": 30.5}
    assert usage.for_agent(s, "main")["peak_context"] == {"tokens": 102_000, "window": 200_000, "percent": 51.0}
    deep = usage.for_agent(s, "agent-cd34")["peak_context"]
    assert deep == {"tokens": 10, "window": None, "percent": None}  # no window known: tokens only
    logged = {"usage": tokens(10, 10), "raw": None, "model": "mystery-model-1", "context_window": 40}
    assert usage.context_fill(logged, SHIPPED)["percent"] == 25.0  # the log's own window first (Codex's token_count)


def test_a_cost_the_log_states_is_used_rather_than_the_table():
    totals = usage.Totals()
    totals._priced({"usage": tokens(10, 10), "raw": None, "model": "mystery-model-1", "cost_usd": 0.5},
                   tokens(10, 10), SHIPPED)
    assert totals.cost() == (0.5, [])


def test_pages_show_costs_on_tree_nodes_the_agent_page_and_the_sessions_list(session):
    app, s = session
    client = app.test_client()
    page = client.get(f"/s/{SID}").get_data(as_text=True)
    assert "$0.1005" in page and "$0.2055" in page and "+ no price" in page
    assert f"prices as of each response&#39;s time, genai-prices {version('genai-prices')}" in page
    agent = client.get(f"/s/{SID}/agents/agent-ab12").get_data(as_text=True)
    assert "$0.1050" in agent and "with its sub-agents" in agent and "peak context 100,000 of 200,000" in agent
    assert 'class="context-fill"' in agent and "50% context" in agent
    index = client.get("/").get_data(as_text=True)
    assert "$0.2055" in index
    data = client.get(f"/api/sessions/{SID}").get_json()
    assert data["usage"]["cost_usd"] == pytest.approx(0.2055)
    assert data["usage"]["unpriced_models"] == ["mystery-model-1"]


def test_cache_writes_kept_an_hour_are_priced_at_their_own_rate():
    totals = usage.Totals()
    logged = {**tokens(0, 0, 100_000, 0), "cache_creation": {"ephemeral_5m_input_tokens": 40_000,
                                                              "ephemeral_1h_input_tokens": 60_000}}
    totals._priced({"usage": logged, "raw": None, "model": "claude-sonnet-4-5-20250929"}, usage.of_event(
        {"usage": logged, "raw": None}), SHIPPED)
    assert totals.cost()[0] == pytest.approx(0.04 * 3.75 + 0.06 * 6.0)
    writes = tokens(0, 0, 100_000)  # a model without an hour rate: its cache-write rate
    assert SHIPPED.cost("claude-sonnet-4-5", writes, 100_000) == pytest.approx(0.6)
    assert SHIPPED.cost("gpt-5", writes, 100_000) == SHIPPED.cost("gpt-5", writes) == pytest.approx(0.125)


def test_serve_refuses_a_price_file_that_is_not_one(tmp_path):
    import subprocess
    import sys

    from conftest import REPO

    bad = tmp_path / "prices.json"
    bad.write_text('{"models": {"claude-haiku-4-5": {"input": "cheap"}}}')
    done = subprocess.run([sys.executable, "-m", "viewer", "serve", str(tmp_path), "--port", "0", "--prices", str(bad)],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--prices" in done.stderr and "claude-haiku-4-5" in done.stderr


def test_an_agents_subtree_cost_is_its_entry_of_the_whole_trees_roll_up(session):
    """The agent page asks for its own subtree's cost only: the same as the whole tree's roll-up says."""
    _, session = session
    rolled_up = costs.tree_costs(session)
    assert any(entry["subtree"]["cost_usd"] for entry in rolled_up.values())  # something is priced
    for agent_id in session.agents:
        assert costs.subtree_cost(session, agent_id) == rolled_up[agent_id], agent_id


def test_a_call_shows_each_agent_it_created_with_that_agents_own_cost(session):
    _, session = session
    shown = {spawned["agent_id"]: spawned["cost_usd"] for agent_id in session.agents
             for item in queries.perspective(session, agent_id)["items"] for call in item["calls"]
             for spawned in call["spawned"]}
    assert shown == {agent_id: usage.for_agent(session, agent_id)["cost_usd"]
                     for agent_id, agent in session.agents.items() if agent.parent_id is not None}
    assert None in shown.values() and any(shown.values())  # one on a model without a price, one priced
