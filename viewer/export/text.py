"""Exports of a session as text: Markdown, the seed-004 text trace, GraphViz DOT, JSON and OTLP/JSON.

Pure functions over a SessionIndex, shared by `agentview export` and the pages' export links. Every value printed
from the log goes through `log_text`, the one place where masking applies to exports.
"""

from __future__ import annotations

import re
from typing import Iterable

from viewer.core import jsonio, model
from viewer.core.positions import union
from viewer.index import facets
from viewer.index.session_index import SessionIndex
from viewer.reads import dialogs, queries
from viewer.reads.labels import causality_edges, label_text, log_json, log_text, log_value

from . import otlp

FORMATS = ("markdown", "trace", "dot", "json", "otlp")
MEDIA_TYPES = {
    "markdown": "text/markdown; charset=utf-8",
    "trace": "text/plain; charset=utf-8",
    "dot": "text/vnd.graphviz; charset=utf-8",
    "json": "application/json",
    "otlp": "application/x-ndjson",  # one OTLP/JSON ExportTraceServiceRequest a line
}
LABEL_EXCERPT = 40


# --- Markdown ----------------------------------------------------------------------------------

def _fence(text: str) -> str:
    """A fenced block that no backtick run inside the text can close early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _inline(text: str) -> str:
    """Names and ids in headings: Markdown punctuation escaped, one line."""
    text = " ".join(log_value(text).split())
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~])", r"\\\1", text)


def _code(value) -> str:
    """An id or a name from the log as inline code: masked, one line, and no backtick run inside closes it."""
    text = " ".join(log_value(value).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}" if longest else f"{fence}{text}{fence}"


def _quoted(text: str) -> str:
    """Prose a model or a person wrote, as Markdown inside a block quote: rendered, yet unable to end the
    entry's section or open one of its own (every line stays inside the quote)."""
    return "\n".join(f"> {line}" if line.strip() else ">" for line in log_text(text).split("\n"))


def _items_markdown(items: list[dict], level: str, with_agent: bool) -> list[str]:
    """Perspective items (queries.perspective) as Markdown sections: prose quoted and rendered, tool arguments
    and outputs fenced exactly as logged."""
    out: list[str] = []
    for item in items:
        out.append("")
        who = f"{_inline(item['agent_name'])} · " if with_agent else ""
        head = f"{level} {who}{item['kind']} · {_code(item['message_id'])}"
        delivery = item["delivery"]
        if delivery:
            source = _inline(delivery["from_name"]) if delivery["from_name"] else "an unknown sender"
            head += f" · from {source} (substance {_code(delivery['original_id'])})"
            if delivery["modified"]:
                head += " · **modified on its way**"
        out.append(head)
        if item["content"]:
            out += ["", _fence(log_text(item["content"])) if item["kind"] == model.RECEIVED else _quoted(item["content"])]
        if delivery and delivery["modified"]:
            out += ["", "Original:", "", _quoted(delivery["original_content"] or "")]
        for call in item["calls"]:
            out += ["", f"{level}# did {_code(call['name'])}" + (f" · call {_code(call['id'])}" if call["id"] else ""),
                    "", _fence(log_text(call["pretty_arguments"]))]
            for spawned in call["spawned"]:
                out += ["", f"Created {_inline(spawned['name'])} ({_code(spawned['agent_id'])})"]
            for result in call["results"]:
                out += ["", f"Received {_code(result['message_id'])}:", "", _fence(log_text(result["content"]))]
    return out


def perspective_markdown(s: SessionIndex, agent_id: str, include_subagents: bool = False) -> str:
    """What an agent heard, did, received and said, as Markdown."""
    with s.lock:
        agent = s.agents[agent_id]
        view = queries.perspective(s, agent_id, include_subagents)
        lineage = queries.lineage(s, agent_id)
    out = [f"# Perspective of {_inline(agent.display_name)} ({_code(agent_id)})", ""]
    out.append(f"Session {_code(s.name)} · {view['total']} transcript entries"
               + (" · sub-agents included" if include_subagents else ""))
    if len(lineage) > 1:
        out.append("")
        out.append("Lineage: " + " → ".join(_inline(a["name"]) for a in lineage))
    out += _items_markdown(view["items"], "##", include_subagents)
    return "\n".join(out) + "\n"


