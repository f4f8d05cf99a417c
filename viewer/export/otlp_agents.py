"""push --follow: an agent's `invoke_agent` span grows with its agent.

The span goes when the agent first appears, ending at its last entry so far; when the agent gets new entries it
is sent again (same span id and start, a later end; at most every RESEND_SECONDS), so a store that keeps the
latest copy of a span id shows one span covering the agent's work.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from dataclasses import replace
from typing import Iterable, Iterator

from . import otlp

RESEND_SECONDS = 2.0


class GrowingAgents:
    """The agent spans of one session as last sent, and the copies due as the agents grow."""

    def __init__(self, builder: otlp.SpanBuilder, every: float = RESEND_SECONDS):
        self.builder = builder
        self.every = every
        # agent id -> (its span as last sent, the position of the last entry that copy covers, when it went)
        self.sent: dict[str, tuple[otlp.Span, int, float]] = {}
        self._agents: dict[bytes, str] = {}  # span id -> agent id

    def watch(self, spans: Iterable[otlp.Span]) -> Iterator[otlp.Span]:
        """The spans, passed on; each agent span among them noted as sent (its end covers its entries so far)."""
        for span in spans:
            if span.attributes.get("gen_ai.operation.name") == "invoke_agent":
                agent_id = self._agent_of(span.span_id)
                agent = self.builder.s.agents.get(agent_id) if agent_id is not None else None
                if agent is not None:
                    self.sent[agent_id] = (span, agent.entries[-1] if agent.entries else -1, time.monotonic())
            yield span

    def _agent_of(self, span_id: bytes) -> str | None:
        if span_id not in self._agents:  # an agent new since the last look: map them all again (a few)
            self._agents = {self.builder.agent_span_id(a): a for a in self.builder.s.agents}
        return self._agents.get(span_id)

    def grown(self, upto: int, final: bool = False) -> Iterator[otlp.Span]:
        """A copy of each agent span whose agent has entries before `upto` (the events whose spans were built:
        a copy never covers an event not sent) that its last copy does not cover, with the later end: once its
        last copy is RESEND_SECONDS old, or now when `final`. Callers hold the session's lock."""
        now = time.monotonic()
        agents = self.builder.s.agents
        for agent_id, (span, covered, when) in list(self.sent.items()):
            agent = agents.get(agent_id)
            before = bisect_left(agent.entries, upto) if agent is not None else 0  # entries: positions, ascending
            if not before or agent.entries[before - 1] <= covered:
                continue
            if not final and now - when < self.every:
                continue
            last = agent.entries[before - 1]
            # never earlier than it was, and no span may end before it starts (some stores drop the batch)
            copy = replace(span, end=max(span.start, span.end, self.builder.peek_time(last)))
            self.sent[agent_id] = (copy, last, now)
            yield copy
