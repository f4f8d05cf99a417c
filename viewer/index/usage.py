"""Token usage where a format records it: per message, per agent, per session (each response once); what it cost
(the log's own cost where it states one, else pricing.py's at the response's own time), how full the context got,
and a session's usage per hour and model (the usage page sums those across sessions)."""

from __future__ import annotations

import marshal

from viewer.core import pricing, times

KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


_COUNTS = (int, float)  # a count's types (a bool is no count): what orjson and the formats make


def of_event(event: dict) -> dict | None:
    usage = event.get("usage")
    if not isinstance(usage, dict) or "raw" not in event:
        return None
    return {k: usage[k] for k in KEYS if type(usage.get(k)) in _COUNTS}


def context_tokens(usage: dict) -> int:
    """The tokens a response read as its context: its input, whether written to or read from the cache."""
    return int(usage.get("input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
               + usage.get("cache_read_input_tokens", 0))


def context_fill(event: dict, prices: pricing.Prices, usage: dict | None = None) -> dict | None:
    """How full a response's context window was: {"tokens", "window", "percent"} (window and percent None when
    neither the log nor `prices` knows the model's window); None for an event without usage (`usage`: its
    of_event, when the caller has it already)."""
    usage = of_event(event) if usage is None else usage
    if not usage:
        return None
    tokens = context_tokens(usage)
    window = event.get("context_window")
    if not isinstance(window, int) or isinstance(window, bool) or window <= 0:
        window = prices.window(event.get("model"))
    return {"tokens": tokens, "window": window, "percent": min(100.0, 100 * tokens / window) if window else None}


def _hour_writes(logged: dict, usage: dict) -> int:
    """Of a response's cache writes, those kept an hour (Claude's `cache_creation.ephemeral_1h_input_tokens`)."""
    split = logged.get("cache_creation")
    hour = split.get("ephemeral_1h_input_tokens") if isinstance(split, dict) else None
    if not isinstance(hour, int) or isinstance(hour, bool) or hour <= 0:
        return 0
    return min(hour, int(usage.get("cache_creation_input_tokens", 0)))


def _logged_cost(event: dict) -> float | None:
    cost = event.get("cost_usd")
    return float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None


class Totals:
    """Running sums over a growing list of positions: each request adds only what arrived since the last."""

    def __init__(self, hourly: bool = False) -> None:
        self.sums = dict.fromkeys(KEYS, 0)
        self.models: dict[str, int] = {}
        self.responses = 0
        self.read = 0  # how many positions of the list are summed
        # What the responses whose log states no cost of their own cost, per model: {"usd", "priced": responses,
        # "unpriced": responses with tokens but no price}, at the prices `priced_by` names; the costs logs state.
        self.by_model: dict[str, dict] = {}
        self.priced_by: str | None = None
        self.logged_cost = 0.0
        self.peak: dict | None = None  # context_fill of the response whose context was fullest
        # A session's responses per hour (hours since the epoch; None: logged without a time) and model:
        # HOUR_FIELDS each. Hours, not days: the usage page groups them into days of the viewer's own time zone.
        self.hours: dict[int | None, dict[str, list]] | None = {} if hourly else None

    def add(self, s, positions) -> "Totals":
        prices = s.host.prices
        self.priced_by = prices.key
        for p in positions:
            self.take(s.events.small(p), prices)  # usage and model only: a stored entry's content is not read
        return self

    def take(self, event: dict, prices: pricing.Prices, priced: tuple | None = None) -> tuple | None:
        """Add one event; its (usage, cost, context fill) when it is a response, for another Totals to `take` it
        with (`priced`) instead of pricing it again."""
        if priced is None:
            usage = of_event(event)
            if usage:
                priced = self._priced(event, usage, prices)
        else:
            usage = priced[0]
            self._priced(event, usage, prices, priced)
        if usage:
            self.responses += 1
            sums = self.sums
            for k, v in usage.items():
                sums[k] += v
        model = event.get("model")
        if isinstance(model, str) and model:
            models = self.models
            models[model] = models.get(model, 0) + 1
        return priced

    def _priced(self, event: dict, usage: dict, prices: pricing.Prices, priced: tuple | None = None) -> tuple:
        logged = _logged_cost(event)
        model = event.get("model")
        if not isinstance(model, str):
            model = ""
        if logged is not None:
            self.logged_cost += logged
            cost = logged
        else:  # priced at the response's own time and input (a model's price may change, or depend on both)
            cost = (prices.cost(model, usage, _hour_writes(event["usage"], usage), event.get("timestamp"))
                    if priced is None else priced[1])
            spent = self.by_model.get(model)
            if spent is None:
                spent = self.by_model[model] = {"usd": 0.0, "priced": 0, "unpriced": 0}
            if cost is not None:
                spent["usd"] += cost
                spent["priced"] += 1
            elif any(usage.values()):
                spent["unpriced"] += 1
        if self.hours is not None:
            models = self.hours.get(hour := hour_of(event.get("timestamp")))
            if models is None:
                models = self.hours[hour] = {}
            row = models.get(model)
            if row is None:
                row = models[model] = [0] * len(HOUR_FIELDS)
            for i, k in _KEY_PLACES:
                if k in usage:
                    row[i] += usage[k]
            row[4] += 1
            if cost is not None:
                row[5] += cost
            elif any(usage.values()):
                row[6] += 1
        fill = context_fill(event, prices, usage) if priced is None else priced[2]
        if fill and (self.peak is None or _fuller(fill, self.peak)):
            self.peak = fill
        return usage, cost, fill

    def cost(self) -> tuple[float | None, list[str]]:
        """USD of every response (None: none could be priced), and the models without a price."""
        total, priced, unpriced = self.logged_cost, self.logged_cost > 0, []
        for model, spent in self.by_model.items():
            if spent["priced"]:
                total, priced = total + spent["usd"], True
            if spent["unpriced"]:
                unpriced.append(model or "(no model named)")
        return (total if priced else None), sorted(unpriced)

    def state(self) -> dict:
        """As plain data (a sleeping session's summary, kept in the cache too)."""
        return dict(self.__dict__)

    @classmethod
    def from_state(cls, state: dict) -> "Totals":
        totals = cls()
        for name in totals.__dict__:
            setattr(totals, name, state.get(name))
        return totals

    def as_dict(self) -> dict:
        cost, unpriced = self.cost()
        return {**self.sums, "responses": self.responses, "models": sorted(self.models),
                "cost_usd": cost, "unpriced_models": unpriced, "peak_context": self.peak}


# What an hour of one model's responses holds: the token KEYS, then the responses, their USD and those unpriced.
HOUR_FIELDS = KEYS + ("responses", "cost_usd", "unpriced")
_KEY_PLACES = tuple(enumerate(KEYS))


CALENDAR = (-62135596800, 253402300799)  # the seconds of years 1 to 9999: the times a date can hold


def hour_of(stamp: object) -> int | None:
    """The hour of a logged time, in hours since the epoch (times.seconds reads it); None when it has none, or
    one no calendar holds."""
    at = times.seconds(stamp)
    if at is None or not CALENDAR[0] <= at <= CALENDAR[1]:
        return None
    return int(at // 3600)


def _fuller(fill: dict, than: dict) -> bool:
    """Whether a response's context was fuller than another's: by share of its window, by tokens without one."""
    if fill["percent"] is not None or than["percent"] is not None:
        return (fill["percent"] or 0) > (than["percent"] or 0)
    return fill["tokens"] > than["tokens"]


def total(s, positions) -> dict:
    """Summed usage and the models of the given positions (callers hold the session lock)."""
    return Totals().add(s, positions).as_dict()


def _kept(s, key: str | None, positions) -> "Totals":
    """The totals of a list that only grows, kept on the session (cleared when a message grows in place)."""
    with s.lock:
        totals = s.usage_totals.get(key)
        if totals is None:
            totals = _sum_all(s) if key is None else s.usage_totals.setdefault(key, Totals())
        end = len(positions)
        if end > totals.read or totals.priced_by is None:  # else nothing arrived since it was summed and priced
            totals.add(s, positions[totals.read:end])
            totals.read = end
        return totals


def _copied(value):
    """A field of Totals copied: its maps, and the maps in them (none holds a deeper one)."""
    if isinstance(value, dict):
        return {k: dict(v) if isinstance(v, dict) else v for k, v in value.items()}
    return value


def _sum_all(s) -> "Totals":
    """The session's totals and those of each agent not summed yet, in one pass: each response read and priced
    once, so that a session is kept with every agent's (`agents_state`). Callers hold the lock."""
    prices, kept = s.host.prices, s.usage_totals
    session = kept[None] = Totals(hourly=True)
    agents = {agent_id: Totals() for agent_id, agent in s.agents.items()
              if agent.usage_entries and agent_id not in kept}
    # One agent made every response (most sessions): its totals are the session's, less the hours.
    alone = len(agents) == 1 and len(s.agents[next(iter(agents))].usage_entries) == len(s.usage_positions)
    owners = {}
    for agent_id in () if alone else agents:
        owners.update(dict.fromkeys(s.agents[agent_id].usage_entries, agent_id))
    for totals in (session, *agents.values()):
        totals.priced_by = prices.key
    small = s.events.small
    for p in s.usage_positions:
        event = small(p)  # usage and model only: a stored entry's content is not read
        priced = session.take(event, prices)
        owner = owners.get(p)
        if owner is not None:
            agents[owner].take(event, prices, priced)
            agents[owner].read += 1
    session.read = len(s.usage_positions)
    if alone:
        agents = {agent_id: Totals.from_state({name: _copied(value) for name, value in session.__dict__.items()
                                               if name != "hours"}) for agent_id in agents}
    for agent_id, totals in agents.items():  # each agent's positions are the session's too: summed whole
        if totals.read == len(s.agents[agent_id].usage_entries):
            kept[agent_id] = totals
    return session


# Only events naming a model or usage add anything: the index lists those at ingest.
def for_agent(s, agent_id: str) -> dict:
    with s.lock:
        return _kept(s, agent_id, s.agents[agent_id].usage_entries).as_dict()


def cost_of_agent(s, agent_id: str) -> dict:
    """for_agent's {"cost_usd", "unpriced_models"} alone: a tree sums them for every agent."""
    positions = s.agents[agent_id].usage_entries
    if not positions:  # no response of its own recorded usage
        return {"cost_usd": None, "unpriced_models": []}
    cost, unpriced = _kept(s, agent_id, positions).cost()
    return {"cost_usd": cost, "unpriced_models": unpriced}


def _still_true(s, kept: dict, positions) -> bool:
    """Whether totals kept as plain data sum every response of `positions`, at the prices in force."""
    return kept.get("priced_by") == s.host.prices.key and kept.get("read") == len(positions)


def kept_state(asleep: dict) -> dict:
    """A sleeping session's totals as summed before it slept (`asleep`: sleeping.asleep's). The folder's cache entry
    keeps them encoded (folder_cache.row), as an unread session holds its none (sleeping.unread): decoded here when
    first read, not for every session a restart or a first walk lists."""
    state = asleep["usage"]
    if type(state) is bytes:
        state = asleep["usage"] = marshal.loads(state)
    return state


def take_back(s, kept: dict) -> None:
    """A woken session's totals as summed before it slept (its summary's `kept`; callers hold its lock), so that the
    page opening it does not read and price every response again: when they are still true."""
    if _still_true(s, kept, s.usage_positions):
        # A copy (the summary's stays as it was): marshal's, of plain data, a fifth of deepcopy's time
        s.usage_totals.setdefault(None, Totals.from_state(marshal.loads(marshal.dumps(kept))))


def agents_state(s) -> dict:
    """Every agent's totals as plain data (summed now where they are not yet), kept with the session so that its
    first page after a wake prices nothing (`take_back_agents`). Callers hold its lock."""
    _kept(s, None, s.usage_positions)  # every agent's too, in the same pass, when none is summed yet
    return {agent_id: _kept(s, agent_id, agent.usage_entries).state()
            for agent_id, agent in s.agents.items() if agent.usage_entries}


def take_back_agents(s, kept: dict) -> None:
    """The agents' totals `agents_state` gave, for a session restored from its cache entry: those summed at the
    prices in force over every response their agent holds."""
    for agent_id, state in kept.items():
        agent = s.agents.get(agent_id)
        if agent is not None and _still_true(s, state, agent.usage_entries):
            s.usage_totals[agent_id] = Totals.from_state(state)


def for_session(s) -> dict:
    with s.lock:
        return session_totals(s).as_dict()


def session_totals(s) -> "Totals":
    """The session's Totals (its hours too; callers hold the session's lock while they read them): a sleeping
    session's as summed before it slept, unless priced at other prices (then it wakes and sums again)."""
    asleep = s.asleep
    kept = kept_state(asleep) if asleep is not None else None
    priced_by = kept.get("priced_by") if kept is not None else False
    if priced_by is None or (priced_by and priced_by == s.host.prices.key):  # None: nothing summed, at any prices
        return Totals.from_state(kept)
    return _kept(s, None, s.usage_positions)
