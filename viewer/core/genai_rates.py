"""A model's per-token rates from genai-prices, pydantic's maintained price database: its providers and model aliases
resolve a model as a log names it, its dated prices give those in force at a response's time, its context-length
tiers those for a response's input. Each rate is what genai-prices itself charges for one more token (prices are
linear within a tier), so a response costs what genai-prices says it costs, at the price of a few multiplications.
What the viewer needs of a model (`Model`: plain data) is worked out once per name and kept between runs in a table
the caller gives (store.kept_rates): a process whose models are all kept never imports genai-prices."""

from __future__ import annotations

import functools
from bisect import bisect_left
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, NamedTuple, Protocol

from . import times

if TYPE_CHECKING:
    from decimal import Decimal

    from genai_prices import types

SOURCE_KEY = "source"  # the kept table's entry of genai-prices' version; a model's is "model " and its name


class Table(Protocol):
    """Where models are kept between runs: plain values by key (None from `get`: not kept)."""

    def get(self, key: str) -> object: ...

    def put(self, key: str, value: object) -> None: ...


@functools.cache
def _genai_prices():
    """genai-prices' module of types and its database, imported when a model not kept is first named."""
    from genai_prices import Usage, data_snapshot, types

    return Usage, types, data_snapshot.get_snapshot()


def prepare() -> None:
    """Build genai-prices' database now, not when a model not kept is first named (a read worker does, while it
    waits, when nothing is kept)."""
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


class Model(NamedTuple):
    """A model as genai-prices prices it. `periods`: (when, tier starts, Rates or None per tier), in genai-prices'
    order; `when` None (always), ("from", a UTC date's ordinal) or ("daily", start, end: microseconds of a UTC day),
    or ("asked",) when only genai-prices can tell: then `asked` is its model, and this one is never kept."""
    id: str
    context_window: int | None
    periods: tuple
    asked: object = None

    def plain(self) -> tuple:
        return self.id, self.context_window, tuple((when, starts, tuple(None if r is None else tuple(r) for r in rates))
                                                    for when, starts, rates in self.periods)


def _model_from(kept: object) -> Model:
    """A kept model back (ValueError, TypeError: not of the shape `Model.plain` gives)."""
    name, window, periods = kept
    if not isinstance(name, str) or not (window is None or isinstance(window, int)) or not periods:
        raise ValueError("not a kept model")
    checked = []
    for when, starts, rates in periods:
        if not (when is None or when[0] == "from" and len(when) == 2 or when[0] == "daily" and len(when) == 3):
            raise ValueError("not a kept price period")
        if len(rates) != len(starts) + 1 or any(not isinstance(s, int) for s in starts):
            raise ValueError("not a kept price period")
        checked.append((when, tuple(starts), tuple(None if r is None else Rates(*map(float, r)) for r in rates)))
    return Model(name, window, tuple(checked))


def _when(timestamp: object) -> datetime:
    """A response's time (ISO 8601; a time without a zone is UTC), else now: the prices in force then."""
    at = times.seconds(timestamp)
    return datetime.now(UTC) if at is None else datetime.fromtimestamp(at, UTC)


def _in_force(when: tuple | None, at: datetime) -> bool:
    """genai-prices' StartDateConstraint and TimeOfDateConstraint, on their plain form (`at` in UTC)."""
    if when is None:
        return True
    if when[0] == "from":
        return at.toordinal() >= when[1]
    moment = ((at.hour * 60 + at.minute) * 60 + at.second) * 1_000_000 + at.microsecond
    start, end = when[1], when[2]
    return moment >= start or moment < end if end < start else start <= moment < end


def _microseconds(of_day) -> int:
    """A time of day as microseconds of the UTC day (naive: UTC), as genai-prices compares them."""
    if of_day.tzinfo is not None:
        of_day = datetime.combine(date(1970, 1, 1), of_day).astimezone(UTC).timetz()
    return ((of_day.hour * 60 + of_day.minute) * 60 + of_day.second) * 1_000_000 + of_day.microsecond


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


def _period(price: types.ModelPrice, when: tuple | None) -> tuple:
    """A price's period: `when`, the thresholds of its tiers (a tier applies above its start) and each tier's rates."""
    kinds = _genai_prices()[1]
    starts = tuple(sorted({tier.start for value in price.__dict__.values() if isinstance(value, kinds.TieredPrices)
                           for tier in value.tiers}))
    return when, starts, tuple(_probe(price, start + 1) for start in (0, *starts))


