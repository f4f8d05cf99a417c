"""A session as OpenTelemetry spans, in the shape of the GenAI semantic conventions for agents (v1.41.0).

One trace per session; an `invoke_agent` span per agent under the `execute_tool` span of the call that created it
(the spawn tree is the span tree); a `chat` span per response, an `execute_tool` span per call, a `message` span per
other entry; `substance` and `cause` as span links. The OpenInference attributes Phoenix reads are set beside them.
Ids derive from the session and message ids, so a store that deduplicates keeps one copy. Pure, and masked.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterator

import orjson

from viewer.core import jsonio, model, redact
from viewer.index.session_index import SessionIndex
from viewer.reads import queries

SEMCONV_VERSION = "1.41.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
SCOPE = "agentview"
BASE_TIME = datetime(2025, 1, 1, tzinfo=timezone.utc)  # where synthetic times start (native logs have none)
STEP_NS = 1_000_000  # synthetic time between two events in file order: 1 ms
SPANS_PER_REQUEST = 1000  # a big session is written as several requests, one a line

INTERNAL, CLIENT = 1, 3  # OTLP SpanKind values
AGENT, TOOL, LLM, CHAIN = "AGENT", "TOOL", "LLM", "CHAIN"  # openinference.span.kind values
# token counts as formats log them -> the GenAI attribute
USAGE_ATTRIBUTES = {
    "input_tokens": "gen_ai.usage.input_tokens",
    "prompt_tokens": "gen_ai.usage.input_tokens",
    "output_tokens": "gen_ai.usage.output_tokens",
    "completion_tokens": "gen_ai.usage.output_tokens",
    "cache_read_input_tokens": "gen_ai.usage.cache_read.input_tokens",
    "cache_creation_input_tokens": "gen_ai.usage.cache_creation.input_tokens",
}
# keys of a normalized event that are the reader's bookkeeping, not the event
_NOT_EXPORTED = frozenset(("raw", "line", "file"))


@dataclass
class Link:
    span_id: bytes
    kind: str  # "substance" or "cause"
    message_id: str

    @property
    def attributes(self) -> dict[str, str]:
        return {"agentview.link": self.kind, "agentview.message_id": _shown(self.message_id)}


@dataclass
class Span:
    """One span, ready for OTLP/JSON (to_json) or the SDK (viewer.export.push)."""

    trace_id: bytes
    span_id: bytes
    parent_id: bytes | None
    name: str
    kind: int
    start: int  # ns since the epoch
    end: int
    attributes: dict[str, Any] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).digest()


def trace_id_of(session_id: str) -> bytes:
    return _digest("trace", session_id)[:16]


def _nanos(value: Any) -> int | None:
    """An ISO 8601 time as ns since the epoch (None: not a time)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def _shown(value: Any) -> str:
    return redact.shown_value(value)


def _usage(event: model.Event) -> dict[str, int]:
    usage = event.get("usage")
    if not isinstance(usage, dict) or "continues" in event:  # a later part of a response: counted on the first
        return {}
    out: dict[str, int] = {}
    for key, attribute in USAGE_ATTRIBUTES.items():
        value = usage.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and attribute not in out:
            out[attribute] = int(value)
    return out


def _exported_event(event: model.Event) -> str:
    """The event as logged (the reader's bookkeeping left out), masked JSON: what reading back restores."""
    kept = {k: v for k, v in event.items() if k not in _NOT_EXPORTED}
    return redact.shown_json(jsonio.answer(kept)).decode()


@dataclass
class _Held:
    """A tool call's span waiting for its result: what building it then needs."""

    position: int
    call: model.LoggedCall
    index: int
    start: int
    synthetic: bool
    parent: bytes | None


