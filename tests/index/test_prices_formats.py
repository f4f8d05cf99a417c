"""Costs of real sessions of each format read, at genai-prices' prices: each response priced at its own time (a price
that changed on a date) and input (a context-length tier), a model no provider names said to have no price on its
page, a stated cost kept, and a user's price file winning over genai-prices."""

from __future__ import annotations

import json
from datetime import datetime
from importlib.metadata import version
from pathlib import Path

import pytest
from claude_lines import Transcript
from events import copy_samples
from genai_prices import Usage, calc_price
from opencode_db import ROOT, T0, OpenCodeDb, answer, prompt

from viewer.core import pricing
from viewer.core.host import Host
from viewer.index import usage
from viewer.library.library import Library
from viewer.reads import costs

GENAI = pricing.load()  # genai-prices alone, whatever AGENTVIEW_PRICES says where the tests run
CODEX = "2026:03:01:rollout-2026-03-01T09-15-00-0199a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b"
GEMINI = "shop:chats:session-2026-04-20T10-00-5f1c2a3b"
COPILOT = "b7e3c1d2-4a5f-4b6c-9d8e-0f1a2b3c4d5e:events"


def library_of(folder: Path, prices: pricing.Prices = GENAI) -> Library:
    library = Library(folder, host=Host(prices=prices))
    library.scan()
    return library


def genai_cost(event: dict) -> float:
    """What genai-prices' own calc_price says a response costs (its input counts the cached tokens)."""
    u = usage.of_event(event)
    read, written = u.get("cache_read_input_tokens", 0), u.get("cache_creation_input_tokens", 0)
    model = event["model"].split("/")[-1]
    when = datetime.fromisoformat(event["timestamp"])
    return float(calc_price(Usage(input_tokens=u.get("input_tokens", 0) + read + written, cache_read_tokens=read,
                                  cache_write_tokens=written, output_tokens=u.get("output_tokens", 0)),
                            model, genai_request_timestamp=when).total_price)


@pytest.mark.parametrize("sample, folder, session, unpriced", [  # Codex and Claude Code: the tests below
    ("gemini", "tmp", GEMINI, []),
    ("copilot", "session-state", COPILOT, []),
])
def test_each_formats_responses_cost_what_genai_prices_says(tmp_path, sample, folder, session, unpriced):
    s = library_of(copy_samples(sample, tmp_path / folder)).get(session)
    responses = [e for e in s.events if usage.of_event(e)]
    expected = sum(genai_cost(e) for e in responses if e["model"] not in unpriced)
    assert responses and costs.session_cost(s) == {"cost_usd": pytest.approx(expected, rel=1e-12),
                                                   "unpriced_models": unpriced}


def test_list_prices_of_the_samples_models(tmp_path):
    """The figures above by hand, at the providers' list prices (USD per million tokens), so a wrong wiring fails."""
    gemini = library_of(copy_samples("gemini", tmp_path / "gemini" / "tmp")).get(GEMINI)
    # gemini-2.5-pro: $1.25 in, $0.125 cached, $10 out; gemini-2.5-flash: $0.30, $0.03, $2.50
    pro = (1200 * 1.25 + 3000 * 0.125 + 100 * 10) + (4600 * 1.25 + 30 * 10) + (1100 * 1.25 + 4000 * 0.125 + 25 * 10) \
        + (5300 * 1.25 + 20 * 10)
    flash = 500 * 0.3 + 5000 * 0.03 + 15 * 2.5
    assert usage.for_agent(gemini, "main")["cost_usd"] == pytest.approx((pro + flash) / 1e6)
    copilot = library_of(copy_samples("copilot", tmp_path / "copilot" / "session-state")).get(COPILOT)
    # claude-sonnet-4.5 (Anthropic's claude-sonnet-4-5): $3 in, $0.30 cache read, $15 out
    assert usage.for_agent(copilot, "main")["cost_usd"] == pytest.approx((5200 * 3 + 4000 * 0.3 + 280 * 15) / 1e6)
    codex = library_of(copy_samples("codex", tmp_path / "codex" / "sessions")).get(CODEX)
    # gpt-5-codex (GPT-5's prices): $1.25 in, $0.125 cached, $10 out
    assert usage.for_agent(codex, "main")["cost_usd"] == pytest.approx(
        (2128 * 1.25 + 3072 * 0.125 + 180 * 10 + 1280 * 1.25 + 5120 * 0.125 + 240 * 10 + 2100 * 1.25 + 90 * 10) / 1e6)


