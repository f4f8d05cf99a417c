"""Token usage where a format records it: per message, per agent, per session (each response once)."""

from __future__ import annotations

KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def of_event(event: dict) -> dict | None:
    usage = event.get("usage")
    if not isinstance(usage, dict) or "raw" not in event:
        return None
    return {k: usage[k] for k in KEYS if isinstance(usage.get(k), (int, float))}


class Totals:
    """Running sums over a growing list of positions: each request adds only what arrived since the last."""

    def __init__(self) -> None:
        self.sums = {k: 0 for k in KEYS}
        self.models: dict[str, int] = {}
        self.responses = 0
        self.read = 0  # how many positions of the list are summed

    def add(self, s, positions) -> "Totals":
        for p in positions:
            event = s.events.small(p)  # usage and model only: a stored entry's content is not read
            usage = of_event(event)
            if usage:
                self.responses += 1
                for k, v in usage.items():
                    self.sums[k] += v
            model = event.get("model")
            if isinstance(model, str) and model:
                self.models[model] = self.models.get(model, 0) + 1
        return self

    def as_dict(self) -> dict:
        return {**self.sums, "responses": self.responses, "models": sorted(self.models)}


def total(s, positions) -> dict:
    """Summed usage and the models of the given positions (callers hold the session lock)."""
    return Totals().add(s, positions).as_dict()


def _kept(s, key: str | None, positions) -> dict:
    """The totals of a list that only grows, kept on the session (cleared when a message grows in place)."""
    with s.lock:
        totals = s.usage_totals.get(key)
        if totals is None:
            totals = s.usage_totals[key] = Totals()
        end = len(positions)
        totals.add(s, positions[totals.read:end])
        totals.read = end
        return totals.as_dict()


# Only events naming a model or usage add anything: the index lists those at ingest.
def for_agent(s, agent_id: str) -> dict:
    return _kept(s, agent_id, s.agents[agent_id].usage_entries)


def for_session(s) -> dict:
    return _kept(s, None, s.usage_positions)
