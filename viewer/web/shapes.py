"""The JSON API's answers, declared once: the contract docs/api.md documents and tests/web/test_web_shapes.py
checks (against docs/api.md and against real answers).

A key declared NotRequired is in some answers only; `Event` is an event as logged. Annotations are evaluated (no
`from __future__ import annotations`) so that TypedDict sees NotRequired.
"""

from typing import Any, NotRequired, TypedDict

from .report_shapes import Compare, Timeline, Usage  # noqa: F401 (answers of shapes.ANSWERS)

Event = dict[str, Any]  # an event as logged (seed 000); the keys are the log's


class Problem(TypedDict):
    """Something skipped or unresolved while reading a session (or, with `path`, the folder)."""

    kind: str
    line: int | None
    detail: str
    message_id: NotRequired[str]
    path: NotRequired[str]


class _SessionFields(TypedDict):
    id: str
    name: str
    path: str
    events: int
    updated_at: float | None
    url: str
    format: str
    format_label: str
    format_reason: str | None
    project: str | None
    files: list[str] | None
    hides: list[str]
    title: str | None
    started_at: float | None
    active_at: float | None
    failures: int  # how many of its entries failed, and calls it left unanswered (core/failures.py)


class SessionRow(_SessionFields):
    """A session in the list of sessions."""

    agents: int
    problems: int


class Sessions(TypedDict):
    """GET /api/sessions"""

    sessions: list[SessionRow]
    problems: list[Problem]


class Status(TypedDict):
    """GET /api/status"""

    sessions: int
    unread: int
    indexing: int
    reading: int
    scanning: bool
    version: int


class AgentRow(TypedDict):
    agent_id: str
    name: str
    parent_id: str | None
    parent_ordinal: int | None
    ordinal: int
    language_model: str | None
    entries: int
    implicit: bool
    flags: list
    created_by: dict | None
    status: str | None  # running, done, failed, stopped (reads/queries.py: agent_status), or None
    url: NotRequired[str]  # in the session's list of agents


class Session(_SessionFields):
    """GET /api/sessions/<id>: the row's fields, its cursor, its agents and problems listed (not counted)."""

    cursor: str
    agents: list[AgentRow]
    problems: list[Problem]
    usage: dict
    format_summary: dict | None


class Agent(AgentRow):
    """GET /api/sessions/<id>/agents/<agent_id>[?start=&limit=&perspective=1]"""

    lineage: list[dict]  # the agents it descends from, root first, itself last
    children: list[AgentRow]  # its sub-agents
    usage: dict  # its token usage (usage.for_agent)
    transcript: list[Event]
    start: int
    total: int
    next: str | None
    perspective: NotRequired[str]


class DialogMessage(TypedDict):
    """An event as logged, plus who said it to whom (so its other keys are the log's: see OPEN)."""

    speaker: str
    recipients: list
    modified: bool | None


class Dialog(TypedDict):
    """GET /api/sessions/<id>/dialog?agents=a,b"""

    agents: list[str]
    messages: list[DialogMessage]
    start: int
    total: int
    url: str


class Message(TypedDict):
    """GET /api/sessions/<id>/messages/<message_id>"""

    event: Event
    flow: list[Event]
    references: list[Event]
    provenance: dict
    url: str


class Events(TypedDict):
    """GET /api/sessions/<id>/events?after=<cursor>[&limit=]"""

    events: list[Event]
    cursor: str
    reset: bool


class Problems(TypedDict):
    """GET /api/sessions/<id>/problems (the problems page's data)"""

    id: str
    problems: list[Problem]
    counts: dict[str, int]
    url: str


class Failure(TypedDict):
    """One failure (reads/failures.py): the entry that failed, or the entry of a call left unanswered."""

    message_id: str
    agent_id: str
    agent_name: str
    kind: str  # core/failures.KINDS
    tool: str | None
    call_message_id: str | None
    call_id: str | None
    error: str  # the first line that says something
    text: str  # the error's text (its entry holds it whole)
    timestamp: str | None
    url: str  # the entry's page
    agent_url: str
    call_url: str | None


class Failures(TypedDict):
    """GET /api/sessions/<id>/failures[?agent=&start=&limit=] (the Failures page's data)"""

    id: str
    total: int
    start: int
    failures: list[Failure]
    agents: dict[str, int]  # agent id -> its own failures
    agent: str | None  # ?agent=: the agent whose failures (and its sub-agents') are listed
    next: str | None
    url: str


class SearchResult(TypedDict):
    session: str
    agent_id: str
    message_id: str
    role: str | None
    snippet: str
    url: str
    kind: str
    agent_name: str
    highlights: list[list[int]]