def test_a_response_is_priced_at_the_prices_of_its_own_date(tmp_path):
    """OpenAI cut o3's prices on 2025-06-10: the same Codex session costs five times more in May than in July."""
    cost = {}
    for month in ("05", "07"):
        folder = copy_samples("codex", tmp_path / month / "sessions")
        for rollout in folder.rglob("*.jsonl"):
            text = rollout.read_text().replace("gpt-5-codex-mini", "mystery-model-1").replace("gpt-5-codex", "o3")
            rollout.write_text(text.replace("2026-03-01T", f"2025-{month}-01T"))
        cost[month] = usage.for_agent(library_of(folder).get(CODEX), "main")["cost_usd"]
    tokens_in, cached, out = 2128 + 1280 + 2100, 3072 + 5120, 180 + 240 + 90
    assert cost["05"] == pytest.approx((tokens_in * 10 + cached * 0.5 + out * 40) / 1e6)  # $10 in, $40 out
    assert cost["07"] == pytest.approx((tokens_in * 2 + cached * 0.5 + out * 8) / 1e6)  # $2 in, $8 out


def test_a_response_over_a_context_tier_is_priced_at_the_tiers_rates(tmp_path):
    """Claude Sonnet 4.5 costs twice as much in (and half more out) for a request of over 200,000 input tokens."""
    session = "7a3e0c11-tier"
    t = Transcript(session, "tr")
    t.user("Read the whole repository")
    t.response("msg_1", [{"type": "text", "text": "Small."}], model="claude-sonnet-4-5-20250929",
               usage={"input_tokens": 1000, "output_tokens": 1000, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 198_000})
    t.response("msg_2", [{"type": "text", "text": "Big."}], model="claude-sonnet-4-5-20250929",
               usage={"input_tokens": 1000, "output_tokens": 1000, "cache_creation_input_tokens": 2000,
                      "cache_read_input_tokens": 198_000})
    t.write(tmp_path / "-home-dev-app" / f"{session}.jsonl")
    s = library_of(tmp_path).get(f"-home-dev-app:{session}")
    small = 1000 * 3 + 1000 * 15 + 198_000 * 0.3  # 199,000 input tokens: the base rates
    big = 1000 * 6 + 1000 * 22.5 + 2000 * 7.5 + 198_000 * 0.6  # 201,000: the long-context rates
    assert costs.session_cost(s)["cost_usd"] == pytest.approx((small + big) / 1e6)


def test_a_model_no_provider_names_says_no_price_on_its_page_which_names_the_prices(tmp_path):
    from viewer.web.app import create_app

    app = create_app(copy_samples("codex", tmp_path / "sessions"), watch=False, prices=GENAI)
    page = app.test_client().get(f"/s/{CODEX}/agents/thread-1d2e3f4a5b6c").get_data(as_text=True)
    assert '<span class="no-price" title="no price for gpt-5-codex-mini">no price</span>' in page
    assert f"(prices as of each response&#39;s time, genai-prices {version('genai-prices')})" in page


def test_opencode_a_stated_cost_is_kept_and_one_it_could_not_state_is_priced_by_provider_and_model(tmp_path):
    db = tmp_path / ".local/share/opencode/opencode.db"
    db.parent.mkdir(parents=True)
    w = OpenCodeDb(db)
    w.session(ROOT, "Price the parser", T0)
    prompt(w, ROOT, 1, T0 + 10, "Fix it")
    answer(w, ROOT, 2, T0 + 20, "Fixed.", (5000, 300, 12000, 400, 0))  # 0: OpenCode knew no price
    answer(w, ROOT, 4, T0 + 30, "Checked.", (100, 10, 0, 0, 0.5))
    w.close()
    (s,) = library_of(tmp_path).listing()
    assert s.event("prt_3")["model"] == "anthropic/claude-sonnet-4-5" and "cost_usd" not in s.event("prt_3")
    # anthropic/claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read, $3.75 cache write; then the stated $0.50
    expected = (5000 * 3 + 300 * 15 + 12000 * 0.3 + 400 * 3.75) / 1e6 + 0.5
    assert costs.session_cost(s) == {"cost_usd": pytest.approx(expected), "unpriced_models": []}


def test_a_user_price_file_wins_over_genai_prices(tmp_path):
    mine = tmp_path / "prices.json"
    mine.write_text(json.dumps({"prices_as_of": "2026-11-01", "models": {
        "gemini-2.5-flash": {"input": 100, "output": 0, "cache_write": 0, "cache_read": 0}}}))
    s = library_of(copy_samples("gemini", tmp_path / "tmp"), pricing.load(str(mine))).get(GEMINI)
    flash = [e for e in s.events if usage.of_event(e) and e["model"] == "gemini-2.5-flash"]
    others = sum(genai_cost(e) for e in s.events if usage.of_event(e) and e["model"] != "gemini-2.5-flash")
    # the file's $100 a million input tokens, its cached ones at its cache_read price ($0)
    theirs = sum(usage.of_event(e)["input_tokens"] * 100 / 1e6 for e in flash)
    assert costs.session_cost(s)["cost_usd"] == pytest.approx(others + theirs)