def _model_of(info: types.ModelInfo) -> Model:
    kinds = _genai_prices()[1]
    if isinstance(info.prices, kinds.ModelPrice):
        return Model(info.id, info.context_window, (_period(info.prices, None),))
    periods, asked = [], None
    for conditional in info.prices:
        constraint = conditional.constraint
        if constraint is None:
            when = None
        elif isinstance(constraint, kinds.StartDateConstraint):
            when = ("from", constraint.start_date.toordinal())
        elif isinstance(constraint, kinds.TimeOfDateConstraint):
            when = ("daily", _microseconds(constraint.start_time), _microseconds(constraint.end_time))
        else:  # a condition of a later genai-prices: it tells which price is in force
            when, asked = ("asked",), info
        periods.append(_period(conditional.prices, when))
    return Model(info.id, info.context_window, tuple(periods), asked)


def _find(ref: str) -> types.ModelInfo | None:
    """The model a log's name means: with a provider before a slash ("anthropic/claude-sonnet-4-5", OpenCode's
    and the seed's ids) in that provider's list first; else the provider genai-prices matches the name to; else
    the provider whose own id it is (Bedrock's "us.anthropic.…-v1:0"). None: no provider names it."""
    snapshot = _genai_prices()[2]
    provider, _, rest = ref.partition("/")
    tries = [(rest, provider), (rest, None)] if rest else []
    for model_ref, provider_id in [*tries, (ref, None)]:
        try:
            return snapshot.find_provider_model(model_ref, None, provider_id, None)[1]
        except LookupError:
            continue
    return next((m for p in snapshot.providers if (m := p.find_model(ref)) is not None), None)


class Catalog:
    """genai-prices' models, each worked out once per name a log gives it (taken from `kept` when it holds it, else
    from genai-prices and added to it), and genai-prices' version (`source`)."""

    def __init__(self, kept: Table | None = None, source: str | None = None) -> None:
        self._kept, self._source = kept, source
        self._models: dict[str, Model | None] = {}

    def keep(self, kept: Table) -> None:
        """Keep models in `kept` from now on (given before any is asked for, none is worked out twice)."""
        self._kept = kept

    @property
    def source(self) -> str:
        """"genai-prices" and its version: kept with the models (importlib.metadata alone is some 30 ms)."""
        if self._source is None:
            kept = self._kept.get(SOURCE_KEY) if self._kept is not None else None
            if not (isinstance(kept, str) and kept.startswith("genai-prices ")):
                from importlib.metadata import version

                kept = f"genai-prices {version('genai-prices')}"
                if self._kept is not None:
                    self._kept.put(SOURCE_KEY, kept)
            self._source = kept
        return self._source

    def model(self, name: str) -> Model | None:
        """The model a log's name means (see _find), None when no provider names it."""
        ref = name.strip().lower()
        if ref in self._models:
            return self._models[ref]
        key = f"model {ref}"
        kept = self._kept.get(key) if self._kept is not None else None
        try:
            found = None if kept == () else _model_from(kept)  # (): kept as named by no provider
        except (TypeError, ValueError, IndexError):  # not kept, or not as this code keeps it: worked out again
            info = _find(ref)
            found = None if info is None else _model_of(info)
            if self._kept is not None and (found is None or found.asked is None):
                self._kept.put(key, () if found is None else found.plain())
        self._models[ref] = found
        return found

    def rates(self, model: Model, timestamp: object, input_tokens: int) -> Rates | None:
        """The rates of `model` for a response at `timestamp` that read `input_tokens` (cached ones included)."""
        periods = model.periods
        if len(periods) == 1:
            period = periods[0]
        elif model.asked is not None:
            price = model.asked.get_prices(_when(timestamp))
            period = periods[next(i for i, p in enumerate(model.asked.prices) if p.prices is price)]
        else:  # the last period in force, else the first (as genai-prices' get_prices)
            at = _when(timestamp)
            period = next((p for p in reversed(periods) if _in_force(p[0], at)), periods[0])
        _, starts, by_tier = period
        return by_tier[bisect_left(starts, input_tokens)]