def session_markdown(s: SessionIndex) -> str:
    """A whole session as Markdown: who created whom, then every agent's perspective in the tree's order."""
    with s.lock:
        order = queries.tree_order(s)
        names = queries.agent_names(s)
    out = [f"# {_inline(s.title or s.name)}", "",
           f"Session {_code(s.name)} · {s.shown_count} events · {len(order)} agents", "", "## Agents", ""]
    for agent_id, depth, _ in order:
        node = s.agents[agent_id]
        about = ", ".join(x for x in (node.language_model and log_value(node.language_model),
                                      f"{len(node.entries)} entries") if x)
        out.append(f"{'  ' * depth}- {_inline(names[agent_id])} ({_code(agent_id)}): {_inline(about)}")
    for agent_id, _, _ in order:
        view = queries.perspective(s, agent_id)
        out += ["", f"## {_inline(names[agent_id])} ({_code(agent_id)})", "", f"{view['total']} transcript entries"]
        out += _items_markdown(view["items"], "###", False)
    return "\n".join(out) + "\n"


def dialog_markdown(s: SessionIndex, agent_ids: list[str]) -> str:
    """The distinct messages among the chosen agents, each once, as Markdown."""
    with s.lock:
        names = queries.agent_names(s)
        view = dialogs.dialog(s, agent_ids)
    out = ["# Dialog between " + ", ".join(_inline(names[a]) for a in agent_ids), "",
           f"Session {_code(s.name)} · {view['total']} distinct messages"]
    for item in view["items"]:
        speaker = _inline(item["speaker_name"]) if item["speaker_name"] else "unknown speaker"
        to = ", ".join(_inline(n) for n in item["recipient_names"])
        out += ["", f"## {speaker}" + (f" → {to}" if to else "") + f" · {_code(item['message_id'])}"
                + (" · **modified on its way**" if item["modified"] else ""),
                "", _fence(log_text(item["content"])) if item["event_type"] != model.TRANSCRIPT_ENTRY
                or model.is_tool_result(item["event"]) else _quoted(item["content"])]
        for d in item["deliveries"]:
            if d["modified"]:
                out += ["", f"What {_inline(d['name'])} received ({_code(d['message_id'])}):", "",
                        _quoted(d["content"])]
    return "\n".join(out) + "\n"


# --- the text trace of seed 004 ------------------------------------------------------------------

def _indent(text: str, pad: str) -> list[str]:
    return [pad + line if line else pad.rstrip() for line in text.split("\n")]


def _selected_positions(s: SessionIndex, agent_ids: Iterable[str] | None) -> list[int]:
    if agent_ids is None:
        return list(range(s.count))
    kept = facets.caught_up(s)
    return list(union([s.agents[a].entries for a in agent_ids if a in s.agents]
                      + [kept.others.get(a, ()) for a in agent_ids]))


def trace_text(s: SessionIndex, agent_ids: list[str] | None = None) -> str:
    """Time-ordered (file order), one block per event: its kind, its ids and its text."""
    pad = " " * 11
    with s.lock:
        names = {a: s.agents[a].display_name for a in s.agent_order}
        out = [f"=== Session {log_text(s.name)} ===", f"File: {log_text(s.relpath)}",
               f"Events: {s.count} · Agents: {len(s.agents)}"]
        if agent_ids is not None:
            out.append("Agents shown: " + ", ".join(map(log_text, agent_ids)))
        for p in _selected_positions(s, agent_ids):
            event = s.events[p]
            agent_id = event["agent_id"]
            who = log_text(agent_id) + (f" ({log_text(names[agent_id])})"
                                        if names.get(agent_id, agent_id) != agent_id else "")
            heading = f"{model.trace_kind(event, log_value)} {log_text(event['message_id'])} {who}"
            out += ["", f"[#{p + 1} line {s.line_numbers[p]}] {heading}"]
            details = _trace_details(s, p, event)
            out.append(pad + " · ".join(details) if details else pad.rstrip())
            text = model.content_of(event)
            if text:
                out += _indent(log_text(text), pad + "| ")
            for call in model.tool_calls(event):
                out += _indent(log_text(f"{call.name}({call.arguments_raw})"), pad + "> ")
    out += ["", "=== End Session ==="]
    return "\n".join(out) + "\n"


