"""A real OTLP/HTTP traces receiver for the push tests: a tiny HTTP server on a free loopback port that inflates
and decodes each request with opentelemetry-proto, keeps its spans (with when they arrived), and answers as
told: `status` for every request, or `script`, a list of (status, headers) answered one per request first. A 200
carries `partial` (spans rejected, message) as a partial success when set: protobuf, or JSON with `partial_json`.
`delays` (seconds, one per request, first come first served) hold a request before it is taken, until a later
request has been taken or that long has passed: with several senders, the later request overtakes it, unless the
sender keeps them in order (and then the hold lasts the whole delay)."""

from __future__ import annotations

import gzip
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import wait_for
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (ExportTraceServiceRequest,
                                                                      ExportTraceServiceResponse)


def any_value(value):
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    return getattr(value, kind)


def proto_attributes(items) -> dict:
    return {a.key: any_value(a.value) for a in items}


class Receiver:
    """A tiny OTLP/HTTP traces endpoint: decodes each request, keeps its spans, answers `status`."""

    def __init__(self) -> None:
        self.spans: list[dict] = []
        self.resources: list[dict] = []
        self.headers: list[dict] = []
        self.status = 200
        self.script: list[tuple[int, dict]] = []
        self.requests = 0
        self.partial: tuple[int, str] | None = None
        self.partial_json = False
        self.delays: list[float] = []
        self.lock = threading.Lock()
        self.taken = threading.Condition(self.lock)  # notified as each request is taken
        self.requests_taken = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                with receiver.lock:
                    delay = receiver.delays.pop(0) if receiver.delays else 0
                    before = receiver.requests_taken
                    if delay:
                        receiver.taken.wait_for(lambda: receiver.requests_taken > before, timeout=delay)
                with receiver.lock:
                    receiver.requests += 1
                    status, headers = receiver.script.pop(0) if receiver.script else (receiver.status, {})
                    if status != 200:
                        receiver.requests_taken += 1
                        receiver.taken.notify_all()
                if status != 200:
                    self.send_response(status)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                arrived = time.monotonic()
                with receiver.lock:
                    receiver.headers.append({k.lower(): v for k, v in self.headers.items()})
                    for rs in request.resource_spans:
                        receiver.resources.append(proto_attributes(rs.resource.attributes))
                        for ss in rs.scope_spans:
                            for sp in ss.spans:
                                receiver.spans.append({
                                    "traceId": sp.trace_id.hex(), "spanId": sp.span_id.hex(),
                                    "parentSpanId": sp.parent_span_id.hex() or None, "name": sp.name,
                                    "kind": sp.kind, "start": sp.start_time_unix_nano, "end": sp.end_time_unix_nano,
                                    "attributes": proto_attributes(sp.attributes), "arrived": arrived,
                                    "links": [(l.span_id.hex(), proto_attributes(l.attributes)) for l in sp.links]})
                    receiver.requests_taken += 1
                    receiver.taken.notify_all()
                answer, kind = ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf"
                if receiver.partial is not None:
                    rejected, message = receiver.partial
                    if receiver.partial_json:
                        said = {"partialSuccess": {"rejectedSpans": str(rejected), "errorMessage": message}}
                        answer, kind = json.dumps(said).encode(), "application/json"
                    else:
                        reply = ExportTraceServiceResponse()
                        reply.partial_success.rejected_spans = rejected
                        reply.partial_success.error_message = message
                        answer = reply.SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def wait_for(self, count: int, seconds: float = 30) -> None:
        wait_for(lambda: len(self.spans) >= count, timeout=seconds)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def stop(process) -> str:
    """Stop a `push --follow` the way Ctrl-C would end it (SIGTERM); what it wrote to stderr."""
    import signal

    process.send_signal(signal.SIGTERM)
    return process.communicate(timeout=20)[1]


def assert_clean_exit(process, stderr: str) -> None:
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr
