"""OTLP/JSON trace files: one ExportTraceServiceRequest a line, as a Collector's file exporter and
`agentview export --format otlp` write them.

A file is one session, as everywhere else (several traces in it are kept together, with a `several_traces`
problem). agentview's own export carries each event as logged, which comes back exactly; spans of other programs
(GenAI conventions, OpenInference) are read as far as their attributes allow: agent, chat and tool spans, links.
"""

from __future__ import annotations

from datetime import datetime, timezone

import orjson

from viewer.core import failures, jsonio, model
from viewer.core.model import Event

from .base import Normalizer, as_dict, tool_call

AGENT_KINDS = ("invoke_agent", "create_agent")
CHAT_KINDS = ("chat", "text_completion", "generate_content")


def _normalized(resource: dict) -> bool:
    """Whether a normalizer made an own export's events (`agentview.normalized`, the exporter's word): they are given
    back the `raw` key (None) such events carry, by which their usage is counted. An export written before that
    attribute names only its format: every format but the seed's native lines marked its events so (as `adds_keys`
    in the registry says), so such a file is read as normalized unless it names "native"."""
    flag = resource.get("agentview.normalized")
    if isinstance(flag, bool):
        return flag
    return resource.get("agentview.format") != "native"


def looks_like(record: dict) -> bool:
    return isinstance(record.get("resourceSpans"), list)


def _value(value: dict):
    """An OTLP/JSON AnyValue as a Python value."""
    value = as_dict(value)
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return None
    if "arrayValue" in value:
        return [_value(v) for v in as_dict(value["arrayValue"]).get("values") or []]
    if "kvlistValue" in value:
        return _attributes(as_dict(value["kvlistValue"]).get("values"))
    return None


def _attributes(items) -> dict:
    if not isinstance(items, list):
        return {}
    return {item["key"]: _value(item.get("value")) for item in items
            if isinstance(item, dict) and isinstance(item.get("key"), str)}


