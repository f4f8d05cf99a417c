"""`agentview push`: sessions to a trace store over OTLP/HTTP protobuf (the optional extra `agentview[otlp]`).

The spans are viewer.otlp's, handed to the OpenTelemetry SDK as finished spans (ReadableSpan) and sent
by its OTLP/HTTP exporter. Their ids are deterministic, so `--follow` sends each event's span once, as the
event arrives, and a store that deduplicates keeps one copy of a session pushed twice.

A store that cannot be reached or refuses the spans stops the push with a PushError saying so (the
command prints it and exits non-zero); the exporter's own log lines become that message, not noise.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Iterable

from . import otlp
from .index import SessionIndex
from .library import Library

BATCH = 1000  # spans a request
POLL_SECONDS = 0.25  # how often --follow looks for new events (well inside its 2 s promise)
EXTRA_MISSING = ("agentview push needs the OpenTelemetry SDK and OTLP exporter: "
                 "pip install 'agentview[otlp]'")


class PushError(Exception):
    """The spans could not be sent: the message says why, for a person."""


def _sdk():
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import ReadableSpan
        from opentelemetry.sdk.trace.export import SpanExportResult
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope
        from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags
    except ImportError as error:
        raise PushError(EXTRA_MISSING) from error
    return Resource, ReadableSpan, SpanExportResult, InstrumentationScope, Link, SpanContext, SpanKind, TraceFlags


class Converter:
    """viewer.otlp spans as the SDK's finished spans, one Resource per session."""

    def __init__(self) -> None:
        (self.Resource, self.ReadableSpan, _, InstrumentationScope, self.Link, self.SpanContext, SpanKind,
         self.TraceFlags) = _sdk()
        self.scope = InstrumentationScope(otlp.SCOPE, None, otlp.SCHEMA_URL)
        self.kinds = {otlp.INTERNAL: SpanKind.INTERNAL, otlp.CLIENT: SpanKind.CLIENT}
        self.sampled = self.TraceFlags(self.TraceFlags.SAMPLED)

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


class _Captured(logging.Handler):
    """The exporter's log lines while it sends: the reason a push failed, said once, by us."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            message = record.getMessage()
            if message not in self.messages:
                self.messages.append(message)


@contextlib.contextmanager
def _captured_exporter_log():
    logger = logging.getLogger("opentelemetry.exporter")
    handler = _Captured()
    logger.addHandler(handler)
    propagate, logger.propagate = logger.propagate, False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


class HttpStore:
    """The SDK's OTLP/HTTP protobuf exporter for one endpoint (the full URL, e.g. http://host:4318/v1/traces),
    watching the store's answers so a failure can be told as the store said it."""

    def __init__(self, endpoint: str, headers: dict[str, str] | None = None, timeout: float = 10.0):
        try:
            import requests
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError as error:
            raise PushError(EXTRA_MISSING) from error
        self.endpoint = endpoint
        self.answer = None  # the store's last answer (a requests.Response)
        session = requests.Session()
        session.hooks["response"].append(self._answered)
        self.exporter = OTLPSpanExporter(endpoint=endpoint, headers=headers or {}, timeout=timeout, session=session)

    def _answered(self, response, *args, **kwargs) -> None:
        self.answer = response

    def export(self, spans):
        self.answer = None
        return self.exporter.export(spans)

    def shutdown(self) -> None:
        self.exporter.shutdown()

    def explain(self, log: list[str]) -> str:
        """Why the last export failed: the store's status and what it said, or why it could not be reached."""
        answer = self.answer
        if answer is not None and answer.status_code >= 400:
            said = " ".join(answer.text.split())[:200] if answer.text else ""
            return (f"{self.endpoint} answered {answer.status_code} {answer.reason or ''}".rstrip()
                    + (f": {said}" if said else "") + (" (still, after retries)" if answer.status_code in RETRIED else ""))
        for message in log:
            refused = re.search(r"\[Errno -?\d+\] ([^\"')]+)", message)
            if refused or "NewConnectionError" in message or "ConnectionError" in message:
                why = refused.group(1).strip() if refused else "no connection"
                return f"cannot reach {self.endpoint}: {why} (is the store running, and is this its OTLP/HTTP URL?)"
            if "timed out" in message.lower() or "ReadTimeout" in message:
                return f"{self.endpoint} did not answer in time"
        return f"{self.endpoint} did not take the spans: " + ("; ".join(log) or "the exporter gave no reason")


