"""Usage across sessions: tokens and cost per day (or week, or month), project, model and agent CLI, and the
sessions behind each. Built from each session's per-hour sums (index/usage.py), so a request costs the number of
hours with responses, never a read of events. Days are the viewer's own time zone; the window follows the data's
own dates (the last 30 days that have usage, not the 30 before today)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import date, timedelta

from viewer import formats
from viewer.index import usage

DIMENSIONS = ("model", "project", "cli")  # what bars are split by, and the breakdowns listed
METRICS = ("cost", "tokens")
SPANS = {"7": 7, "30": 30, "90": 90, "365": 365}  # ?days=; "all" for every day with usage
SERIES = 7  # the largest series drawn in their own colour; the rest summed as "other"
SESSIONS_LISTED = 50
NO_PROJECT, NO_MODEL = "(no project)", "(no model named)"


class BadRequest(ValueError):
    """A parameter the page cannot use: the message says which and what it takes."""


@dataclass
class Ask:
    """What a usage request asks for: a window of days (None: the data's own), filters, and how to draw it."""
    start: date | None = None
    end: date | None = None
    days: int | None = 30  # None: every day with usage (when start and end are not given)
    project: str | None = None
    model: str | None = None
    cli: str | None = None
    split: str = "model"
    metric: str = "cost"

    @classmethod
    def parse(cls, args) -> "Ask":
        ask = cls(project=args.get("project") or None, model=args.get("model") or None, cli=args.get("cli") or None)
        split, metric, days = args.get("split") or "model", args.get("metric") or "cost", args.get("days") or "30"
        if split not in DIMENSIONS:
            raise BadRequest(f"split must be one of {', '.join(DIMENSIONS)}, not {split!r}")
        if metric not in METRICS:
            raise BadRequest(f"metric must be one of {', '.join(METRICS)}, not {metric!r}")
        if days != "all" and days not in SPANS:
            raise BadRequest(f"days must be one of {', '.join(SPANS)} or all, not {days!r}")
        ask.split, ask.metric, ask.days = split, metric, SPANS.get(days)
        for name in ("from", "to"):
            text = args.get(name)
            if text:
                try:
                    setattr(ask, "start" if name == "from" else "end", date.fromisoformat(text))
                except ValueError:
                    raise BadRequest(f"{name} must be a date as YYYY-MM-DD, not {text!r}") from None
        if ask.start and ask.end and ask.start > ask.end:
            raise BadRequest("from must not be after to")
        return ask


def _local_day(seconds: float | None) -> date | None:
    """The viewer's local day of a moment (None: none, or one the platform cannot place)."""
    try:
        return None if seconds is None else date.fromtimestamp(seconds)
    except (ValueError, OverflowError, OSError):
        return None


@dataclass
class Sums:
    """Tokens, responses and cost summed over some hours of some sessions."""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    responses: int = 0
    cost_usd: float = 0.0
    unpriced: int = 0
    sessions: set = field(default_factory=set)

    def merge(self, other: "Sums") -> None:
        for name in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                     "responses", "cost_usd", "unpriced"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.sessions |= other.sessions

    def add(self, row: list, session_id: str) -> None:
        self.input_tokens += row[0]
        self.output_tokens += row[1]
        self.cache_creation_input_tokens += row[2]
        self.cache_read_input_tokens += row[3]
        self.responses += row[4]
        self.cost_usd += row[5]
        self.unpriced += row[6]
        self.sessions.add(session_id)

    @property
    def tokens(self) -> int:
        return (self.input_tokens + self.output_tokens + self.cache_creation_input_tokens
                + self.cache_read_input_tokens)

    def value(self, metric: str) -> float:
        return self.cost_usd if metric == "cost" else self.tokens

    def as_dict(self) -> dict:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cache_creation_input_tokens": self.cache_creation_input_tokens,
                "cache_read_input_tokens": self.cache_read_input_tokens, "tokens": self.tokens,
                "responses": self.responses, "cost_usd": round(self.cost_usd, 6), "unpriced_responses": self.unpriced,
                "sessions": len(self.sessions)}


@dataclass
class _Hours:
    """One session's hours, as copied out under its lock: (day, model, row) and what it is filed under."""
    session: object
    project: str
    cli: str
    rows: list
    undated: bool


def _collect(sessions, prices) -> tuple[list[_Hours], dict]:
    """Each session's hours placed on local days, each model under the name `prices` lists it by; and what could
    not be counted (unread, no usage logged)."""
    found, counts = [], {"sessions": 0, "unread": 0, "without_usage": 0, "undated": 0}
    names: dict[str, str] = {}
    for s in sessions:
        counts["sessions"] += 1
        with s.lock:
            if s.format is formats.NOT_READ:
                counts["unread"] += 1
                continue
            hours = usage.session_totals(s).hours or {}
            rows, undated = [], False
            for hour, models in hours.items():
                # a session logged without times is placed on the day its file last changed
                day = _local_day(hour * 3600 if hour is not None else s.updated_at)
                undated = undated or hour is None
                if day is not None:
                    for model, row in models.items():
                        name = names.get(model)
                        if name is None:
                            name = names[model] = prices.listed_name(model) if model else NO_MODEL
                        rows.append((day, name, list(row)))
            item = _Hours(s, s.project or NO_PROJECT, s.format.label, rows, undated)
        if not rows:
            counts["without_usage"] += 1
            continue
        counts["undated"] += undated
        found.append(item)
    return found, counts


