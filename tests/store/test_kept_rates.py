"""The prices' table kept between runs: a process that takes every model it prices from it never imports genai-prices
(nor importlib.metadata), and prices each response exactly as genai-prices does, at every time and tier; a table
written by two processes at once, tampered with or of other code is never trusted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from conftest import REPO, SAMPLES
from genai_prices import Usage

from viewer.core import genai_rates
from viewer.library.library import Library
from viewer.library.runtime import Runtime
from viewer.reads import costs
from viewer.store import kept_rates

sys.path.insert(0, str(REPO / "benchmarks"))

import generate  # noqa: E402
import generate_claude  # noqa: E402
import price_rate  # noqa: E402

# Names that reach each path: a provider before a slash, Bedrock's ids, a price cut on a date (o3), off-peak hours
# (DeepSeek's), context tiers (Gemini 2.5 Pro, Claude Sonnet 4.5 above 200k), a name no provider has
SPECIAL = ("o3", "deepseek-chat", "deepseek-reasoner", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
           "anthropic.claude-3-5-haiku-20241022-v1:0", "gpt-4o", "gemini-2.5-pro", "no-such-model-anywhere")
TIMES = ("2025-01-15T10:00:00Z", "2025-06-01T17:00:00Z", "2025-07-01T03:00:00+08:00", "2026-03-01T16:45:00Z",
         "2026-03-01T00:15:00Z", "2026-03-01T00:30:00Z", "2026-03-01T16:30:00Z", "2026-03-01T09:00:00")
INPUTS = (1_000, 150_000, 250_000, 1_500_000)  # cached tokens counted in: below and above each tier's start
USAGE = {"input_tokens": 0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 700}


def model_names() -> list[str]:
    """Every model the samples' sessions name, the benchmarks' folders' models, and SPECIAL."""
    library = Library(SAMPLES)
    library.scan()
    named = {e["model"] for s in library.listing() for e in s.events if isinstance(e.get("model"), str)}
    assert len(named) >= 10  # each format's samples name their models
    return sorted(named | {*generate_claude.MODELS, *price_rate.MODELS, generate.MODEL, *SPECIAL})


def asks() -> list[tuple[str, str, int]]:
    return [(name, at, tokens) for name in model_names() for at in TIMES for tokens in INPUTS]


