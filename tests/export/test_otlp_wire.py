"""viewer/otlp_wire.py: the protobuf `agentview push` sends is, byte for byte, what the OpenTelemetry SDK's own
encoder makes of the same spans (viewer/otlp_sdk.py, the old path), for every sample; requests are cut at
their byte budget; values of every kind decode as they were."""

from __future__ import annotations

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from conftest import SAMPLES
from viewer.export import otlp, otlp_sdk, otlp_wire
from viewer.library.library import Library
from viewer.core.redact import masking
from viewer.reads.session_viewer import load_index


def sample_sessions():
    library = Library(SAMPLES)
    library.scan()
    return library.listing()


SESSIONS = sample_sessions()


def spans_of(s) -> list[otlp.Span]:
    with s.lock:
        return list(otlp.SpanBuilder(s).spans())


def decoded(body: bytes) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    return request


@pytest.mark.parametrize("s", SESSIONS, ids=[s.relpath for s in SESSIONS])
def test_the_bytes_are_the_sdk_encoders_bytes(s):
    with masking(True):
        spans = spans_of(s)
        encoder = otlp_wire.Encoder()
        ours = otlp_wire.request(encoder.resource(otlp.resource_attributes(s)), [encoder.span(sp) for sp in spans])
        theirs = otlp_sdk.encoded(s, spans)
    assert decoded(ours) == decoded(theirs)
    assert ours == theirs  # the same field order too: nothing a strict reader could tell apart


def test_a_second_encoding_from_the_caches_is_the_same():
    s = load_index(SAMPLES / "research_team.jsonl")
    with masking(True):
        spans = spans_of(s)
    encoder = otlp_wire.Encoder()
    first = [encoder.span(sp) for sp in spans]
    assert [encoder.span(sp) for sp in spans] == first
    assert [otlp_wire.Encoder().span(sp) for sp in spans] == first


def test_requests_keep_to_their_byte_budget_and_lose_no_span():
    s = load_index(SAMPLES / "research_team.jsonl")
    with masking(True):
        spans = spans_of(s)
    encoder = otlp_wire.Encoder()
    resource = encoder.resource(otlp.resource_attributes(s))
    encoded = [encoder.span(sp) for sp in spans]
    budget = 20_000
    assert max(map(len, encoded)) < budget  # so that every request can keep to it
    cut = list(otlp_wire.requests(resource, encoded, max_bytes=budget))
    assert len(cut) > 5
    got = []
    for body, count in cut:
        assert len(body) <= budget + len(resource) + 200  # the spans within the budget; the envelope beside them
        spans_here = decoded(body).resource_spans[0].scope_spans[0].spans
        assert len(spans_here) == count
        got += [sp.span_id for sp in spans_here]
    assert got == [sp.span_id for sp in spans]
    assert [count for _, count in otlp_wire.requests(resource, encoded, max_spans=100)][:2] == [100, 100]


def test_a_span_bigger_than_the_budget_goes_alone():
    encoder = otlp_wire.Encoder()
    resource = encoder.resource({"service.name": "x"})
    small = encoder.span(otlp.Span(b"t" * 16, b"s" * 8, None, "small", otlp.INTERNAL, 1, 2))
    big = encoder.span(otlp.Span(b"t" * 16, b"b" * 8, None, "big", otlp.INTERNAL, 1, 2, {"v": "x" * 5000}))
    assert [count for _, count in otlp_wire.requests(resource, [small, big, small], max_bytes=1000)] == [1, 1, 1]


def test_values_of_every_kind_decode_as_they_were():
    long_text = "héllo \U0001F600 " * 2000  # past the pair cache, and past a two-byte length
    attributes = {"s": "short", "long": long_text, "i": 7, "neg": -3, "big": 2**62, "f": 1.5, "yes": True,
                  "no": False, "list": ["a", "b"], "empty": ""}
    span = otlp.Span(bytes(range(16)), bytes(range(8)), bytes(range(8, 16)), "näme", otlp.CLIENT, 10, 20, attributes,
                     [otlp.Link(b"\x01" * 8, "cause", "m1")])
    encoder = otlp_wire.Encoder()
    body = otlp_wire.request(encoder.resource({"service.name": "agentview"}), [encoder.span(span)])
    got = decoded(body).resource_spans[0].scope_spans[0].spans[0]
    values = {a.key: a.value for a in got.attributes}
    assert values["s"].string_value == "short" and values["long"].string_value == long_text
    assert values["empty"].WhichOneof("value") == "string_value"
    assert (values["i"].int_value, values["neg"].int_value, values["big"].int_value) == (7, -3, 2**62)
    assert values["f"].double_value == 1.5
    assert values["yes"].bool_value is True and values["no"].WhichOneof("value") == "bool_value"
    assert [v.string_value for v in values["list"].array_value.values] == ["a", "b"]
    assert (got.name, got.kind, got.start_time_unix_nano, got.end_time_unix_nano) == ("näme", otlp.CLIENT, 10, 20)
    assert got.parent_span_id == bytes(range(8, 16))
    assert {a.key: a.value.string_value for a in got.links[0].attributes} == {"agentview.link": "cause",
                                                                               "agentview.message_id": "m1"}
