"""What tokens cost: genai-prices' database (genai_rates.py), each response priced at its own time and input, with
a user's file over it (`agentview serve --prices FILE`, or AGENTVIEW_PRICES) whose models win. A model neither names
has no price: nothing is guessed from a similar name."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .genai_rates import Catalog, Rates

ENV = "AGENTVIEW_PRICES"  # a user's price file, read over genai-prices
PRICE_KEYS = ("input", "output", "cache_write", "cache_read")  # a user's file: USD per million tokens
_DATED = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")  # a dated release of a model a user's file names
_SQUASH = re.compile(r"[^a-z0-9]")  # what two spellings of one model differ by
_CLOUD = re.compile(r"^(?:[a-z]{2}\.)?anthropic\.|-v\d+(?::\d+)?$")  # Bedrock's ids around the model's own


class PriceFileError(ValueError):
    """A price file that is not of the documented shape."""


class Prices:
    """The prices costs are shown at: a user's models (flat rates, a window) over genai-prices' catalog."""

    def __init__(self, theirs: dict[str, tuple[Rates, int | None]], as_of: str, over: str = "",
                 catalog: Catalog | None = None) -> None:
        """`over`: what the source says of a user's file before genai-prices' name ("mine.json over ")."""
        self.theirs, self.as_of, self.over = theirs, as_of, over
        self.catalog = catalog or Catalog()
        self._key: str | None = None
        self._found: dict[object, tuple | None] = {}  # a model as a log names it -> (user entry, genai model)

    @property
    def source(self) -> str:
        """The prices' source as a page names it: genai-prices and its version, a user's file over it."""
        return f"{self.over}{self.catalog.source}"

    @property
    def key(self) -> str:
        """Which prices a kept sum was priced at."""
        if self._key is None:
            self._key = f"{self.source} ({self.as_of})"
        return self._key

    def _of(self, model: object) -> tuple | None:
        found = self._found.get(model, False)
        if found is False:
            found = None
            if isinstance(model, str) and model.strip():
                name = _CLOUD.sub("", model.strip().lower()).replace("@", "-")
                mine = self.theirs.get(name) or self.theirs.get(_DATED.sub("", name))
                info = None if mine else self.catalog.model(model)
                found = (mine, info) if mine or info else None
            self._found[model] = found
        return found

    def cost(self, model: object, usage: dict, hour_writes: int = 0, timestamp: object = None) -> float | None:
        """USD of one response of `model` at `timestamp` (usage.KEYS; `hour_writes` of its cache writes kept an
        hour), or None when the model has no price."""
        found = self._of(model)
        if found is None:
            return None
        mine, info = found
        if mine:
            return mine[0].cost(usage, hour_writes)
        rates = self.catalog.rates(info, timestamp, usage.get("input_tokens", 0)
                                   + usage.get("cache_read_input_tokens", 0)
                                   + usage.get("cache_creation_input_tokens", 0))
        return None if rates is None else rates.cost(usage, hour_writes)

    def listed_name(self, model: str) -> str:
        """The name a model's usage is summed under across logs: genai-prices' id when the log's name is only
        another spelling of it ("anthropic/claude-sonnet-4.5", "claude-opus-4-1-20250805"), else the log's own name
        (a "gpt-5-codex" priced as GPT-5 stays itself)."""
        found = self._of(model)
        info = found[1] if found else None
        if info is None:
            return model
        own = _DATED.sub("", _CLOUD.sub("", model.strip().lower()).rpartition("/")[2])
        return info.id if _SQUASH.sub("", own) == _SQUASH.sub("", info.id.lower()) else model

    def window(self, model: object) -> int | None:
        """The model's context window in tokens (None: not known)."""
        found = self._of(model)
        if found is None:
            return None
        mine, info = found
        return mine[1] if mine else info.context_window


def _number(entry: dict, key: str) -> float | None:
    value = entry.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def _models_of(document: object, where: str) -> tuple[dict[str, tuple[Rates, int | None]], str | None]:
    """A user's file: {"prices_as_of": date, "models": {name: {input, output, cache_write, cache_read (USD per
    million tokens), cache_write_1h and context_window optional}}}."""
    if not isinstance(document, dict) or not isinstance(document.get("models"), dict):
        raise PriceFileError(f"{where}: not a price file (a JSON object with \"models\")")
    models = {}
    for name, entry in document["models"].items():
        if not isinstance(entry, dict) or any(_number(entry, k) is None for k in PRICE_KEYS):
            raise PriceFileError(f"{where}: model {name!r} needs {', '.join(PRICE_KEYS)} as numbers (USD per million tokens)")
        given, hour = {k: _number(entry, k) / 1e6 for k in PRICE_KEYS}, _number(entry, "cache_write_1h")
        if hour is None and "cache_write_1h" in entry:
            raise PriceFileError(f"{where}: model {name!r}: cache_write_1h must be a number (USD per million tokens)")
        hour = given["cache_write"] if hour is None else hour / 1e6
        window = entry.get("context_window")
        rates = Rates(0.0, given["input"], given["output"], given["cache_read"] - given["input"],
                      given["cache_write"] - given["input"], hour - given["cache_write"])
        models[name.lower()] = (rates, window if isinstance(window, int) and window > 0 else None)
    as_of = document.get("prices_as_of")
    return models, as_of if isinstance(as_of, str) else None


def load(user_file: str | None = None) -> Prices:
    """genai-prices, with a user's file over it (its models win; its date is shown)."""
    if not user_file:
        return Prices({}, "each response's time")
    try:
        document = json.loads(Path(user_file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise PriceFileError(f"{user_file}: cannot be read as JSON ({error})") from None
    theirs, their_date = _models_of(document, user_file)
    return Prices(theirs, "each response's time", f"{os.path.basename(user_file)}"
                  f"{f' (as of {their_date})' if their_date else ''} over ")