def _window(ask: Ask, days: list[date]) -> tuple[date, date]:
    """The days shown: those asked for, else the last `ask.days` up to the data's last day (all of them: None)."""
    last = max(days) if days else date.today()
    first = min(days) if days else last
    end = ask.end or (last if ask.start is None else max(last, ask.start))
    if ask.start:
        return ask.start, end
    if ask.days is None:
        return min(first, end), end
    return end - timedelta(days=ask.days - 1), end


def _bucket(start: date, end: date) -> str:
    """How bars group days: a bar a day up to four months, a week up to two years, else a month."""
    span = (end - start).days + 1
    return "day" if span <= 124 else "week" if span <= 731 else "month"


def _bar_of(day: date, bucket: str) -> date:
    if bucket == "week":
        return day - timedelta(days=day.weekday())
    if bucket == "month":
        return day.replace(day=1)
    return day


def _next_bar(day: date, bucket: str) -> date:
    """The first day of the bar after the one starting on `day`."""
    if bucket == "month":
        return (day.replace(day=28) + timedelta(days=4)).replace(day=1)
    return day + timedelta(days=7 if bucket == "week" else 1)


def _bars(start: date, end: date, bucket: str) -> list[date]:
    bars, day = [], _bar_of(start, bucket)
    while day <= end:
        bars.append(day)
        day = _next_bar(day, bucket)
    return bars


def _ranked(groups: dict[str, Sums], metric: str) -> list[tuple[str, Sums]]:
    return sorted(groups.items(), key=lambda kv: (-kv[1].value(metric), -kv[1].tokens, kv[0]))


def report(sessions, ask: Ask, prices) -> dict:
    """The usage page's data: totals, bars split by `ask.split`, the breakdowns, and the sessions behind them
    (models named as `prices` lists them)."""
    found, counts = _collect(sessions, prices)
    every_day = sorted({day for item in found for day, _, _ in item.rows})
    start, end = _window(ask, every_day)
    bucket = _bucket(start, end)
    total = Sums()
    by: dict[str, dict[str, Sums]] = {name: {} for name in DIMENSIONS}
    per_session: dict[str, tuple[object, Sums]] = {}
    per_bar: dict[date, dict[str, Sums]] = {}
    per_day: dict[date, float] = {}  # the metric per day with usage (the busiest, and the mean of those days)
    for item in found:
        if (ask.project and item.project != ask.project) or (ask.cli and item.cli != ask.cli):
            continue
        for day, model, row in item.rows:
            if not start <= day <= end or (ask.model and model != ask.model):
                continue
            sid = item.session.id
            total.add(row, sid)
            per_day[day] = per_day.get(day, 0) + (row[5] if ask.metric == "cost" else sum(row[:4]))
            keys = {"model": model, "project": item.project, "cli": item.cli}
            for name in DIMENSIONS:
                by[name].setdefault(keys[name], Sums()).add(row, sid)
            per_session.setdefault(sid, (item, Sums()))[1].add(row, sid)
            per_bar.setdefault(_bar_of(day, bucket), {}).setdefault(keys[ask.split], Sums()).add(row, sid)
    ranked = _ranked(by[ask.split], ask.metric)
    drawn = [name for name, _ in ranked[:SERIES]]
    if len(ranked) > SERIES:
        drawn.append("other")
    bars = []
    for day in _bars(start, end, bucket):
        parts = per_bar.get(day, {})
        series: dict[str, float] = {}
        bar = Sums()
        for name, sums in parts.items():
            key = name if name in drawn[:SERIES] else "other"
            series[key] = series.get(key, 0) + sums.value(ask.metric)
            bar.merge(sums)
        last = min(_next_bar(day, bucket) - timedelta(days=1), end)
        bars.append({"from": max(day, start).isoformat(), "to": last.isoformat(), "total": bar.as_dict(),
                     "value": bar.value(ask.metric),
                     "series": [{"name": n, "value": series[n]} for n in drawn if series.get(n)]})
    listed = sorted(per_session.values(), key=lambda v: (-v[1].value(ask.metric), -v[1].tokens, v[0].session.id))
    return {
        "window": {"from": start.isoformat(), "to": end.isoformat(), "bucket": bucket,
                   "days": None if ask.days is None and not ask.start else ask.days,
                   "data_from": every_day[0].isoformat() if every_day else None,
                   "data_to": every_day[-1].isoformat() if every_day else None,
                   "time_zone": time.strftime("%Z") or "local"},
        "filters": {"project": ask.project, "model": ask.model, "cli": ask.cli},
        "split": ask.split, "metric": ask.metric,
        "total": total.as_dict(),
        "series": drawn,
        "bars": bars,
        "peak": max((b["value"] for b in bars), default=0),
        "days": _days(per_day, total),
        "breakdowns": {name: [{"name": key, **sums.as_dict()} for key, sums in _ranked(by[name], ask.metric)]
                       for name in DIMENSIONS},
        "sessions": [{"id": item.session.id, "project": item.project, "cli": item.cli, **sums.as_dict()}
                     for item, sums in listed[:SESSIONS_LISTED]],
        "sessions_behind": len(listed),
        "counted": counts,
    }


def _days(per_day: dict[date, float], total: Sums) -> dict:
    """The days with usage: how many, the busiest, the mean of them, and the share of input read from the cache."""
    busiest = max(per_day.items(), key=lambda kv: (kv[1], kv[0]), default=None)
    read = total.input_tokens + total.cache_read_input_tokens + total.cache_creation_input_tokens
    return {"active": len(per_day),
            "busiest": None if busiest is None else {"day": busiest[0].isoformat(), "value": busiest[1]},
            "per_active_day": sum(per_day.values()) / len(per_day) if per_day else 0,
            "cache_read_share": total.cache_read_input_tokens / read if read else None}