class SpanBuilder:
    """Spans of one session, built in file order; `spans(start, stop)` can be called again as the log grows
    (push --follow), each event's span built once. Callers hold the session's lock.

    A tool call's span carries its result. A finished log has it already; a log being written may not yet, so
    `hold_unanswered` keeps such a span back until a later `spans()` call finds the result logged (or
    `unanswered()` lets it go, marked `agentview.unfinished`): sent early, it would go without its result, and
    sent again, twice."""

    def __init__(self, s: SessionIndex, base_time: datetime = BASE_TIME, hold_unanswered: bool = False):
        self.s = s
        self.trace_id = trace_id_of(s.id)
        self.base_ns = int(base_time.timestamp()) * 1_000_000_000 + base_time.microsecond * 1000
        self.agents_sent: set[str] = set()
        self.inputs: dict[str, list[dict]] = {}  # agent -> the messages it got since its last response
        # the latest time a timed event gave, carried to untimed ones after it; before the first, that first
        # (a Claude Code session opens with a system prompt that has no time of its own)
        self.last_ns: int | None = self._first_time()
        self.conversation = _shown(s.id)
        self._created: dict[int, str] = {}
        self._created_for = -1
        self._agent_ids: dict[str, bytes] = {}
        # with hold_unanswered (push --follow): tool calls whose result is not logged yet, by (message id, call
        # index); each is built once, when its result arrives or when let go of (`unanswered`)
        self.hold_unanswered = hold_unanswered
        self.held: dict[tuple[str, int], _Held] = {}
        # labels (agent ids, roles, event types, names) repeat on most spans, texts on a delivery's to each listener
        # and on a tool result's call span: each masked once; a message's span id, which its deliveries link to
        self.text, self._labels = redact.ShownOnce(redact.shown, 256), redact.ShownOnce(_shown, 10_000)
        self._message_spans: dict[str, bytes] = {}
        # (position of a call, call id) -> its execute_tool span, for the result that answers it
        self._call_spans: dict[tuple[int, str], bytes] = {}

    # --- ids and times -------------------------------------------------------------------------

    def span_id(self, *key: str) -> bytes:
        return _digest(self.s.id, *key)[:8]

    def agent_span_id(self, agent_id: str) -> bytes:
        known = self._agent_ids.get(agent_id)
        if known is None:
            known = self._agent_ids[agent_id] = self.span_id("agent", agent_id)
        return known

    def message_span_id(self, message_id: str) -> bytes:
        """The span of a message: an agent's creation is its agent's span, anything else its own."""
        agent_id = self._creations().get(self.s.by_id.get(message_id, -1))
        if agent_id is not None:
            return self.agent_span_id(agent_id)
        known = self._message_spans.get(message_id)
        if known is None:
            if len(self._message_spans) >= 100_000:
                self._message_spans.clear()
            known = self._message_spans[message_id] = self.span_id("message", message_id)
        return known

    def label(self, value: Any) -> str:
        """A short value from the log as shown (_shown), masked once while it repeats."""
        return self._labels(value) if type(value) is str and len(value) <= 64 else _shown(value)

    def _creations(self) -> dict[int, str]:
        """Position of each agent's creation event -> the agent (kept while no agent is added)."""
        if self._created_for != len(self.s.agents):
            self._created = {a.created_position: a.agent_id for a in self.s.agents.values()
                             if a.created_position is not None}
            self._created_for = len(self.s.agents)
        return self._created

    def _own_span_id(self, p: int, event: model.Event) -> bytes:
        """A message id logged twice: the later events get their own spans, keyed by position too."""
        message_id = event["message_id"]
        if self.s.by_id.get(message_id) == p:
            return self.span_id("message", message_id)
        return self.span_id("message", message_id, str(p))

    def call_span_id(self, message_id: str, call: model.LoggedCall, index: int) -> bytes:
        return self.span_id("call", message_id, call.id if call.id is not None else f"#{index}")

    def _first_time(self, look: int = 100) -> int | None:
        """The first time among the session's first events (None: a log without times, like a native one)."""
        for p in range(min(look, self.s.count)):
            stamp = _nanos(self.s.events[p].get("timestamp"))
            if stamp is not None:
                return stamp
        return None

    def time_of(self, p: int, event: model.Event | None = None) -> tuple[int, bool]:
        """When the event at p happened (ns) and whether that time is synthetic (file order on BASE_TIME)."""
        stamp = _nanos((self.s.events[p] if event is None else event).get("timestamp"))
        if stamp is not None:
            self.last_ns = stamp
            return stamp, False
        if self.last_ns is not None:
            return self.last_ns, False
        return self.base_ns + p * STEP_NS, True

    # --- spans ---------------------------------------------------------------------------------

    def spans(self, start: int = 0, stop: int | None = None) -> Iterator[Span]:
        s = self.s
        stop = s.count if stop is None else stop
        self.text.now(), self._labels.now()  # the masking in force now (each call may run under either)
        if self.held:
            yield from self._answered(stop)
        read = s.events.load  # a walk over all: read without filling the cache pages use
        for p in range(start, stop):
            event = read(p)
            agent_id = event.get("agent_id")
            agent = s.agents.get(agent_id) if isinstance(agent_id, str) else None
            if agent is not None and agent_id not in self.agents_sent:
                self.agents_sent.add(agent_id)
                yield self._agent_span(agent, p)
            if agent is not None and agent.created_position == p:
                continue  # the agent's own span says all its creation says
            yield from self._event_spans(p, event)

    def _base(self, agent_id: str, p: int, event: model.Event) -> dict[str, Any]:
        attributes = {"gen_ai.conversation.id": self.conversation, "gen_ai.agent.id": self.label(agent_id),
                      "agentview.message_id": _shown(event.get("message_id")), "agentview.position": p,
                      "agentview.line": self.s.line_numbers[p], "agentview.event": _exported_event(event)}
        return attributes

    def _links(self, event: model.Event) -> list[Link]:
        if "cause" not in event and "substance" not in event:  # most events: nothing to look at
            return []
        links = [Link(self.message_span_id(c), "cause", c) for c in model.causes_of(event)]
        if model.is_delivery(event):
            links.append(Link(self.message_span_id(event["substance"]), "substance", event["substance"]))
        return links

    def _agent_span(self, agent: model.AgentNode, p: int) -> Span:
        s = self.s
        event = s.events[agent.created_position] if agent.created_position is not None else s.events[p]
        start, synthetic = self.time_of(p)
        end = start
        if agent.entries:
            last = agent.entries[-1]
            end = max(start, self.peek_time(last))
        parent, spawn_input = self._spawner(agent)
        if parent is None and agent.parent_id in s.agents:
            parent = self.agent_span_id(agent.parent_id)
        name = _shown(agent.display_name)
        attributes = self._base(agent.agent_id, agent.created_position if agent.created_position is not None else p,
                                event)
        if agent.created_position is None:  # known only from its entries: no creation event to restore
            del attributes["agentview.event"], attributes["agentview.message_id"]
        attributes.update({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
                           "openinference.span.kind": AGENT, "agentview.event_type": "agent_created"})
        if agent.language_model:
            attributes["gen_ai.request.model"] = _shown(agent.language_model)
        if spawn_input is not None:
            attributes["input.value"] = spawn_input
        if synthetic:
            attributes["agentview.time"] = "synthetic"
        links = self._links(event) if agent.created_position is not None else []
        return Span(self.trace_id, self.agent_span_id(agent.agent_id), parent, f"invoke_agent {name}", INTERNAL,
                    start, end, attributes, links)

    def peek_time(self, p: int) -> int:
        """The time of a later event, without moving the carried time."""
        saved = self.last_ns
        try:
            return self.time_of(p)[0]
        finally:
            self.last_ns = saved

    def _spawner(self, agent: model.AgentNode) -> tuple[bytes | None, str | None]:
        """The execute_tool span of the call that created the agent, and that call's arguments (masked)."""
        if agent.cause is None:
            return None, None
        event = self.s.event(agent.cause)
        if event is None:
            return None, None
        call = queries.spawning_call(self.s, agent, event)
        if call is None:
            return None, None
        calls = model.tool_calls(event)
        index = next((i for i, c in enumerate(calls) if c.id == call.id and c.name == call.name), 0)
        return self.call_span_id(agent.cause, call, index), redact.shown(call.arguments_raw)

    def _event_spans(self, p: int, event: model.Event) -> Iterator[Span]:
        s = self.s
        agent_id = event.get("agent_id") if isinstance(event.get("agent_id"), str) else ""
        start, synthetic = self.time_of(p, event)
        attributes = self._base(agent_id, p, event)
        attributes["agentview.event_type"] = self.label(event.get("event_type"))
        if synthetic:
            attributes["agentview.time"] = "synthetic"
        parent = self.agent_span_id(agent_id) if agent_id in s.agents else None
        text = self.text(model.content_of(event))
        role = event.get("role")
        if role is not None:
            attributes["agentview.role"] = self.label(role)
        calls = model.tool_calls(event) if "tool_calls" in event else []
        own = self._own_span_id(p, event)
        entry = event.get("event_type") == model.TRANSCRIPT_ENTRY
        if entry and role == "assistant":
            model_name = event.get("model") or (s.agents[agent_id].language_model if agent_id in s.agents else None)
            shown_model = self.label(model_name) if model_name else ""
            attributes.update({"gen_ai.operation.name": "chat", "openinference.span.kind": LLM,
                               "output.value": text, **_usage(event)})
            if shown_model:
                attributes["gen_ai.request.model"] = shown_model
                attributes["llm.model_name"] = shown_model
            parts: list[dict] = [{"type": "text", "content": text}] if text else []
            parts += [{"type": "tool_call", "id": _shown(c.id) if c.id else None, "name": _shown(c.name),
                       "arguments": redact.shown(c.arguments_raw)} for c in calls]
            attributes["gen_ai.output.messages"] = jsonio.text([{"role": "assistant", "parts": parts}])
            inputs = self.inputs.pop(agent_id, [])
            if inputs:
                attributes["gen_ai.input.messages"] = jsonio.text(inputs)
                attributes["input.value"] = "\n\n".join(part["content"] for m in inputs for part in m["parts"])
            yield Span(self.trace_id, own, parent, f"chat {shown_model}".rstrip(), CLIENT, start, start,
                       attributes, self._links(event))
            for index, call in enumerate(calls):
                if self.hold_unanswered and call.id is not None and not s.result_positions_for_call(p, call.id):
                    self.held[(event["message_id"], index)] = _Held(p, call, index, start, synthetic, parent)
                else:
                    yield self._tool_span(p, event, call, index, start, synthetic, parent)
            return
        attributes["openinference.span.kind"] = CHAIN
        attributes["input.value"] = text
        name = f"message {self.label(role)}" if role is not None else self.label(event.get("event_type"))
        if entry and (role == "tool" or "tool_call_id" in event):  # model.is_tool_result
            call_position = s.call_position_for_result(p)
            known = self._call_spans.pop((call_position, event.get("tool_call_id")), None)
            if known is not None:
                parent = known
            elif call_position is not None:
                call_event = s.events[call_position]
                for index, call in enumerate(model.tool_calls(call_event)):
                    if call.id == event.get("tool_call_id"):
                        parent = self.call_span_id(call_event["message_id"], call, index)
                        break
            attributes["gen_ai.tool.call.id"] = _shown(event.get("tool_call_id"))
        if entry and agent_id:
            self.inputs.setdefault(agent_id, []).append(
                {"role": self.label(role) if role is not None else "user", "parts": [{"type": "text", "content": text}]})
        yield Span(self.trace_id, own, parent, name, INTERNAL, start, start, attributes, self._links(event))

    def _answered(self, stop: int) -> Iterator[Span]:
        """The held tool spans whose result is now logged (before `stop`), built with it."""
        for key, held in list(self.held.items()):
            results = self.s.result_positions_for_call(held.position, held.call.id)
            if results and results[0] < stop:
                del self.held[key]
                yield self._held_span(held)

    def unanswered(self, keys=None) -> Iterator[Span]:
        """Lets go of held tool spans (all, or those of `keys`) as they are: no result, `agentview.unfinished`."""
        self.text.now(), self._labels.now()
        for key in list(self.held if keys is None else keys):
            held = self.held.pop(key, None)
            if held is not None:
                span = self._held_span(held)
                span.attributes["agentview.unfinished"] = True
                yield span

    def _held_span(self, held: _Held) -> Span:
        event = self.s.events[held.position]
        return self._tool_span(held.position, event, held.call, held.index, held.start, held.synthetic, held.parent)

    def _tool_span(self, p: int, event: model.Event, call: model.LoggedCall, index: int, start: int,
                   synthetic: bool, parent: bytes | None) -> Span:
        s = self.s
        name = self.label(call.name)
        attributes: dict[str, Any] = {
            "gen_ai.conversation.id": self.conversation, "gen_ai.agent.id": self.label(event.get("agent_id")),
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.type": "function",
            "gen_ai.tool.call.arguments": redact.shown(call.arguments_raw), "openinference.span.kind": TOOL,
            "tool.name": name, "input.value": redact.shown(call.arguments_raw),
            "agentview.message_id": _shown(event["message_id"]), "agentview.position": p, "agentview.call": index}
        if call.id is not None:
            attributes["gen_ai.tool.call.id"] = _shown(call.id)
        if synthetic:
            attributes["agentview.time"] = "synthetic"
        end = start
        results = s.result_positions_for_call(p, call.id) if call.id is not None else []
        if results:
            result = self.text(model.content_of(s.events[results[0]]))
            attributes["gen_ai.tool.call.result"] = result
            attributes["output.value"] = result
            end = max(start, self.peek_time(results[0]))
        spawned = [a for a in s.spawned.get(event["message_id"], ()) if a in s.agents]
        if spawned:
            attributes["agentview.spawned"] = [_shown(a) for a in spawned]
        span_id = self.call_span_id(event["message_id"], call, index)
        if call.id is not None:  # the parent of its result's span (the first call of an id, as the result finds it)
            self._call_spans.setdefault((p, call.id), span_id)
        return Span(self.trace_id, span_id, parent, f"execute_tool {name}", INTERNAL, start, end, attributes)


