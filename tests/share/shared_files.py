"""Reading back what `agentview share` wrote: the data a shared file carries, inflated."""

from __future__ import annotations

import base64
import gzip
import re

import orjson

DATA = re.compile(rb'<script id="agentview-data" type="application/gzip\+base64">([A-Za-z0-9+/=]*)</script>')


def carried(page: bytes) -> tuple[dict, bytes]:
    """The data object a shared file carries, and its JSON bytes as inflated."""
    found = DATA.search(page)
    assert found, "no data in the file"
    raw = gzip.decompress(base64.b64decode(found.group(1)))
    return orjson.loads(raw), raw


def strings_of(value) -> list[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings_of(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings_of(v)]
    return []