def _trace_details(s: SessionIndex, p: int, event: model.Event) -> list[str]:
    """The line under an event's heading: its role, model, links and calls, each value masked."""
    details = []
    if event.get("role"):
        details.append(f"role: {log_value(event['role'])}")
    if event.get("event_type") == model.AGENT_CREATED and event.get("language_model"):
        details.append(f"model: {log_value(event['language_model'])}")
    causes = model.causes_of(event)
    if causes:
        details.append("cause: " + ", ".join(map(log_text, causes)))
    if model.is_delivery(event):
        original = s.event(event["substance"])
        note = "" if original is not None else " (not in the log)"
        if model.is_modified(event, original):
            note = " (modified on its way)"
        details.append(f"substance: {log_text(event['substance'])}{note}")
    if isinstance(event.get("tool_call_id"), str):
        call_position = s.call_position_for_result(p)
        paired = (f" (call {log_text(s.events[call_position]['message_id'])})" if call_position is not None
                  else " (unpaired)")
        details.append(f"tool_call_id: {log_text(event['tool_call_id'])}{paired}")
    for call in model.tool_calls(event):
        details.append(f"call: {log_text(call.id) if call.id else '?'} {log_text(call.name)}")
    spawned = s.spawned.get(event["message_id"], [])
    if spawned and s.by_id.get(event["message_id"]) == p:
        details.append("spawned: " + ", ".join(map(log_text, spawned)))
    return details


# --- GraphViz DOT of the causality graph ----------------------------------------------------------