def usage_of(tokens: int) -> dict:
    """A response that read `tokens` input tokens: a tenth from the cache, a tenth written to it."""
    return {**USAGE, "input_tokens": tokens - 2 * (tokens // 10), "cache_read_input_tokens": tokens // 10,
            "cache_creation_input_tokens": tokens // 10}


def genai_cost(name: str, at: str, tokens: int) -> float | None:
    """What genai-prices' own objects say: the model the name resolves to, its price at `at`, applied to the counts."""
    info = genai_rates._find(name.strip().lower())
    if info is None:
        return None
    price = info.get_prices(datetime.fromisoformat(at.replace("Z", "+00:00")))
    u = usage_of(tokens)
    try:
        counts = Usage(input_tokens=tokens, cache_read_tokens=u["cache_read_input_tokens"], cache_write_1h_tokens=3,
                       cache_write_tokens=u["cache_creation_input_tokens"], output_tokens=u["output_tokens"])
        return float(price.calc_price(counts)["total_price"])
    except ValueError:
        return None


PRICE_ALL = """
import json, sys
from viewer.core.genai_rates import Catalog
from viewer.core.pricing import Prices
from viewer.store import kept_rates
table = kept_rates.in_folder(sys.argv[1])
prices = Prices({}, "each response's time", "", Catalog(table))
asks = json.loads(sys.stdin.read())
tokens_of = lambda t: {"input_tokens": t - 2 * (t // 10), "cache_read_input_tokens": t // 10,
                       "cache_creation_input_tokens": t // 10, "output_tokens": 700}
costs = [prices.cost(name, tokens_of(tokens), 3, at) for name, at, tokens in asks]
imported = sorted({"genai_prices", "importlib.metadata"} & set(sys.modules))
print(json.dumps({"costs": costs, "source": prices.source, "imported": imported}))
"""


def price_all(folder, asked, at_once: int = 1) -> list[dict]:
    """Every ask priced by `at_once` fresh processes started together, each with the table in `folder`."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    runs = [subprocess.Popen([sys.executable, "-c", PRICE_ALL, str(folder)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, env=env, text=True) for _ in range(at_once)]
    for run in runs:  # every one asked before any is waited for (the asks fit in a pipe's buffer)
        run.stdin.write(json.dumps(asked))
        run.stdin.close()
    answers = [json.loads(run.stdout.read()) for run in runs]
    assert [run.wait(timeout=120) for run in runs] == [0] * at_once
    return answers


def assert_as_genai_prices(result: dict, asked) -> None:
    expected = [genai_cost(*ask) for ask in asked]
    assert sum(cost is not None for cost in expected) > len(expected) / 2
    for ask, got, want in zip(asked, result["costs"], expected):
        assert (got is None and want is None) or got == pytest.approx(want, rel=1e-12, abs=1e-15), ask


def test_a_process_priced_from_the_table_never_imports_genai_prices_and_prices_as_it_does(tmp_path):
    asked = asks()
    assert any(genai_cost(*ask) is None for ask in asked)  # a model no provider names among them
    first, second = price_all(tmp_path, asked, at_once=2)  # two processes write the table at once
    for made in (first, second):
        assert "genai_prices" in made["imported"]
        assert_as_genai_prices(made, asked)
    again = price_all(tmp_path, asked)[0]
    assert again["imported"] == [] and again["source"] == first["source"]
    assert_as_genai_prices(again, asked)
    # a fresh price computation of a different response of a kept model neither (its rates are all kept)
    assert price_all(tmp_path, [("claude-opus-4-1-20250805", "2024-02-02T02:02:02Z", 7)])[0]["imported"] == []


def test_a_model_not_kept_is_worked_out_and_added(tmp_path):
    price_all(tmp_path, [("claude-sonnet-4-5", TIMES[0], 1_000)])
    added = price_all(tmp_path, [("gemini-2.5-pro", TIMES[0], 250_000), ("claude-sonnet-4-5", TIMES[0], 1_000)])[0]
    assert "genai_prices" in added["imported"]
    kept = price_all(tmp_path, [("gemini-2.5-pro", TIMES[1], 1_000), ("claude-sonnet-4-5", TIMES[2], 250_000)])[0]
    assert kept["imported"] == []


def test_a_tampered_truncated_or_foreign_table_is_worked_out_again(tmp_path):
    asked = [ask for ask in asks() if ask[0] in ("o3", "deepseek-chat", "gemini-2.5-pro", "claude-opus-4-1")]
    price_all(tmp_path, asked)
    folder = tmp_path / kept_rates.FOLDER
    entries = sorted(p for p in folder.iterdir() if p.suffix == ".avc")
    assert len(entries) == 5  # four models and genai-prices' version
    for number, entry in enumerate(entries):
        data = bytearray(entry.read_bytes())
        if number % 2:
            data[-3] ^= 0x5A  # a byte of its values changed: its MAC no longer holds
            entry.write_bytes(bytes(data))
        else:
            entry.write_bytes(bytes(data[: len(data) // 2]))
    redone = price_all(tmp_path, asked)[0]
    assert "genai_prices" in redone["imported"]
    assert_as_genai_prices(redone, asked)
    assert price_all(tmp_path, asked)[0]["imported"] == []  # written anew
    # another code's (or another genai-prices') table: its entries are not read
    other = kept_rates.KeptRates(str(folder), "other code")
    assert other.get(genai_rates.SOURCE_KEY) is None and other.get("model o3") is None


def test_the_table_is_keyed_by_the_code_and_the_genai_prices_installed(tmp_path):
    made_by = kept_rates.in_folder(str(tmp_path)).version
    assert made_by.startswith("code ") and made_by.endswith(f" genai-prices {kept_rates.genai_prices_print()}")
    package = tmp_path / "site-packages" / "genai_prices"
    package.mkdir(parents=True)
    (package / "data.py").write_text("providers = []\n")
    before = kept_rates.files_print(str(package))
    (package / "data.py").write_text("providers = [1]\n")  # its data changed
    changed = kept_rates.files_print(str(package))
    (package.parent / "genai_prices-9.9.9.dist-info").mkdir()  # another version installed beside it
    assert len({before, changed, kept_rates.files_print(str(package))}) == 3


def test_a_condition_only_genai_prices_knows_is_left_to_it():
    """A price condition of a later genai-prices (its own `active`): genai-prices tells which price is in force."""
    from decimal import Decimal

    from genai_prices import types

    class Weekends:
        def active(self, at: datetime) -> bool:
            return at.weekday() >= 5

    weekdays, weekends = (types.ModelPrice(input_mtok=Decimal(n), output_mtok=Decimal(2 * n)) for n in (3, 1))
    info = types.ModelInfo(id="m", match=types.ClauseEquals(equals="m"), prices=[
        types.ConditionalPrice(prices=weekdays), types.ConditionalPrice(constraint=Weekends(), prices=weekends)])
    model = genai_rates._model_of(info)
    assert model.asked is info and model.periods[1][0] == ("asked",)
    catalog = genai_rates.Catalog()
    assert catalog.rates(model, "2026-02-28T12:00:00Z", 10).input == pytest.approx(1e-6)  # a Saturday
    assert catalog.rates(model, "2026-03-02T12:00:00Z", 10).input == pytest.approx(3e-6)


RESTART = """
import json, sys
from viewer.library.runtime import Runtime
from viewer.core.tuning import Tuning
from viewer.reads import costs
with Runtime(sys.argv[1], watch=False, cache_dir=sys.argv[2], tuning=Tuning(read_workers=0)) as runtime:
    shown = {s.id: costs.session_cost(s) for s in runtime.library.listing()}
print(json.dumps({"costs": shown, "imported": sorted({"genai_prices", "importlib.metadata"} & set(sys.modules))}))
"""


def test_a_restart_prices_its_sessions_from_the_table_alone(tmp_path):
    from events import copy_samples

    folder = copy_samples("claude_code", tmp_path / "projects")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    runs = [json.loads(subprocess.run([sys.executable, "-c", RESTART, str(folder), str(tmp_path / "cache")],
                                      env=env, capture_output=True, text=True, check=True, timeout=120).stdout)
            for _ in range(2)]
    assert "genai_prices" in runs[0]["imported"] and runs[1]["imported"] == []
    with Runtime(folder, watch=False) as fresh:  # no cache: priced by genai-prices here
        expected = {s.id: costs.session_cost(s) for s in fresh.library.listing()}
    assert any(c["cost_usd"] for c in expected.values())
    assert runs[0]["costs"] == runs[1]["costs"] == json.loads(json.dumps(expected))


def test_a_read_worker_finding_its_models_kept_never_builds_genai_prices(tmp_path):
    """A worker whose server keeps every model its groups name (a folder new to a viewer that has read another)
    neither imports genai-prices nor builds its database: pydantic's compiled core, which genai-prices' types load,
    is never mapped into it. On an empty cache it builds them while the server walks."""
    from claude_projects import generate as projects

    from viewer.core.tuning import Tuning

    seen, new = (Path(projects(tmp_path / name, sessions=12, projects=1)["projects_folder"]) for name in ("a", "b"))
    cache = tmp_path / "cache"
    with Runtime(seen, watch=False, cache_dir=str(cache), tuning=Tuning(read_workers=0)):
        pass  # its sessions were written months ago: kept, so priced, at once

    def worker_mapped(cache_dir) -> list[bool]:
        with Runtime(new, watch=False, cache_dir=str(cache_dir), tuning=Tuning(read_workers=1, read_pool_from=1)) as r:
            pool = r.library.groups.pool
            assert pool.taken > 0 and pool._workers
            return ["pydantic_core" in Path(f"/proc/{w.popen.pid}/maps").read_text() for w in pool._workers]

    assert worker_mapped(cache) == [False]
    assert worker_mapped(tmp_path / "empty") == [True]