RETRIED = frozenset((429, 502, 503, 504))  # statuses the SDK retries until its timeout


@dataclass
class _Progress:
    """Where a session's push got to: the builder (it remembers what it sent) and the next position."""

    epoch: int
    builder: otlp.SpanBuilder
    resource: object
    sent: int = 0


@dataclass
class Pusher:
    """Sends the new events of sessions, each once; `where` names the store in messages."""

    exporter: object
    where: str = "the trace store"
    base_time: datetime = otlp.BASE_TIME
    converter: Converter = field(default_factory=Converter)
    progress: dict[str, _Progress] = field(default_factory=dict)
    spans_sent: int = 0
    events_sent: int = 0

    def push(self, sessions: Iterable[SessionIndex]) -> int:
        """Send what arrived since the last call; the number of spans sent."""
        before = self.spans_sent
        for s in sessions:
            with s.lock:
                progress = self.progress.get(s.id)
                if progress is None or progress.epoch != s.epoch:  # new, or rewritten: from its start again
                    progress = self.progress[s.id] = _Progress(s.epoch, otlp.SpanBuilder(s, self.base_time),
                                                               self.converter.resource(s))
                stop = s.count
                spans = [self.converter.span(span, progress.resource)
                         for span in progress.builder.spans(progress.sent, stop)]
                events = stop - progress.sent
                progress.sent = stop
            for start in range(0, len(spans), BATCH):
                self._send(spans[start:start + BATCH])
            self.events_sent += events
        return self.spans_sent - before

    def _send(self, spans: list) -> None:
        from opentelemetry.sdk.trace.export import SpanExportResult

        with _captured_exporter_log() as log:
            try:
                result = self.exporter.export(spans)
            except Exception as error:  # an exporter that raises instead of answering FAILURE
                raise PushError(f"could not send spans to {self.where}: {error}") from error
        if result is not SpanExportResult.SUCCESS:
            explain = getattr(self.exporter, "explain", None)
            if explain is not None:
                raise PushError(explain(log.messages))
            why = "; ".join(log.messages) or "the exporter gave no reason"
            raise PushError(f"{self.where} did not take the spans: {why}")
        self.spans_sent += len(spans)


def sessions_at(target: str) -> tuple[Library, Callable[[], list[SessionIndex]]]:
    """A folder's sessions, or one session file (with its sub-agent files): read now and again on each call."""
    path = os.path.abspath(target)
    if os.path.isdir(path):
        library = Library(path)

        def read() -> list[SessionIndex]:
            library.scan()
            return [s for s in library.listing() if s.count]
        return library, read
    if not os.path.isfile(path):
        raise PushError(f"{target} is neither a session file nor a folder")
    library = Library(os.path.dirname(path), follow_symlinks=True)

    def read_one() -> list[SessionIndex]:
        session = library.open_file(path)
        return [session] if session is not None else []
    return library, read_one


def run(target: str, exporter, where: str, follow: bool = False, base_time: datetime = otlp.BASE_TIME,
        stop: Callable[[], bool] = lambda: False, poll: float = POLL_SECONDS) -> Pusher:
    """Push a folder or a session; with `follow`, keep sending new events until `stop()` says so."""
    _, read = sessions_at(target)
    pusher = Pusher(exporter, where, base_time)
    pusher.push(read())
    while follow and not stop():
        time.sleep(poll)
        pusher.push(read())
    return pusher
