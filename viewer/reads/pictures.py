"""Pictures of a session's flow, as plain data for SVG templates: the spawn graph and the chart.

Pure reads over a SessionIndex; coordinates are computed here so templates only draw.
Every piece of log text a picture prints goes through `log_text` (secret masking plugs in there).
"""

from __future__ import annotations

from bisect import bisect_left

from viewer.core import model
from viewer.index import facets
from viewer.index.session_index import SessionIndex

from . import causality, queries
from .labels import FULL, causality_edges, label_text, log_text, log_value  # one labelling for all pictures

LABEL_CHARS = 34


def _spawning_call_summary(s: SessionIndex, agent_id: str, call: dict) -> str:
    """The whole summary of the call that created an agent (created_by's is already shortened),
    picked by the same rule as created_by's."""
    agent = s.agents[agent_id]
    event = s.event(agent.cause) if agent.cause is not None else None
    if event is None:
        return ""
    picked = queries.spawning_call(s, agent, event)
    return picked.summary(FULL) if picked else call.get("summary") or ""


def short(text: str, limit: int = LABEL_CHARS) -> str:
    """A label: the whole text masked first, then cut, so a cut never splits a secret."""
    text = " ".join(log_text(text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- the spawn graph -------------------------------------------------------------------------------

NODE_W, NODE_H, GAP_X, GAP_Y, MARGIN = 150, 40, 24, 70, 12
CHILD_LIMIT = 12  # a parent with more children shows the first CHILD_LIMIT - 1 and one "+N more" box


def _shown_children(children: list[str]) -> list[str]:
    return children if len(children) <= CHILD_LIMIT else children[: CHILD_LIMIT - 1]


def spawn_graph(s: SessionIndex) -> dict:
    """The agent tree laid out top-down: leaves side by side, each parent centred over its children;
    one edge per spawned agent, labelled with the tool call that created it. Past CHILD_LIMIT children a
    parent's others (and their sub-agents) fold into one box (`more`): a graph of hundreds of agents stays
    readable, and the session page's tree lists them all."""
    with s.lock:
        slots: dict[str, float] = {}
        depth: dict[str, int] = {}
        more: list[dict] = []
        next_slot = 0
        # Iterative post-order so deep trees do not hit the recursion limit.
        for root in s.roots:
            stack = [(root, 0, False)]
            while stack:
                agent_id, level, done = stack.pop()
                all_children = s.agents[agent_id].children
                children = _shown_children(all_children)
                if done or not children:
                    depth[agent_id] = level
                    if children:
                        last = slots[children[-1]]
                        if len(children) < len(all_children):
                            last = next_slot
                            more.append({"parent_id": agent_id, "count": len(all_children) - len(children),
                                         "slot": next_slot, "level": level + 1})
                            next_slot += 1
                        slots[agent_id] = (slots[children[0]] + last) / 2
                    else:
                        slots[agent_id] = next_slot
                        next_slot += 1
                    continue
                stack.append((agent_id, level, True))
                stack.extend((c, level + 1, False) for c in reversed(children))
        nodes, edges = [], []
        for agent_id in s.agent_order:
            if agent_id not in depth:  # folded into its parent's "more" box
                continue
            agent = s.agents[agent_id]
            x = MARGIN + slots[agent_id] * (NODE_W + GAP_X)
            y = MARGIN + depth[agent_id] * (NODE_H + GAP_Y)
            nodes.append({"agent_id": agent_id, "name": short(agent.display_name, 22), "full_name": log_text(agent.display_name),
                          "x": x, "y": y, "cx": x + NODE_W / 2, "entries": len(agent.entries),
                          "implicit": agent.implicit, "root": agent.parent_id is None, "ordinal": agent.ordinal})
        where = {n["agent_id"]: n for n in nodes}
        for agent_id in s.agent_order:
            agent = s.agents[agent_id]
            if agent.parent_id is None or agent_id not in where:
                continue
            parent, child = where[agent.parent_id], where[agent_id]
            call = queries.created_by(s, agent) or {}
            summary = _spawning_call_summary(s, agent_id, call)
            x1, y1, x2, y2 = parent["cx"], parent["y"] + NODE_H, child["cx"], child["y"]
            edges.append({"parent_id": agent.parent_id, "agent_id": agent_id, "x1": x1, "y1": y1, "x2": x2, "y2": y2,
                          "mid_y": (y1 + y2) / 2, "label_x": x2, "label_y": y2 - 8,
                          "message_id": call.get("message_id"), "call_id": call.get("call_id"),
                          "tool": call.get("tool"), "label": short(summary, 24), "summary": short(summary, 300)})
        folded = []
        for box in more:
            parent = where[box["parent_id"]]
            x, y = MARGIN + box["slot"] * (NODE_W + GAP_X), MARGIN + box["level"] * (NODE_H + GAP_Y)
            folded.append({"parent_id": box["parent_id"], "parent_ordinal": parent["ordinal"], "count": box["count"],
                           "x": x, "y": y, "cx": x + NODE_W / 2, "x1": parent["cx"], "y1": parent["y"] + NODE_H,
                           "mid_y": (parent["y"] + NODE_H + y) / 2})
        width = MARGIN * 2 + max(next_slot, 1) * (NODE_W + GAP_X) - GAP_X
        height = MARGIN * 2 + (max(depth.values(), default=0) + 1) * (NODE_H + GAP_Y) - GAP_Y
        return {"nodes": nodes, "edges": edges, "more": folded, "width": width, "height": height,
                "node_w": NODE_W, "node_h": NODE_H}


def breadcrumbs(s: SessionIndex, agent_id: str) -> list[dict]:
    """root -> ... -> agent: each step with the tool call (message, id, summary) that created it."""
    steps = []
    for item in queries.lineage(s, agent_id):
        call = item["created_by"] or {}
        summary = _spawning_call_summary(s, item["agent_id"], call)
        steps.append({"agent_id": item["agent_id"], "name": log_text(item["name"]),
                      "message_id": call.get("message_id"), "missing": call.get("missing", False),
                      "call_id": call.get("call_id"), "tool": call.get("tool"),
                      "summary": short(summary, 300), "label": short(summary, 40)})
    return steps


# --- tracing: upstream and downstream of a message -------------------------------------------------

def _parents(s: SessionIndex, position: int) -> list[str]:
    parent = causality.parent_of(s, position)
    return parent if isinstance(parent, list) else ([parent] if parent else [])


def _children(s: SessionIndex, position: int) -> list[int]:
    """What a message caused: deliveries of it, results of its calls, texts and agents its `cause` names."""
    event = s.events[position]
    message_id = event["message_id"]
    found = list(s.references.get(message_id, ()))
    found += s.caused.get(message_id, ())
    for call in model.tool_calls(event):
        if call.id:
            found += s.result_positions_for_call(position, call.id)
    return found


def trace(s: SessionIndex, message_id: str) -> dict:
    """Upstream: every message it came from (its causality chains). Downstream: everything it caused,
    recursively (deliveries, tool results, pieces of text, agents spawned). Both in file order."""
    with s.lock:
        focus = s.by_id[message_id]
        up, frontier = set(), [focus]
        while frontier:
            for parent in _parents(s, frontier.pop()):
                p = s.by_id.get(parent)
                if p is not None and p not in up and p != focus:
                    up.add(p)
                    frontier.append(p)
        down, frontier = set(), [focus]
        while frontier:
            for p in _children(s, frontier.pop()):
                if p not in down and p != focus:
                    down.add(p)
                    frontier.append(p)
        agents = []
        for p in sorted(down):
            event = s.events[p]
            if event["event_type"] == model.AGENT_CREATED and s.agents[event["agent_id"]].created_position == p:
                agents.append(event["agent_id"])

        def row(p: int) -> dict:
            event = s.events[p]
            agent = s.agents.get(event["agent_id"])
            return {"position": p, "message_id": event["message_id"], "agent_id": event["agent_id"],
                    "agent_name": agent.display_name if agent else event["agent_id"],
                    "kind": model.trace_kind(event, log_value), "text": short(model.content_of(event), 80)}

        return {"message_id": message_id, "position": focus, "focus": row(focus),
                "upstream": [row(p) for p in sorted(up)], "downstream": [row(p) for p in sorted(down)],
                "agents": agents}


# --- the who-said-what-to-whom chart -----------------------------------------------------------------

ROW_H, LANE_W, HEAD_H, LEFT = 20, 150, 46, 56
DEFAULT_WINDOW, MAX_WINDOW = 200, 1000
# The chart's mark (its CSS class) for each trace kind (model.trace_kind); any other kind is "other".
MARK_CLASS = {model.UTTERANCE: model.SAID, model.DELIVERY: model.HEARD, model.TRACE_USER: model.HEARD,
              model.TOOL_CALL: "call", model.TOOL_RESULT: "result", model.TRACE_AGENT_CREATED: "spawn",
              model.TRACE_PIECE_OF_TEXT: "piece", model.TRACE_SYSTEM: model.SYSTEM}


def _sequence(s: SessionIndex, agent_ids: list[str] | None) -> list[int]:
    """The positions a chart walks through: every event, or the chosen agents' events plus the
    originals they received (so each of their deliveries has its arrow)."""
    if not agent_ids:
        return list(range(s.count))
    kept = facets.caught_up(s)
    wanted = set()
    for agent_id in agent_ids:
        agent = s.agents[agent_id]
        wanted.update(agent.entries)
        if agent.created_position is not None:
            wanted.add(agent.created_position)
        wanted.update(kept.originals.get(agent_id, ()))
        wanted.update(kept.pieces.get(agent_id, ()))
    return sorted(wanted)


def chart(s: SessionIndex, start: int | None = 0, size: int = DEFAULT_WINDOW, agent_ids: list[str] | None = None,
          traced: dict | None = None) -> dict:
    """A window of the session drawn as lanes (one per agent) and rows (events in file order), with an
    arrow from each original to each delivery of it, and marks for calls, results, texts and spawns.

    start=None places the traced message (else the first event) near the top third of the window."""
    size = max(1, min(size, MAX_WINDOW))
    with s.lock:
        sequence = _sequence(s, agent_ids)
        total = len(sequence)
        if start is None:
            start = max(0, bisect_left(sequence, traced["position"]) - size // 3) if traced else 0
        start = max(0, min(start, max(total - size, 0)))
        window = sequence[start:start + size]
        row_of = {p: i for i, p in enumerate(window)}
        lane_agents = {s.events[p]["agent_id"] for p in window}
        for p in window:  # senders of deliveries whose original is above the window get a lane too
            event = s.events[p]
            if model.is_delivery(event) and event["substance"] in s.by_id:
                lane_agents.add(s.events[s.by_id[event["substance"]]]["agent_id"])
        lanes = [a for a in s.agent_order if a in lane_agents]
        lane_x = {a: LEFT + i * LANE_W + LANE_W / 2 for i, a in enumerate(lanes)}
        up = {r["position"] for r in traced["upstream"]} if traced else set()
        down = {r["position"] for r in traced["downstream"]} if traced else set()
        focus = traced["position"] if traced else None
        lit = up | down | ({focus} if traced else set())

        def y_of(p: int) -> float:
            return HEAD_H + row_of[p] * ROW_H + ROW_H / 2

        def trace_class(p: int) -> str:
            return "focus" if p == focus else "upstream" if p in up else "downstream" if p in down else ""

        marks, arrows, links = [], [], []
        for p in window:
            event = s.events[p]
            kind = model.trace_kind(event, log_value)
            original = s.event(event["substance"]) if model.is_delivery(event) else None
            modified = bool(model.is_modified(event, original)) if original is not None else False
            text = label_text(event)
            agent = s.agents.get(event["agent_id"])
            marks.append({"position": p, "number": p + 1, "message_id": event["message_id"],
                          "agent_id": event["agent_id"], "x": lane_x[event["agent_id"]], "y": y_of(p),
                          "kind": kind, "css": MARK_CLASS.get(kind, "other"), "modified": modified,
                          "trace": trace_class(p), "label": short(text, 18),
                          "title": f"#{p + 1} {kind} {event['message_id']} · "
                                   f"{agent.display_name if agent else event['agent_id']}: {short(text, 160)}"})
            if original is not None:
                o = s.by_id[event["substance"]]
                x1 = lane_x[original["agent_id"]]
                earlier = o not in row_of
                if earlier and o > p:
                    continue  # an original logged after its delivery: nothing sensible to draw
                y1 = HEAD_H if earlier else y_of(o)
                x2, y2 = _short_of(x1, y1, lane_x[event["agent_id"]], y_of(p), 7)
                arrows.append({"from_id": original["message_id"], "to_id": event["message_id"],
                               "x1": x1, "y1": y1, "x2": x2, "y2": y2, "modified": modified, "earlier": earlier,
                               "lit": p in lit and (earlier or o in lit)})
            # Other explicit links drawn when both ends are in the window: call -> result, cause -> text/agent
            # (the DOT graph's links; a delivery's substance is the arrow above).
            for edge in causality_edges(s, (p,)):
                if edge.link == "substance":
                    continue
                q = s.by_id.get(edge.source)
                if q is not None and q in row_of and q < p:
                    links.append({"css": "spawn-link" if kind == model.TRACE_AGENT_CREATED else
                                  "result-link" if kind == model.TOOL_RESULT else "cause-link",
                                  "x1": lane_x[s.events[q]["agent_id"]], "y1": y_of(q),
                                  "x2": lane_x[event["agent_id"]], "y2": y_of(p), "lit": p in lit and q in lit})
        spawned = set(traced["agents"]) if traced else set()
        lane_rows = [{"agent_id": a, "name": short(s.agents[a].display_name, 20), "full_name": log_text(s.agents[a].display_name),
                      "x": lane_x[a], "spawned_by_trace": a in spawned} for a in lanes]
        height = HEAD_H + len(window) * ROW_H + 10
        return {"start": start, "end": start + len(window), "total": total, "size": size,
                "agents": agent_ids or [], "lanes": lane_rows, "marks": marks, "arrows": arrows, "links": links,
                "width": LEFT + max(len(lanes), 1) * LANE_W + LANE_W, "height": height, "row_h": ROW_H,
                "head_h": HEAD_H, "left": LEFT, "lane_w": LANE_W,
                "trace": traced["message_id"] if traced else None}


def _short_of(x1: float, y1: float, x2: float, y2: float, gap: float) -> tuple[float, float]:
    """(x2, y2) moved `gap` pixels back towards (x1, y1), so an arrowhead stops at a mark's edge."""
    dx, dy = x2 - x1, y2 - y1
    length = (dx * dx + dy * dy) ** 0.5
    if length <= gap:
        return x2, y2
    return round(x2 - dx / length * gap, 1), round(y2 - dy / length * gap, 1)
