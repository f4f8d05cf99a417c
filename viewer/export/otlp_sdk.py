"""viewer.export.otlp spans as the OpenTelemetry SDK's finished spans (ReadableSpan): how `agentview push` sent them
before viewer.export.otlp_wire wrote the protobuf itself. Kept as the reference: tests/test_otlp_wire.py checks that
the wire bytes are what the SDK's encoder makes of these spans, and benchmarks/push_rate.py measures the old
path beside the new one. Needs the SDK (the optional extra `agentview[otlp]`)."""

from __future__ import annotations

from viewer.index.session_index import SessionIndex

from . import otlp


class Converter:
    """viewer.export.otlp spans as the SDK's finished spans, one Resource per session."""

    def __init__(self) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import ReadableSpan
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope
        from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags

        self.Resource, self.ReadableSpan, self.Link, self.SpanContext = Resource, ReadableSpan, Link, SpanContext
        self.scope = InstrumentationScope(otlp.SCOPE, None, otlp.SCHEMA_URL)
        self.kinds = {otlp.INTERNAL: SpanKind.INTERNAL, otlp.CLIENT: SpanKind.CLIENT}
        self.sampled = TraceFlags(TraceFlags.SAMPLED)

    def resource(self, s: SessionIndex):
        return self.Resource(otlp.resource_attributes(s), otlp.SCHEMA_URL)

    def _context(self, trace_id: bytes, span_id: bytes):
        return self.SpanContext(int.from_bytes(trace_id, "big"), int.from_bytes(span_id, "big"), is_remote=False,
                                trace_flags=self.sampled)

    def span(self, span: otlp.Span, resource):
        parent = self._context(span.trace_id, span.parent_id) if span.parent_id is not None else None
        links = [self.Link(self._context(span.trace_id, link.span_id), link.attributes) for link in span.links]
        return self.ReadableSpan(name=span.name, context=self._context(span.trace_id, span.span_id), parent=parent,
                                 resource=resource, attributes=dict(span.attributes), links=links,
                                 kind=self.kinds[span.kind], start_time=span.start, end_time=max(span.start, span.end),
                                 instrumentation_scope=self.scope)


def encoded(s: SessionIndex, spans: list[otlp.Span]) -> bytes:
    """The spans as the SDK's OTLP exporter would send them, in one request."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    converter = Converter()
    resource = converter.resource(s)
    return encode_spans([converter.span(span, resource) for span in spans]).SerializeToString()
