"""A model's per-token rates from genai-prices, pydantic's maintained price database: its providers and model aliases
resolve a model as a log names it, its dated prices give those in force at a response's time, its context-length
tiers those for a response's input. Each rate is what genai-prices itself charges for one more token (prices are
linear within a tier), so a response costs what genai-prices says it costs, at the price of a few multiplications."""

from __future__ import annotations

import functools
from bisect import bisect_left
from datetime import UTC, datetime
from importlib.metadata import version
from typing import TYPE_CHECKING, NamedTuple

from . import times

if TYPE_CHECKING:
    from decimal import Decimal

    from genai_prices import types

SOURCE = f"genai-prices {version('genai-prices')}"


@functools.cache
def _genai_prices():
    """genai-prices' module of types and its database (a quarter of a second and some 20 MB of objects to build),
    imported when the first response is priced: a restart that takes every sum from the cache never needs them."""
    from genai_prices import Usage, data_snapshot, types

    return Usage, types, data_snapshot.get_snapshot()


def prepare() -> None:
    """Build genai-prices' database now, not at the first response priced (a read worker does, while it waits)."""
    _genai_prices()


class Rates(NamedTuple):
    """USD per token of one model in one price period and tier: a response's cost is linear in its counts."""
    fixed: float  # per response (a price per request)
    input: float  # per input token, those read from or written to the cache included
    output: float
    cache_read: float  # what a cache read costs more (or less) than an input token
    cache_write: float  # what a cache write costs more than an input token
    hour_write: float  # what a cache write kept an hour costs more than one kept five minutes

    def cost(self, usage: dict, hour_writes: int) -> float:
        """USD of one response's usage (the viewer's keys: input without its cached part)."""
        fixed, per_input, per_output, read_more, write_more, hour_more = self  # a tuple's items: faster than names
        read, written = usage.get("cache_read_input_tokens", 0), usage.get("cache_creation_input_tokens", 0)
        return (fixed + per_input * (usage.get("input_tokens", 0) + read + written)
                + per_output * usage.get("output_tokens", 0) + read_more * read + write_more * written
                + hour_more * hour_writes)


def _when(timestamp: object) -> datetime:
    """A response's time (ISO 8601; a time without a zone is UTC), else now: the prices in force then."""
    at = times.seconds(timestamp)
    return datetime.now(UTC) if at is None else datetime.fromtimestamp(at, UTC)


def _probe(price: types.ModelPrice, tokens: int) -> Rates | None:
    """The rates of `price` for responses whose input is in the tier of `tokens` input tokens."""
    usage = _genai_prices()[0]

    def cost(**counts: int) -> Decimal:
        return price.calc_price(usage(input_tokens=tokens, **counts))["total_price"]

    try:
        base, write = cost(), cost(cache_write_tokens=1)
        per_input = price.calc_price(usage(input_tokens=tokens + 1))["total_price"] - base
        return Rates(float(base - tokens * per_input), float(per_input), float(cost(output_tokens=1) - base),
                     float(cost(cache_read_tokens=1) - base), float(write - base),
                     float(cost(cache_write_tokens=1, cache_write_1h_tokens=1) - write))
    except ValueError:  # a price genai-prices cannot apply to token counts
        return None


class Catalog:
    """genai-prices' models, each resolved once per name a log gives it, and their rates once per period and tier."""

    def __init__(self) -> None:
        self._tiers: dict[int, tuple[types.ModelPrice, list[int], dict[int, Rates | None]]] = {}

    def model(self, name: str) -> types.ModelInfo | None:
        """The model a log's name means: with a provider before a slash ("anthropic/claude-sonnet-4-5", OpenCode's
        and the seed's ids) in that provider's list first; else the provider genai-prices matches the name to; else
        the provider whose own id it is (Bedrock's "us.anthropic.…-v1:0"). None: no provider names it."""
        snapshot = _genai_prices()[2]
        ref = name.strip().lower()
        provider, _, rest = ref.partition("/")
        tries = [(rest, provider), (rest, None)] if rest else []
        for model_ref, provider_id in [*tries, (ref, None)]:
            try:
                return snapshot.find_provider_model(model_ref, None, provider_id, None)[1]
            except LookupError:
                continue
        return next((m for p in snapshot.providers if (m := p.find_model(ref)) is not None), None)

    def rates(self, model: types.ModelInfo, timestamp: object, input_tokens: int) -> Rates | None:
        """The rates of `model` for a response at `timestamp` that read `input_tokens` (cached ones included)."""
        kinds = _genai_prices()[1]
        price = model.prices if isinstance(model.prices, kinds.ModelPrice) else model.get_prices(_when(timestamp))
        known = self._tiers.get(id(price))
        if known is None:  # the tiers' thresholds of every price of this period (the price kept: its id stays its)
            starts = sorted({tier.start for value in price.__dict__.values() if isinstance(value, kinds.TieredPrices)
                             for tier in value.tiers})
            known = self._tiers[id(price)] = (price, starts, {})
        _, starts, by_tier = known
        tier = bisect_left(starts, input_tokens)  # a tier applies above its start
        if tier not in by_tier:
            by_tier[tier] = _probe(price, starts[tier - 1] + 1 if tier else 1)
        return by_tier[tier]
