"""What a session cost, rolled up: per agent, per spawn subtree (an agent and every agent below it) and per session
(usage.py prices each agent's responses; pricing.py says at what)."""

from __future__ import annotations

from viewer.core import pricing
from viewer.index import usage

from . import queries


def _sum(costs) -> dict:
    """Costs ({"cost_usd", "unpriced_models"}) added up in their order: None when none was priced."""
    total, unpriced = None, set()
    for cost in costs:
        if cost["cost_usd"] is not None:
            total = cost["cost_usd"] if total is None else total + cost["cost_usd"]
        unpriced.update(cost["unpriced_models"])
    return {"cost_usd": total, "unpriced_models": sorted(unpriced)}


def tree_costs(s) -> dict[str, dict]:
    """{agent id: {"own": its cost, "subtree": its and its descendants'}}, each {"cost_usd" (None: nothing
    priced), "unpriced_models"}. One pass over the tree, children before parents; per-agent totals are kept."""
    with s.lock:
        order = queries.tree_order(s)
        out: dict[str, dict] = {}
        for agent_id, _, _ in order:
            own = usage.cost_of_agent(s, agent_id)
            out[agent_id] = {"own": own, "subtree": own}
        for agent_id, depth, _ in reversed(order):  # a child's subtree is whole before its parent adds it
            for child in s.agents[agent_id].children:
                below = out[child]["subtree"] if child in out else None
                if below is not None and (below["cost_usd"] is not None or below["unpriced_models"]):
                    out[agent_id]["subtree"] = _sum((out[agent_id]["subtree"], below))
        return out


def subtree_cost(s, agent_id: str) -> dict:
    """One agent's entry of tree_costs ({"own", "subtree"}) from its subtree's agents only: an agent page asks
    for its own, which should not cost a walk of the whole tree."""
    with s.lock:
        own = usage.cost_of_agent(s, agent_id)
        members = queries.subtree(s, agent_id)[1:]
        subtree = _sum([own, *(usage.cost_of_agent(s, member) for member in members)]) if members else own
        return {"own": own, "subtree": subtree}


def with_ancestors(s, agent_ids) -> list[str]:
    """The agents and every agent above them: whose subtree costs change when theirs do."""
    with s.lock:
        found: dict[str, None] = {}
        for agent_id in agent_ids:
            current = agent_id
            while current is not None and current not in found and current in s.agents:
                found[current] = None
                current = s.agents[current].parent_id
        return list(found)


def session_cost(s) -> dict:
    """The whole session's cost: {"cost_usd", "unpriced_models"} (its totals priced, not made into a dict: the
    sessions list prices each of the hundreds of rows it shows)."""
    with s.lock:
        cost, unpriced = usage.session_totals(s).cost()
    return {"cost_usd": cost, "unpriced_models": unpriced}


def usd(value: float | None) -> str:
    """Dollars as people read them: cents above a dollar, four decimals below it."""
    if value is None:
        return "no price"
    if value >= 1:
        return f"${value:,.2f}"
    return f"${value:.4f}" if value else "$0.00"


def prices_note(prices: pricing.Prices) -> dict:
    """Where the prices in use come from, for the pages' footnote."""
    return {"as_of": prices.as_of, "source": prices.source}