def _dot_id(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _dot_label(*lines: str) -> str:
    """A label of several lines; log text inside it cannot end the string or add attributes."""
    return _dot_id("\n".join(" ".join(line.split()) for line in lines))


SHAPES = {model.TRACE_AGENT_CREATED: "diamond", model.TRACE_PIECE_OF_TEXT: "note", model.TOOL_CALL: "box",
          model.TOOL_RESULT: "box", model.UTTERANCE: "ellipse", model.DELIVERY: "ellipse", model.TRACE_SYSTEM: "plaintext"}


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LABEL_EXCERPT else text[: LABEL_EXCERPT - 1] + "…"


def _node_names(message_ids: Iterable[str]) -> dict[str, str]:
    """Each message's node in the picture: its id, masked. Ids that only masking made alike get a
    number each, so no two messages share a node."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for message_id in message_ids:
        if message_id in names:
            continue
        name = log_text(message_id)
        if name != message_id:
            name = f"{name} #{len(names) + 1}"
        while name in taken:
            name += "'"
        names[message_id] = name
        taken.add(name)
    return names


def causality_dot(s: SessionIndex, agent_ids: list[str] | None = None) -> str:
    """The causality graph: one node per event, grouped by agent; explicit links solid, inferred dashed."""
    with s.lock:
        positions = _selected_positions(s, agent_ids)
        edges = causality_edges(s, positions)
        by_agent: dict[str, list[int]] = {}
        for p in positions:
            by_agent.setdefault(s.events[p]["agent_id"], []).append(p)
        shown = {s.events[p]["message_id"] for p in positions}
        node = _node_names([*(s.events[p]["message_id"] for p in positions), *(e.source for e in edges)])
        out = [f"digraph {_dot_id('causality ' + log_text(s.name))} {{", "  rankdir=TB;",
               '  node [fontname="Helvetica" fontsize=10];', '  edge [fontname="Helvetica" fontsize=9];']
        for agent_id, agent_positions in by_agent.items():
            agent = s.agents.get(agent_id)
            ordinal = agent.ordinal if agent else len(s.agents)
            out.append(f"  subgraph cluster_{ordinal} {{")
            name = log_text(agent.display_name if agent else agent_id)
            shown_id = log_text(agent_id)
            out.append(f"    label={_dot_label(name, shown_id) if name != shown_id else _dot_label(shown_id)};")
            for p in agent_positions:
                event = s.events[p]
                kind = model.trace_kind(event, log_value)
                text = label_text(event)
                message = node[event["message_id"]]
                label = _dot_label(kind, message, _excerpt(log_text(text))) if text else _dot_label(kind, message)
                out.append(f"    {_dot_id(message)} [label={label} shape={SHAPES.get(kind, 'ellipse')}];")
            out.append("  }")
        missing = sorted({e.source for e in edges if e.source not in shown})
        for message_id in missing:
            note = "not in the log" if message_id not in s.by_id else "not shown"
            out.append(f"  {_dot_id(node[message_id])} [label={_dot_label(node[message_id], '(' + note + ')')} "
                       f"shape=plaintext];")
        for edge in edges:
            style = "solid" if edge.explicit else "dashed"
            out.append(f"  {_dot_id(node[edge.source])} -> {_dot_id(node[edge.target])} "
                       f"[label={_dot_id(log_text(edge.link))} style={style}];")
    out.append("}")
    return "\n".join(out) + "\n"


# --- JSON of the normalized session ---------------------------------------------------------------

def session_data(s: SessionIndex) -> dict:
    """The session as the viewer understands it: agents, tree, events in file order, links, problems."""
    with s.lock:
        return {
            "session": {"id": s.id, "name": s.name, "path": s.relpath, "events": s.count, "agents": len(s.agents)},
            "agents": queries.agents(s),
            "tree": queries.tree(s),
            "events": [{"position": p, "line": s.line_numbers[p], "kind": model.trace_kind(e, log_value), "event": e}
                       for p, e in enumerate(s.events)],
            "edges": [{"source": e.source, "target": e.target, "link": e.link, "explicit": e.explicit}
                      for e in causality_edges(s)],
            "problems": [p.as_dict() for p in s.problems],
        }


def session_json(s: SessionIndex) -> str:
    return log_json(jsonio.answer(session_data(s), indent=True)).decode() + "\n"


# --- one entry point for the command and the routes -----------------------------------------------

class ExportError(ValueError):
    """A request the chosen format cannot answer (e.g. Markdown without an agent). `page` says it in a web
    page's words (links and pages, not command-line options), where those differ."""

    def __init__(self, message: str, page: str | None = None):
        super().__init__(message)
        self.page = page or message


def export(s: SessionIndex, fmt: str, agent: str | None = None, agents: list[str] | None = None,
           include_subagents: bool = False) -> str:
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")
    chosen = [agent] if agent else list(agents or [])
    for agent_id in chosen:
        if agent_id not in s.agents:
            raise ExportError(f"session {s.name!r} has no agent {agent_id!r}")
    if agent and agents:
        raise ExportError("give --agent (one perspective) or --agents (a dialog), not both",
                          "an export is of one agent (?agent=) or of a dialog (?agents=), not both")
    if fmt == "markdown":
        if agent:
            return perspective_markdown(s, agent, include_subagents)
        if agents:
            return dialog_markdown(s, chosen)
        return session_markdown(s)
    if fmt == "trace":
        return trace_text(s, chosen or None)
    if fmt == "dot":
        return causality_dot(s, chosen or None)
    if chosen:
        name = "JSON" if fmt == "json" else "OTLP"
        raise ExportError(f"{fmt} exports the whole session: leave out --agent/--agents",
                          f"the {name} export is of the whole session: it takes no agent")
    if fmt == "otlp":
        return otlp.otlp_json(s)
    return session_json(s)
