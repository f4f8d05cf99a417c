"""A session's usage per UTC hour (index/usage.py) and the name a model's usage is listed under (core/pricing.py)."""

from __future__ import annotations

import calendar
import time

import pytest

from viewer.core import pricing
from viewer.index.usage import hour_of


@pytest.mark.parametrize("stamp, hour", [
    ("2025-09-03T00:52:31.217Z", "2025-09-03T00"),
    ("2025-09-03T00:52:31Z", "2025-09-03T00"),
    ("2025-09-03T00:52:31", "2025-09-03T00"),  # no zone: UTC, as logs mean it
    ("2025-09-03 23:10:00.5", "2025-09-03T23"),
    ("2025-09-03T00:52:31.123456+00:00", "2025-09-03T00"),
    ("2025-09-03T01:30:00+02:00", "2025-09-02T23"),  # another zone: converted, across a day
    ("2025-09-02T22:30:00-05:00", "2025-09-03T03"),
    ("2025-09-03", "2025-09-03T00"), (1756860751, "2025-09-03T00"), (1756860751217, "2025-09-03T00"),
    ("yesterday at noon", None), ("2025-09-03Tab:00:00Z", None), ("", None), (None, None), (True, None),
    ("2025-13-03T01:30:00+02:00", None), (1e300, None),
])
def test_the_hour_of_a_logged_time(stamp, hour):
    """`hour` as people write a UTC hour; hour_of gives it in hours since the epoch."""
    expected = None if hour is None else calendar.timegm(time.strptime(hour, "%Y-%m-%dT%H")) // 3600
    assert hour_of(stamp) == expected


@pytest.mark.parametrize("logged, listed", [
    ("claude-sonnet-4.5", "claude-sonnet-4-5"),
    ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
    ("claude-opus-4-1-20250805", "claude-opus-4-1"),
    ("openai/gpt-5-mini", "gpt-5-mini"),
    ("gemini-2.5-pro", "gemini-2.5-pro"),
    ("gpt-5-codex", "gpt-5-codex"),  # priced as GPT-5, but another model: listed as itself
    ("a-model-of-our-own", "a-model-of-our-own"),
])
def test_spellings_of_one_model_are_listed_under_one_name(logged, listed):
    assert pricing.load().listed_name(logged) == listed