class SearchTotal(TypedDict):
    """How many hits a query has in all (search_count.Tally): `count` is a lower bound unless `exact`."""

    count: int
    exact: bool
    at_most: int | None  # when not exact: an upper bound (None: not every session was visited)


class Search(TypedDict):
    """GET /api/search?q=...&session=<id>"""

    query: str
    parsed: dict
    results: list[SearchResult]
    next: str | None
    cursor: str
    total: SearchTotal
    # sessions searched only as far as their search index is built yet (None: every event searched): session id
    # -> {"indexed", "events"}; the hits in the rest come with later polls
    partial: dict[str, dict] | None


class HookGroup(TypedDict):
    """The modified deliveries one agent received."""

    agent_id: str
    name: str
    count: int
    received: int
    start: int
    end: int
    deliveries: list[dict]


class Hooks(TypedDict):
    """GET /api/sessions/<id>/hooks (the hook audit page's data)"""

    id: str
    deliveries: int
    modified: int
    agents: list[dict]
    agent_id: str | None
    start: int
    limit: int
    groups: list[HookGroup]
    first_group: int
    group_limit: int | None
    groups_total: int
    url: str


class SpawnNode(TypedDict):
    agent_id: str
    name: str
    full_name: str
    entries: int
    implicit: bool
    root: bool
    ordinal: int
    x: float
    y: float
    cx: float


class SpawnEdge(TypedDict):
    agent_id: str
    parent_id: str
    message_id: str | None
    call_id: str | None
    tool: str | None
    summary: str | None
    label: str
    x1: float
    y1: float
    x2: float
    y2: float
    mid_y: float
    label_x: float
    label_y: float


class SpawnMore(TypedDict):
    """The box standing for the children of a parent past the first CHILD_LIMIT - 1 (and their sub-agents)."""

    parent_id: str
    parent_ordinal: int
    count: int
    x: float
    y: float
    cx: float
    x1: float
    y1: float
    mid_y: float


class Spawn(TypedDict):
    """GET /api/sessions/<id>/spawn (the spawn graph page's data)"""

    id: str
    nodes: list[SpawnNode]
    edges: list[SpawnEdge]
    more: list[SpawnMore]
    width: float
    height: float
    node_w: float
    node_h: float
    url: str


class Lineage(TypedDict):
    """GET /api/sessions/<id>/lineage/<agent_id>"""

    agent_id: str
    breadcrumbs: list[dict]
    url: str


class Chart(TypedDict):
    """GET /api/sessions/<id>/chart (the chart page's data)"""

    id: str
    agents: list[str]
    lanes: list[dict]
    marks: list[dict]
    arrows: list[dict]
    links: list[dict]
    start: int
    end: int
    size: int
    total: int
    trace: str | None
    width: float
    height: float
    left: float
    lane_w: float
    row_h: float
    head_h: float
    url: str


class TraceRow(TypedDict):
    message_id: str
    position: int
    agent_id: str
    agent_name: str
    kind: str
    text: str


class Trace(TypedDict):
    """GET /api/sessions/<id>/trace/<message_id> (the trace page's data)"""

    id: str
    message_id: str
    position: int
    focus: TraceRow
    upstream: list[TraceRow]
    downstream: list[TraceRow]
    agents: list
    url: str


class Error(TypedDict):
    """Any /api/ URL that fails: 4xx or 500."""

    error: str
    detail: str | None


# Shapes whose answers also carry an event's own keys, beside the declared ones.
OPEN: frozenset[type] = frozenset({DialogMessage})

# The answer of each API route, by its path as the README writes it.
ANSWERS: dict[str, type] = {
    "/api/sessions": Sessions,
    "/api/status": Status,
    "/api/sessions/<id>": Session,
    "/api/sessions/<id>/agents/<agent_id>": Agent,
    "/api/sessions/<id>/dialog": Dialog,
    "/api/sessions/<id>/messages/<message_id>": Message,
    "/api/sessions/<id>/events": Events,
    "/api/sessions/<id>/problems": Problems,
    "/api/sessions/<id>/failures": Failures,
    "/api/search": Search,
    "/api/sessions/<id>/hooks": Hooks,
    "/api/sessions/<id>/spawn": Spawn,
    "/api/sessions/<id>/lineage/<agent_id>": Lineage,
    "/api/sessions/<id>/chart": Chart,
    "/api/sessions/<id>/trace/<message_id>": Trace,
    "/api/sessions/<id>/timeline": Timeline,
    "/api/compare": Compare,
    "/api/usage": Usage,
}
