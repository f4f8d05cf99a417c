"""The tools that read entries: an agent's perspective, the dialog of some agents, one message with its causality.

Each is the page's read (queries.perspective, dialogs.dialog, web.resource_views.message_data) in a window of at most 200,
worded as compact text: one entry a line or a few, its message id first (what `message` takes).
"""

from __future__ import annotations

from bisect import bisect_right

from mcp.server.mcpserver.exceptions import ToolError

from viewer.core import failures, model
from viewer.index import failed
from viewer.reads import causality, dialogs, queries
from viewer.web.resource_views import message_data

from .context import MAX_LIMIT, Viewer, page
from .text import MESSAGE_CHARS, Answer, clip, indented, more, one_line

CHAIN_SHOWN = 50  # of a message's upstream chain and of what it caused: the nearest ones


def _error(s, event: dict) -> str:
    """An event's failure by the rule every page uses (core/failures.py), in brackets."""
    position = s.by_id.get(event["message_id"])
    kind = failed.kind_at(s, position) if position is not None else failures.kind_of(event, s.format.failure_texts)
    return f" [{kind}]" if kind else ""


def _failed(item: dict) -> str:
    """An entry's failure as the pages show it (queries.entry's `failure`: core/failures.py), in brackets."""
    failure = item.get("failure")
    return f" [{failure['kind']}]" if failure else ""


def entry_lines(item: dict, with_agent: bool) -> str:
    """A perspective's entry (queries.entry's shape) as text: its kind, id and text, its calls with their results
    and the agents they created."""
    who = f"{item['agent_id']} " if with_agent else ""
    kind, delivery = item["kind"], item["delivery"]
    head = f"[{item['message_id']}] {who}{kind.upper()}"
    if kind == model.HEARD and delivery:
        head += f" from {delivery['from_agent_id'] or 'an unknown sender'} (original {delivery['original_id']})"
        if delivery["modified"]:
            head += " [modified on its way]"
    elif kind == model.NOTED and item["role"]:
        head += f" ({one_line(item['role'], 40)})"
    if item.get("rewound"):
        head += " [on a branch the conversation was rewound from]"
    lines = [head + _failed(item) + ":", indented(clip(item["content"]))]
    for call in item["calls"]:
        lines.append(f"  -> {call['name']}({one_line(call['arguments'], 300)})")
        for agent in call["spawned"]:
            lines.append(f"     created agent {agent['agent_id']} \"{one_line(agent['name'])}\"")
        for result in call["results"]:
            lines.append(f"     <- [{result['message_id']}]{_failed(result)} "
                         + one_line(result["content"], 600))
    return "\n".join(line for line in lines if line)


def perspective(viewer: Viewer, session_id: str, agent_id: str, start: int = 0, limit: int = 50,
                sub_agents: bool = False) -> str:
    start, limit = page(start, limit)
    s = viewer.session(session_id)
    viewer.agent(s, agent_id)
    with s.lock:
        view = queries.perspective(s, agent_id, sub_agents, start, limit)
        name = s.agents[agent_id].display_name
    link = viewer.link("pages.agent", session_id=s.id, agent_id=agent_id, start=start or None,
                       sub=1 if sub_agents else None)
    answer = Answer(f"Perspective of {agent_id} \"{one_line(name)}\" in session {s.id}"
                    f"{' with its sub-agents' if sub_agents else ''}: entries {view['start'] + 1}-{view['end']} of "
                    f"{view['total']:,} (what it heard, did, received and said; a call's results under it). "
                    f"Page {link}")
    last = None
    for item in view["items"]:
        if not answer.add(entry_lines(item, sub_agents)):
            break
        last = item["position"]
    shown_to = view["end"]
    if answer.full:  # cut short: go on after the last entry shown (a result shown under its call counts as shown)
        with s.lock:
            positions = queries.filtered_positions(s, view["agents"])
        shown_to = view["start"] if last is None else bisect_right(positions, last, view["start"])
        shown_to = max(shown_to, view["start"] + 1)  # an entry too big for an answer alone: skipped, never looped on
    sub = ", sub_agents=true" if sub_agents else ""
    answer.end(more(shown_to, view["total"], "entries", f"start={shown_to}{sub}"))
    return answer.text()


