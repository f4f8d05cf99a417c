"""A logged time as seconds since the epoch, whatever way a format wrote it: the one reading of times that sums,
facets and durations share."""

from __future__ import annotations

import math
from datetime import datetime, timezone

MILLISECONDS_FROM = 1e11  # a number above this is milliseconds (1e11 seconds is the year 5138)


def seconds(value: object) -> float | None:
    """`value` in seconds since the epoch, or None when it is not a time.

    An ISO 8601 string ("Z" or an offset; a time without a zone is taken as UTC, so two such times subtract as
    logged), or a number of seconds (milliseconds when above MILLISECONDS_FROM, as JavaScript's Date.now()
    writes). Booleans, non-finite numbers, empty strings and text that is no time are None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value):
            return None
        return value / 1000 if value > MILLISECONDS_FROM else float(value)
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
        return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()
    except ValueError:
        return None
