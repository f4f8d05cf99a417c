"""`agentview push`: sessions to a trace store over OTLP/HTTP protobuf.

The spans of viewer.export.otlp, encoded by otlp_wire and sent by otlp_http; no OpenTelemetry package is needed.
Under `--follow` each event's span goes once as it arrives (an agent's span again as it grows, otlp_agents), a
session's requests in order, and a tool call's span waits for its result (HOLD_SECONDS at most). A store that
cannot be reached or refuses the spans stops the push with a PushError.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain
from typing import Callable, Iterable, Iterator

from viewer.index.session_index import SessionIndex
from viewer.library.library import Library
from viewer.library.one_file import sessions_of_file

from . import otlp, otlp_agents, otlp_wire
from .otlp_http import BackgroundSender, HttpStore, PushError

__all__ = ["HttpStore", "PushError", "Pusher", "run", "sessions_at"]

POLL_SECONDS = 0.25  # how often --follow looks for new events (well inside its 2 s promise)
HOLD_SECONDS = 300.0  # how long --follow keeps a tool call's span waiting for its result


@dataclass
class _Progress:
    """Where a session's push got to: the builder (it remembers what it sent), the encoded resource, the next
    position, and since when each held tool span waits (monotonic seconds)."""

    epoch: int
    builder: otlp.SpanBuilder
    resource: bytes
    agents: otlp_agents.GrowingAgents
    sent: int = 0
    held_since: dict = field(default_factory=dict)


@dataclass
class Pusher:
    """Sends the new events of sessions, each once, through a store (anything with `send(request_bytes)`)."""

    store: object
    base_time: datetime = otlp.BASE_TIME
    follow: bool = False  # hold tool spans until their result (see the module's docstring)
    # each session's requests reach the store in the order they were made (None: when following; see
    # BackgroundSender): a one-off push sends every span once, so it may let two requests cross
    ordered: bool | None = None
    hold_seconds: float = HOLD_SECONDS
    resend_seconds: float = otlp_agents.RESEND_SECONDS  # with follow: how often a growing agent's span goes again
    max_request_bytes: int = otlp_wire.MAX_REQUEST_BYTES
    progress: dict[str, _Progress] = field(default_factory=dict)
    encoder: otlp_wire.Encoder = field(default_factory=otlp_wire.Encoder)
    spans_sent: int = 0
    events_sent: int = 0

    def __post_init__(self) -> None:
        if self.ordered is None:
            self.ordered = self.follow

    def push(self, sessions: Iterable[SessionIndex]) -> int:
        """Send what arrived since the last call (with `follow`, and the tool spans whose result came or whose
        wait is over); the number of spans sent."""
        before = self.spans_sent
        sender = BackgroundSender(self.store, ordered=self.ordered)
        try:
            for s in sessions:
                with s.lock:
                    progress = self._progress_of(s)
                    stop = s.count
                    self._send(sender, progress.resource, self._new_spans(progress, stop), s.id)
                    self.events_sent += stop - progress.sent
                    progress.sent = stop
            sender.wait()
        finally:
            sender.close()
        return self.spans_sent - before

    def finish(self) -> int:
        """Send every tool span still waiting for its result, marked unfinished, and the last copy of each agent
        span that grew since its last one (the push is ending)."""
        before = self.spans_sent
        sender = BackgroundSender(self.store, ordered=self.ordered)
        try:
            for session_id, progress in self.progress.items():
                with progress.builder.s.lock:
                    last = chain(progress.builder.unanswered(), progress.agents.grown(progress.sent, final=True))
                    self._send(sender, progress.resource, last, session_id)
                progress.held_since.clear()
            sender.wait()
        finally:
            sender.close()
        return self.spans_sent - before

    def _progress_of(self, s: SessionIndex) -> _Progress:
        progress = self.progress.get(s.id)
        if progress is None or progress.epoch != s.epoch:  # new, or rewritten: from its start again
            builder = otlp.SpanBuilder(s, self.base_time, hold_unanswered=self.follow)
            progress = self.progress[s.id] = _Progress(s.epoch, builder,
                                                       self.encoder.resource(otlp.resource_attributes(s)),
                                                       otlp_agents.GrowingAgents(builder, self.resend_seconds))
        return progress

    def _new_spans(self, progress: _Progress, stop: int) -> Iterator[otlp.Span]:
        """The spans of the events before `stop` not sent yet, then (with `follow`) the held tool spans whose wait
        is over, and the copies of agent spans that grew: one stream, so they go in order, in as few requests as
        they fit."""
        if not self.follow:
            yield from progress.builder.spans(progress.sent, stop)
            return
        yield from progress.agents.watch(progress.builder.spans(progress.sent, stop))
        yield from self._waited_too_long(progress)
        yield from progress.agents.grown(stop)

    def _waited_too_long(self, progress: _Progress) -> Iterator[otlp.Span]:
        now = time.monotonic()
        held = progress.builder.held
        for key in [k for k in progress.held_since if k not in held]:  # answered and sent
            del progress.held_since[key]
        for key in held:
            progress.held_since.setdefault(key, now)
        late = [key for key, since in progress.held_since.items() if now - since >= self.hold_seconds]
        for key in late:
            del progress.held_since[key]
        return progress.builder.unanswered(late)

    def _send(self, sender: BackgroundSender, resource: bytes, spans: Iterable[otlp.Span], session_id: str) -> None:
        encoded = map(self.encoder.span, spans)
        for request, count in otlp_wire.requests(resource, encoded, self.max_request_bytes):
            sender.submit(request, session_id)
            self.spans_sent += count  # counted when handed over: a failure stops the push, count and all


def sessions_at(target: str) -> tuple[Library, Callable[[], list[SessionIndex]]]:
    """A folder's sessions, or one file's (with its sub-agent files): read now and again on each call."""
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

    def read_one() -> list[SessionIndex]:  # a file of many sessions (OpenCode's database): each of them
        return [s for s in sessions_of_file(library, path) if s.count]
    return library, read_one


def run(target: str, store, follow: bool = False, base_time: datetime = otlp.BASE_TIME,
        stop: Callable[[], bool] = lambda: False, poll: float = POLL_SECONDS,
        hold_seconds: float = HOLD_SECONDS) -> Pusher:
    """Push a folder or a session; with `follow`, keep sending new events until `stop()` says so, or the
    process is interrupted (then the tool spans still waiting for a result are sent, unfinished)."""
    _, read = sessions_at(target)
    pusher = Pusher(store, base_time, follow=follow, hold_seconds=hold_seconds)
    pusher.push(read())
    if not follow:
        return pusher
    try:
        while not stop():
            time.sleep(poll)
            pusher.push(read())
    except (KeyboardInterrupt, SystemExit):
        pusher.finish()
        raise
    pusher.finish()
    return pusher
