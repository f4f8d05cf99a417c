"""What tokens cost, per model: the table shipped in viewer/core/pricing.json ("prices as of" its date), or a user's
file over it (`agentview serve --prices FILE`, or AGENTVIEW_PRICES). A model the table does not name has no price:
nothing is guessed from a similar name."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import orjson

SHIPPED = Path(__file__).resolve().parent / "pricing.json"
ENV = "AGENTVIEW_PRICES"  # a user's price file, read over the shipped one
PRICE_KEYS = ("input", "output", "cache_write", "cache_read")  # USD per million tokens
# usage keys (usage.KEYS) -> the price each is charged at
CHARGED_AS = {"input_tokens": "input", "output_tokens": "output", "cache_creation_input_tokens": "cache_write",
              "cache_read_input_tokens": "cache_read"}
HOUR_WRITES = "cache_creation_1h_tokens"  # cache writes kept an hour (usage.py counts them apart): a dearer rate
_DATED = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")  # a dated release of a model, same price
_CLOUD = re.compile(r"^(?:[a-z]{2}\.)?anthropic\.|-v\d+(?::\d+)?$")  # Bedrock's ids around the model's own


class PriceFileError(ValueError):
    """A price file that is not the shape of the shipped one."""


class Prices:
    """A price table: models, the date its prices are from and where they come from."""

    def __init__(self, models: dict[str, dict], as_of: str, source: str) -> None:
        self.models, self.as_of, self.source = models, as_of, source
        self._found: dict[str, dict | None] = {}

    def of(self, model: object) -> dict | None:
        """The entry of a model as a log names it (None: no price)."""
        if not isinstance(model, str) or not model:
            return None
        if model not in self._found:
            name = _CLOUD.sub("", model.strip().lower()).replace("@", "-")
            entry = self.models.get(name) or self.models.get(_DATED.sub("", name))
            self._found[model] = entry
        return self._found[model]

    def cost(self, model: object, usage: dict) -> float | None:
        """USD of one model's usage (usage.KEYS), or None when the model has no price."""
        entry = self.of(model)
        if entry is None:
            return None
        cost = sum(usage.get(key, 0) * entry[price] for key, price in CHARGED_AS.items())
        hour = usage.get(HOUR_WRITES, 0)  # counted in the cache writes above at the 5-minute rate: the difference
        return (cost + hour * (entry["cache_write_1h"] - entry["cache_write"])) / 1_000_000

    def window(self, model: object) -> int | None:
        entry = self.of(model)
        return entry.get("context_window") if entry else None


def _models_of(document: object, where: str) -> tuple[dict[str, dict], str | None]:
    if not isinstance(document, dict) or not isinstance(document.get("models"), dict):
        raise PriceFileError(f"{where}: not a price file (a JSON object with \"models\")")
    models = {}
    for name, entry in document["models"].items():
        if not isinstance(entry, dict) or any(not isinstance(entry.get(k), (int, float)) or isinstance(entry.get(k), bool)
                                              or entry[k] < 0 for k in PRICE_KEYS):
            raise PriceFileError(f"{where}: model {name!r} needs {', '.join(PRICE_KEYS)} as numbers (USD per million tokens)")
        window, hour = entry.get("context_window"), entry.get("cache_write_1h", entry["cache_write"])
        if not isinstance(hour, (int, float)) or isinstance(hour, bool) or hour < 0:
            raise PriceFileError(f"{where}: model {name!r}: cache_write_1h must be a number (USD per million tokens)")
        models[name.lower()] = {**{k: float(entry[k]) for k in PRICE_KEYS}, "cache_write_1h": float(hour),
                                "context_window": window if isinstance(window, int) and window > 0 else None}
    as_of = document.get("prices_as_of")
    return models, as_of if isinstance(as_of, str) else None


def load(user_file: str | None = None) -> Prices:
    """The shipped table, with a user's file over it (its models replace or add entries; its date is shown)."""
    models, as_of = _models_of(orjson.loads(SHIPPED.read_bytes()), str(SHIPPED))
    source = "the table shipped with agentview"
    if user_file:
        try:
            document = json.loads(Path(user_file).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise PriceFileError(f"{user_file}: cannot be read as JSON ({error})") from None
        theirs, their_date = _models_of(document, user_file)
        models.update(theirs)
        as_of = their_date or as_of
        source = f"{os.path.basename(user_file)} over the shipped table"
    return Prices(models, as_of or "unknown", source)
