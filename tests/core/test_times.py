"""core/times.py: every way a format writes a time reads as seconds since the epoch; anything else is None."""

from __future__ import annotations

import pytest

from viewer.core.times import seconds

T = 1769940000.0  # 2026-02-01T10:00:00Z


@pytest.mark.parametrize("value, expected", [
    ("2026-02-01T10:00:00Z", T),
    ("2026-02-01T10:00:00+00:00", T),
    ("2026-02-01T12:00:00+02:00", T),  # an offset: the same moment
    ("2026-02-01T05:00:00-05:00", T),
    ("2026-02-01T10:00:00.250Z", T + 0.25),  # fractional seconds, milliseconds to microseconds
    ("2026-02-01T10:00:00.123456Z", T + 0.123456),
    ("2026-02-01T10:00:00", T),  # no zone: taken as UTC, whatever the machine's zone
    ("2026-02-01 10:00:00Z", T),  # a space for the T
    ("2026-02-01", T - 36000),  # a date alone: its midnight
    (T, T),  # a number of seconds
    (int(T), T),
    (T * 1000 + 500, T + 0.5),  # milliseconds (JavaScript's Date.now())
    (0, 0.0),
])
def test_a_time_reads_as_seconds_since_the_epoch(value, expected):
    assert seconds(value) == pytest.approx(expected, abs=1e-6)
    assert type(seconds(value)) is float


@pytest.mark.parametrize("value", [
    None, "", "yesterday", "2026-02-30T10:00:00Z", "10:00", "2026-02-01T10:00:00Zjunk", True, False,
    float("nan"), float("inf"), -float("inf"), [], {"seconds": 1}, b"2026-02-01T10:00:00Z",
])
def test_anything_else_is_no_time(value):
    assert seconds(value) is None