def _int(value) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _iso(nanos: int) -> str | None:
    if nanos <= 0:
        return None
    moment = datetime.fromtimestamp(nanos // 1_000_000_000, timezone.utc).replace(microsecond=nanos // 1000 % 1_000_000)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _error_of(raw: dict, attributes: dict) -> str | None:
    """What a span says went wrong: its status ERROR (code 2, as a number or its enum's name) with its message, or
    an `error.type` attribute (the GenAI conventions); None when it did not fail."""
    status = as_dict(raw.get("status"))
    code = status.get("code")
    if code in (2, "2", "STATUS_CODE_ERROR"):
        message = status.get("message")
        return message if isinstance(message, str) and message else str(attributes.get("error.type") or "error")
    kind = attributes.get("error.type")
    return kind if isinstance(kind, str) and kind else None


def _json(text) -> object:
    if not isinstance(text, str):
        return text
    try:
        return jsonio.loads(text)
    except orjson.JSONDecodeError:
        return None


class Span:
    __slots__ = ("id", "trace", "parent", "name", "start", "attributes", "links", "line", "resource", "error")

    def __init__(self, raw: dict, line: int, resource: dict) -> None:
        self.id = raw["spanId"]
        self.trace = raw.get("traceId") if isinstance(raw.get("traceId"), str) else ""
        parent = raw.get("parentSpanId")
        self.parent = parent if isinstance(parent, str) and parent else None
        self.name = raw.get("name") if isinstance(raw.get("name"), str) else ""
        self.start = _int(raw.get("startTimeUnixNano"))
        self.attributes = _attributes(raw.get("attributes"))
        self.links = [(link.get("spanId"), _attributes(link.get("attributes")))
                      for link in raw.get("links") or [] if isinstance(link, dict)]
        self.line = line
        self.resource = resource
        self.error = _error_of(raw, self.attributes)

    @property
    def operation(self) -> str:
        operation = self.attributes.get("gen_ai.operation.name")
        if isinstance(operation, str):
            return operation
        kind = self.attributes.get("openinference.span.kind")
        return {"AGENT": "invoke_agent", "LLM": "chat", "TOOL": "execute_tool"}.get(kind, self.name.split(" ")[0])


class OtlpNormalizer(Normalizer):
    """Spans are gathered as records arrive and made events at the flush (a parent may come after its child)."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[Span] = []
        self.by_id: dict[str, Span] = {}
        self.heard: dict[str, set] = {}  # agent -> (role, text) of the input messages it was given already
        self.tool_spans: set = set()
        self.title = None
        self.own_traces: dict[str, int] = {}  # trace id -> its place among the traces of agentview's own spans

    def time_of(self, record: dict) -> object:
        return None  # one file: its order

    def feed(self, record: dict, line: int, member: dict, source: tuple | None = None) -> list[Event]:
        resources = record.get("resourceSpans")
        if not isinstance(resources, list):
            self.problems.append(("bad_otlp", f"line {line}: not an ExportTraceServiceRequest (no resourceSpans list)"))
            return []
        bad = 0
        for rs in resources:
            resource = _attributes(as_dict(as_dict(rs).get("resource")).get("attributes"))
            for ss in as_dict(rs).get("scopeSpans") or []:
                for raw in as_dict(ss).get("spans") or []:
                    if not isinstance(raw, dict) or not isinstance(raw.get("spanId"), str) or not raw["spanId"]:
                        bad += 1
                        continue
                    if raw["spanId"] in self.by_id:
                        continue  # sent twice (push --follow after an export, or a retry): one span
                    span = Span(raw, line, resource)
                    self.by_id[span.id] = span
                    self.spans.append(span)
        if bad:
            self.problems.append(("bad_otlp", f"line {line}: {bad} span(s) without a spanId, left out"))
        return []

    def flush(self) -> list[Event]:
        spans, self.spans = self.spans, []
        own = [s for s in spans if isinstance(s.attributes.get("agentview.event"), str)]
        foreign = [s for s in spans if s.operation in AGENT_KINDS + CHAT_KINDS + ("execute_tool",)
                   and not isinstance(s.attributes.get("agentview.event"), str)
                   and not isinstance(s.attributes.get("agentview.position"), int)]
        events = self._own(own)
        events += self._foreign(foreign)
        return events

    # --- agentview's own export: the events as logged ---

    def _own(self, spans: list[Span]) -> list[Event]:
        events = []
        # one trace is one session; a file holding several (exports put in one file) keeps each whole, in the
        # order they first appear, rather than mixing their events by position (see the module's docstring)
        traces = self.own_traces
        known = len(traces)
        for span in spans:
            traces.setdefault(span.trace, len(traces))
        if known < 2 <= len(traces):  # said once, when the second trace arrives
            self.problems.append(("several_traces", "more than one trace in one file, read as one session, each "
                                  "trace's events together: give each trace a file of its own to see each alone"))
        for span in sorted(spans, key=lambda s: (traces[s.trace], _int(s.attributes.get("agentview.position")))):
            event = _json(span.attributes["agentview.event"])
            if not isinstance(event, dict) or not isinstance(event.get("message_id"), str):
                self.problems.append(("bad_otlp", f"line {span.line}: span {span.id}: agentview.event is not an event"))
                continue
            if _normalized(span.resource):
                event.setdefault("raw", None)
            event["line"] = span.line
            if not self.title and isinstance(span.resource.get("agentview.session.name"), str):
                self.title = span.resource["agentview.session.name"]
            events.append(event)
        return events

    # --- spans of other programs ---

    def _agent_of(self, span: Span) -> Span | None:
        """The nearest invoke_agent span above a span (itself excluded)."""
        seen = 0
        current = self.by_id.get(span.parent) if span.parent else None
        while current is not None and seen < 10_000:
            if current.operation in AGENT_KINDS:
                return current
            current = self.by_id.get(current.parent) if current.parent else None
            seen += 1
        return None

    def _agent_id(self, span: Span | None) -> str:
        if span is None:
            return "agent"
        agent_id = span.attributes.get("gen_ai.agent.id")
        return agent_id if isinstance(agent_id, str) and agent_id else f"agent-{span.id}"

    def _links(self, span: Span, event: Event) -> None:
        causes = []
        for span_id, attributes in span.links:
            target = self.by_id.get(span_id)
            message_id = attributes.get("agentview.message_id") or (target.id if target else span_id)
            if attributes.get("agentview.link") == "substance" and isinstance(message_id, str):
                event["substance"] = message_id
            elif attributes.get("agentview.link") == "cause" and isinstance(message_id, str):
                causes.append(message_id)
        if causes:
            event["cause"] = causes[0] if len(causes) == 1 else causes

    def _foreign(self, spans: list[Span]) -> list[Event]:
        events: list[Event] = []
        order = {s.id: i for i, s in enumerate(spans)}
        # calls that have execute_tool spans are told by those, not again by the response that made them
        self.tool_spans = {s.attributes.get("gen_ai.tool.call.id") for s in spans if s.operation == "execute_tool"}
        for span in sorted(spans, key=lambda s: (s.start, s.operation not in AGENT_KINDS, order[s.id])):
            agent_span = span if span.operation in AGENT_KINDS else self._agent_of(span)
            agent = self._agent_id(agent_span)
            base = {"agent_id": agent, "timestamp": _iso(span.start), "line": span.line, "raw": None}
            if span.operation in AGENT_KINDS:
                events.append(self._agent_created(span, agent, base))
            elif span.operation == "execute_tool":
                events += self._tool(span, base)
            else:
                events += self._chat(span, agent, base)
        return events

    def _agent_created(self, span: Span, agent: str, base: dict) -> Event:
        a = span.attributes
        event = {**base, "message_id": span.id, "event_type": model.AGENT_CREATED}
        name = a.get("gen_ai.agent.name") or span.name.removeprefix("invoke_agent ").strip()
        if isinstance(name, str) and name:
            event["name"] = name
        if isinstance(a.get("gen_ai.request.model"), str):
            event["language_model"] = a["gen_ai.request.model"]
        parent = self.by_id.get(span.parent) if span.parent else None
        if parent is not None and parent.operation == "execute_tool":
            event["cause"] = parent.id  # the tool call entry made of that span
            call_id = parent.attributes.get("gen_ai.tool.call.id")
            event["spawn_call_id"] = call_id if isinstance(call_id, str) else parent.id
        elif parent is not None:
            above = parent if parent.operation in AGENT_KINDS else self._agent_of(parent)
            if above is not None:
                event["cause"] = above.id
        return event

    def _tool(self, span: Span, base: dict) -> list[Event]:
        a = span.attributes
        name = a.get("gen_ai.tool.name") or a.get("tool.name") or span.name.removeprefix("execute_tool ").strip()
        call_id = a.get("gen_ai.tool.call.id") if isinstance(a.get("gen_ai.tool.call.id"), str) else span.id
        arguments = a.get("gen_ai.tool.call.arguments", a.get("input.value"))
        parsed = _json(arguments) if isinstance(arguments, str) else arguments
        call = {**base, "message_id": span.id, "event_type": model.TRANSCRIPT_ENTRY, "role": "assistant",
                "tool_calls": [tool_call(call_id, str(name or "tool"), parsed if parsed is not None else arguments)]}
        self._links(span, call)
        out = [call]
        answer = a.get("gen_ai.tool.call.result", a.get("output.value"))
        if answer is None and span.error is not None:
            answer = span.error  # a failed call's result is its error
        if answer is not None:
            out.append({**base, "message_id": f"{span.id}:result", "event_type": model.TRANSCRIPT_ENTRY,
                        "role": "tool", "tool_call_id": call_id, "name": str(name or "tool"),
                        "content": answer if isinstance(answer, str) else jsonio.text(answer)})
            # marked either way: the words of seed-000's failed results (OTLP_JSON's failure_texts) are for the
            # events of agentview's own exports, read back as they were logged
            out[-1]["is_error"] = span.error is not None
            if span.error is not None:
                out[-1]["failure"] = failures.TOOL_ERROR
        return out

    def _chat(self, span: Span, agent: str, base: dict) -> list[Event]:
        a = span.attributes
        out: list[Event] = []
        heard = self.heard.setdefault(agent, set())
        inputs = _json(a.get("gen_ai.input.messages"))
        for i, message in enumerate(inputs if isinstance(inputs, list) else []):
            message = as_dict(message)
            role, text = message.get("role"), _parts_text(message.get("parts"))
            if not isinstance(role, str) or (role, text) in heard or role == "assistant":
                continue
            heard.add((role, text))
            out.append({**base, "message_id": f"{span.id}:in{i}", "event_type": model.TRANSCRIPT_ENTRY,
                        "role": role, "content": text})
        outputs = _json(a.get("gen_ai.output.messages"))
        text, calls = "", []
        if isinstance(outputs, list) and outputs:
            for message in outputs:
                parts = as_dict(message).get("parts")
                text += _parts_text(parts)
                calls += [tool_call(p.get("id"), str(p.get("name") or "tool"), p.get("arguments"))
                          for p in parts or [] if isinstance(p, dict) and p.get("type") == "tool_call"
                          and (p.get("id") is None or p.get("id") not in self.tool_spans)]
        elif isinstance(a.get("output.value"), str):
            text = a["output.value"]
        event = {**base, "message_id": span.id, "event_type": model.TRANSCRIPT_ENTRY, "role": "assistant",
                 "content": text}
        if calls:
            event["tool_calls"] = calls
        chosen = a.get("gen_ai.response.model") or a.get("gen_ai.request.model") or a.get("llm.model_name")
        if isinstance(chosen, str):
            event["model"] = chosen
        usage = {k: a[f"gen_ai.usage.{k}"] for k in ("input_tokens", "output_tokens")
                 if isinstance(a.get(f"gen_ai.usage.{k}"), int)}
        if usage:
            event["usage"] = usage
        if span.error is not None:  # the model's API failed
            event["failure"] = failures.API_ERROR
            event["content"] = event["content"] or span.error
        self._links(span, event)
        out.append(event)
        return out


def _parts_text(parts) -> str:
    if isinstance(parts, str):
        return parts
    texts = [p.get("content") for p in parts or [] if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(t for t in texts if isinstance(t, str))