# --- OTLP/JSON -------------------------------------------------------------------------------------

def _json_value(value: Any) -> dict:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # OTLP/JSON writes 64-bit integers as strings
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [_json_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _json_attributes(attributes: dict[str, Any]) -> list[dict]:
    return [{"key": k, "value": {"stringValue": v} if type(v) is str else _json_value(v)}
            for k, v in attributes.items()]


def span_json(span: Span) -> dict:
    out = {"traceId": span.trace_id.hex(), "spanId": span.span_id.hex(), "name": span.name, "kind": span.kind,
           "startTimeUnixNano": str(span.start), "endTimeUnixNano": str(max(span.start, span.end)),
           "attributes": _json_attributes(span.attributes), "status": {}}
    if span.parent_id is not None:
        out["parentSpanId"] = span.parent_id.hex()
    if span.links:
        out["links"] = [{"traceId": span.trace_id.hex(), "spanId": link.span_id.hex(),
                         "attributes": _json_attributes(link.attributes)}
                        for link in span.links]
    return out


def resource_attributes(s: SessionIndex) -> dict[str, Any]:
    """The session's resource; `agentview.normalized`: its events carry the keys only the viewer's normalizers add
    (the reader marks them so again, and counts their usage as the session's own reading did)."""
    return {"service.name": "agentview", "agentview.session.id": _shown(s.id), "agentview.session.name": _shown(s.name),
            "agentview.session.path": _shown(s.relpath),
            "agentview.format": _shown(getattr(s.format, "name", s.format)),
            "agentview.normalized": bool(getattr(s.format, "adds_keys", False))}


def requests(s: SessionIndex, base_time: datetime = BASE_TIME, per_request: int = SPANS_PER_REQUEST) -> Iterator[dict]:
    """The session's spans as ExportTraceServiceRequests of at most `per_request` spans each."""
    with s.lock:
        builder = SpanBuilder(s, base_time)
        batch: list[dict] = []
        resource = {"attributes": _json_attributes(resource_attributes(s))}
        for span in builder.spans():
            batch.append(span_json(span))
            if len(batch) >= per_request:
                yield _request(resource, batch)
                batch = []
        if batch or not s.count:
            yield _request(resource, batch)


def _request(resource: dict, spans: list[dict]) -> dict:
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [
        {"scope": {"name": SCOPE}, "spans": spans, "schemaUrl": SCHEMA_URL}], "schemaUrl": SCHEMA_URL}]}


def otlp_json(s: SessionIndex, base_time: datetime = BASE_TIME) -> str:
    """The session as OTLP/JSON: one ExportTraceServiceRequest a line."""
    return "".join(orjson.dumps(r).decode() + "\n" for r in requests(s, base_time))  # plain values only
