"""The JSON answers of the reports that span runs and time (compare two runs, a session's timeline, usage across
sessions), declared as shapes.py declares the others; shapes.ANSWERS names them with the rest."""

from typing import NotRequired, TypedDict


class CompareRun(TypedDict):
    session_id: str
    title: str
    path: str
    agent_id: str | None
    as_of: int | None
    events: int


class CompareAgent(TypedDict):
    agent_id: str
    name: str
    ordinal: int


class CompareEntry(TypedDict):
    index: int
    position: int
    message_id: str
    agent_id: str
    kind: str
    role: str | None
    tools: list[str]
    failed: bool
    text: str
    url: str


class CompareHunk(TypedDict):
    equal: bool
    a_start: int
    a_end: int
    b_start: int
    b_end: int
    a: NotRequired[list[CompareEntry]]
    b: NotRequired[list[CompareEntry]]
    a_first: NotRequired[CompareEntry]
    b_first: NotRequired[CompareEntry]


class CompareMetrics(TypedDict):
    entries: int
    tool_calls: int
    failures: int
    agents_spawned: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    seconds: float | None
    agents: NotRequired[int]


class CompareMetricsPair(TypedDict):
    a: CompareMetrics
    b: CompareMetrics


class ComparePair(TypedDict):
    a: CompareAgent
    b: CompareAgent
    depth: int
    matched_by: str
    same: bool
    exact: bool
    hunks: list[CompareHunk]
    metrics: CompareMetricsPair


class Divergence(TypedDict):
    pair: int | None
    a: CompareAgent | None
    b: CompareAgent | None
    a_entry: CompareEntry | None
    b_entry: CompareEntry | None
    a_index: int | None
    b_index: int | None
    agents_differ: bool


class Compare(TypedDict):
    """GET /api/compare?a=<id>&b=<id> (the compare page's data)"""

    a: CompareRun
    b: CompareRun
    agree: bool
    first_divergence: Divergence | None
    pairs: list[ComparePair]
    only_in_a: list[CompareAgent]
    only_in_b: list[CompareAgent]
    totals: CompareMetricsPair
    url: str


class TimelineBar(TypedDict):
    kind: str
    x: float
    w: float
    count: int
    failed: int
    longest: float
    position: int


class TimelineLane(TypedDict):
    agent_id: str
    name: str
    depth: int
    ordinal: int
    entries: int
    failures: int
    spawned_at: float | None
    bars: list[TimelineBar]


class TimelineCall(TypedDict):
    kind: str
    agent_id: str
    name: str
    agent_name: str
    position: int
    message_id: str
    start: float
    end: float
    length: float
    failed: bool
    unit: str


class TimelineTick(TypedDict):
    x: float
    value: float


class Timeline(TypedDict):
    """GET /api/sessions/<id>/timeline (the timeline page's data)"""

    id: str
    axis: str
    first: float
    last: float
    start: float
    end: float
    width: int
    first_lane: int
    lanes_total: int
    lanes: list[TimelineLane]
    longest: list[TimelineCall]
    ticks: list[TimelineTick]
    events: int
    cursor: str
    url: str


class UsageSums(TypedDict):
    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    tokens: int
    responses: int
    cost_usd: float
    unpriced_responses: int
    sessions: int


# The days shown ("from", "to", ISO dates of the viewer's time zone), how bars group them (day, week, month), the
# span asked for (null: from/to or all), and the first and last day with usage.
UsageWindow = TypedDict("UsageWindow", {"from": str, "to": str, "bucket": str, "days": int | None,
                                        "data_from": str | None, "data_to": str | None, "time_zone": str})


class UsageFilters(TypedDict):
    project: str | None
    model: str | None
    cli: str | None


class UsageSeries(TypedDict):
    name: str
    value: float


UsageBar = TypedDict("UsageBar", {"from": str, "to": str, "total": UsageSums, "value": float,
                                  "series": list[UsageSeries]})


class UsageRow(UsageSums):
    name: str


class UsageBreakdowns(TypedDict):
    model: list[UsageRow]
    project: list[UsageRow]
    cli: list[UsageRow]


class UsageSession(UsageSums):
    id: str
    project: str
    cli: str
    title: str | None
    name: str
    path: str
    url: str
    started_at: float | None
    active_at: float | None


class UsageBusiest(TypedDict):
    day: str
    value: float


class UsageDays(TypedDict):
    active: int
    busiest: UsageBusiest | None
    per_active_day: float
    cache_read_share: float | None


class UsageCounted(TypedDict):
    sessions: int
    unread: int
    without_usage: int
    undated: int


class Usage(TypedDict):
    """GET /api/usage (the usage page's data)"""

    window: UsageWindow
    filters: UsageFilters
    split: str
    metric: str
    total: UsageSums
    series: list[str]
    bars: list[UsageBar]
    peak: float
    days: UsageDays
    breakdowns: UsageBreakdowns
    sessions: list[UsageSession]
    sessions_behind: int
    counted: UsageCounted
    version: int
    url: str