def dialog(viewer: Viewer, session_id: str, agent_ids: list[str], start: int = 0, limit: int = 50) -> str:
    start, limit = page(start, limit)
    s = viewer.session(session_id)
    chosen = list(dict.fromkeys(a for a in agent_ids if a))
    if not chosen:
        raise ToolError("agent_ids needs one agent id or more (agent_tree gives them).")
    if len(chosen) > MAX_LIMIT:
        raise ToolError(f"agent_ids takes at most {MAX_LIMIT} agents, not {len(chosen)}.")
    for agent_id in chosen:
        viewer.agent(s, agent_id)
    view = dialogs.dialog(s, chosen, start, limit)
    answer = Answer(f"Dialog of {', '.join(chosen)} in session {s.id}: messages {view['start'] + 1}-{view['end']} of "
                    f"{view['total']:,}, each once however many of them heard it. "
                    f"Page {viewer.link('pages.dialog', session_id=s.id, agents=','.join(chosen))}")
    shown = 0
    for item in view["items"]:
        to = ", ".join(item["recipients"]) or "nobody chosen"
        changed = [d["agent_id"] for d in item["deliveries"] if d["modified"]]
        note = f" [modified on its way to {', '.join(changed)}]" if changed else ""
        missing = " [its original is not in the log]" if item["original_missing"] else ""
        lines = [f"[{item['message_id']}] {item['speaker'] or 'unknown'} -> {to}{note}{missing}:",
                 indented(clip(item["content"]))]
        lines += [f"  -> {call.name}({one_line(call.arguments_raw, 300)})" for call in model.tool_calls(item["event"])]
        line = "\n".join(part for part in lines if part)
        if not answer.add(line):
            break
        shown += 1
    answer.end(more(view["start"] + shown, view["total"], "messages", f"start={view['start'] + shown}"))
    return answer.text()


def _who(s, event: dict) -> str:
    """`[message id] agent "name" KIND`: whose entry an event is, and of what kind."""
    agent = s.agents.get(event["agent_id"])
    kind = model.perspective_kind(event) if model.is_transcript_entry(event) else event.get("event_type")
    name = f" \"{one_line(agent.display_name, 60)}\"" if agent else ""
    return f"[{event['message_id']}] {event['agent_id']}{name} {str(kind).upper()}{_error(s, event)}"


def _brief(s, event: dict) -> str:
    return f"- {_who(s, event)}: {one_line(model.content_of(event), 300)}"


def downstream(s, message_id: str, position: int) -> list[int]:
    """What the message led to, nearest first in file order: its deliveries (and theirs), the events naming it as
    cause, and the results of its tool calls."""
    found = {s.by_id[e["message_id"]] for e in causality.references(s, message_id) if e["message_id"] in s.by_id}
    found.update(s.caused.get(message_id, ()))
    event = s.events[position]
    for call in model.tool_calls(event):
        if call.id:
            found.update(s.result_positions_for_call(position, call.id))
    found.discard(position)
    return sorted(found)


def message(viewer: Viewer, session_id: str, message_id: str) -> str:
    s = viewer.session(session_id)
    with s.lock:
        position = viewer.message(s, message_id)
        data = message_data(s, message_id, position)
        event = data["event"]
        caused = downstream(s, message_id, position)
        spawned = list(s.spawned.get(message_id, ()))
        line = s.line_numbers[position]
        answer = Answer(f"Message {message_id} in session {s.id}, line {line}. "
                        f"Page {viewer.link('pages.message', session_id=s.id, message_id=message_id)}",
                        _who(s, event) + ":", indented(clip(model.content_of(event), MESSAGE_CHARS)))
        for call in model.tool_calls(event):
            answer.add(f"  -> {call.name}({clip(call.arguments_raw, 2000)})")
        delivered = data["provenance"]["as_delivery"]
        if delivered:
            answer.add(f"Delivered from {delivered['from_agent_id'] or 'an unknown sender'}'s "
                       f"{delivered['original_id']}" + (" (modified on its way)" if delivered["modified"] else ""))
        for agent_id in spawned:
            answer.add(f"Created agent {agent_id} \"{one_line(s.agents[agent_id].display_name)}\"")
        chain = data["flow"][:-1]
        answer.add(f"Upstream, the causality chain that led to it ({len(chain)}, oldest first"
                   + (f"; the nearest {CHAIN_SHOWN}" if len(chain) > CHAIN_SHOWN else "") + "):")
        for earlier in chain[-CHAIN_SHOWN:]:
            answer.add(_brief(s, earlier))
        answer.add(f"Downstream, what it led to ({len(caused)}: deliveries, events it caused, its calls' results"
                   + (f"; the first {CHAIN_SHOWN}" if len(caused) > CHAIN_SHOWN else "") + "):")
        for p in caused[:CHAIN_SHOWN]:
            answer.add(_brief(s, s.events[p]))
    return answer.text()
