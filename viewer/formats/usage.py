"""Token usage where a format records it: per message, per agent, per session (each response once)."""

from __future__ import annotations

KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def of_event(event: dict) -> dict | None:
    usage = event.get("usage")
    if not isinstance(usage, dict) or "raw" not in event:
        return None
    return {k: usage[k] for k in KEYS if isinstance(usage.get(k), (int, float))}


def total(s, positions) -> dict:
    """Summed usage and the models of the given positions (callers hold the session lock)."""
    sums = {k: 0 for k in KEYS}
    models: dict[str, int] = {}
    responses = 0
    for p in positions:
        event = s.events[p]
        usage = of_event(event)
        if usage:
            responses += 1
            for k, v in usage.items():
                sums[k] += v
        model = event.get("model")
        if isinstance(model, str) and model:
            models[model] = models.get(model, 0) + 1
    return {**sums, "responses": responses, "models": sorted(models)}


def for_agent(s, agent_id: str) -> dict:
    return total(s, s.agents[agent_id].entries)


def for_session(s) -> dict:
    return total(s, range(len(s.events)))
