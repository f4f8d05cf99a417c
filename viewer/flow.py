"""Pictures of a session's flow, as plain data for SVG templates: the spawn graph and the chart.

Pure reads over a SessionIndex; coordinates are computed here so templates only draw.
Every piece of log text a picture prints goes through `log_text` (secret masking plugs in there).
"""

from __future__ import annotations

from . import model, queries
from .index import SessionIndex

LABEL_CHARS = 34


def log_text(text: str) -> str:
    """Log content as the pictures print it (masking of secrets plugs in here)."""
    return text


def short(text: str, limit: int = LABEL_CHARS) -> str:
    text = " ".join(log_text(text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- the spawn graph -------------------------------------------------------------------------------

NODE_W, NODE_H, GAP_X, GAP_Y, MARGIN = 150, 40, 24, 70, 12


def spawn_graph(s: SessionIndex) -> dict:
    """The agent tree laid out top-down: leaves side by side, each parent centred over its children;
    one edge per spawned agent, labelled with the tool call that created it."""
    with s.lock:
        slots: dict[str, float] = {}
        depth: dict[str, int] = {}
        next_slot = 0
        # Iterative post-order so deep trees do not hit the recursion limit.
        for root in s.roots:
            stack = [(root, 0, False)]
            while stack:
                agent_id, level, done = stack.pop()
                children = s.agents[agent_id].children
                if done or not children:
                    depth[agent_id] = level
                    if children:
                        slots[agent_id] = (slots[children[0]] + slots[children[-1]]) / 2
                    else:
                        slots[agent_id] = next_slot
                        next_slot += 1
                    continue
                stack.append((agent_id, level, True))
                stack.extend((c, level + 1, False) for c in reversed(children))
        nodes, edges = [], []
        for agent_id in s.agent_order:
            agent = s.agents[agent_id]
            x = MARGIN + slots[agent_id] * (NODE_W + GAP_X)
            y = MARGIN + depth[agent_id] * (NODE_H + GAP_Y)
            nodes.append({"agent_id": agent_id, "name": short(agent.display_name, 22), "full_name": agent.display_name,
                          "x": x, "y": y, "cx": x + NODE_W / 2, "entries": len(agent.entries),
                          "implicit": agent.implicit, "root": agent.parent_id is None})
        where = {n["agent_id"]: n for n in nodes}
        for agent_id in s.agent_order:
            agent = s.agents[agent_id]
            if agent.parent_id is None:
                continue
            parent, child = where[agent.parent_id], where[agent_id]
            call = queries.created_by(s, agent) or {}
            x1, y1, x2, y2 = parent["cx"], parent["y"] + NODE_H, child["cx"], child["y"]
            edges.append({"parent_id": agent.parent_id, "agent_id": agent_id, "x1": x1, "y1": y1, "x2": x2, "y2": y2,
                          "mid_y": (y1 + y2) / 2, "label_x": x2, "label_y": y2 - 8,
                          "message_id": call.get("message_id"), "call_id": call.get("call_id"),
                          "tool": call.get("tool"), "label": short(call.get("summary") or "", 24),
                          "summary": log_text(call.get("summary") or "")})
        width = MARGIN * 2 + max(next_slot, 1) * (NODE_W + GAP_X) - GAP_X
        height = MARGIN * 2 + (max(depth.values(), default=0) + 1) * (NODE_H + GAP_Y) - GAP_Y
        return {"nodes": nodes, "edges": edges, "width": width, "height": height,
                "node_w": NODE_W, "node_h": NODE_H}


def breadcrumbs(s: SessionIndex, agent_id: str) -> list[dict]:
    """root -> ... -> agent: each step with the tool call (message, id, summary) that created it."""
    steps = []
    for item in queries.lineage(s, agent_id):
        call = item["created_by"] or {}
        steps.append({"agent_id": item["agent_id"], "name": item["name"],
                      "message_id": call.get("message_id"), "missing": call.get("missing", False),
                      "call_id": call.get("call_id"), "tool": call.get("tool"),
                      "summary": log_text(call.get("summary") or ""), "label": short(call.get("summary") or "", 40)})
    return steps
