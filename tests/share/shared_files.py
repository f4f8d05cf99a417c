"""Reading back what `agentview share` wrote: the data a shared file carries, inflated."""

from __future__ import annotations

import base64
import gzip
import re

import orjson

HEAD = re.compile(rb'<script type="application/gzip\+base64" id="agentview-data">([A-Za-z0-9+/=]*)</script>')
PART = re.compile(rb'<script type="application/gzip\+base64" class="agentview-part" data-first="(\d+)" data-count="(\d+)">'
                  rb'([A-Za-z0-9+/=]*)</script>')


def carried(page: bytes) -> tuple[dict, bytes]:
    """The data a shared file carries (its head, with the events of its parts in order as "events"), and the JSON
    bytes of its pieces as inflated (the head's, then each part's)."""
    found = HEAD.search(page)
    assert found, "no data in the file"
    raw = [gzip.decompress(base64.b64decode(found.group(1)))]
    data = orjson.loads(raw[0]) | {"events": []}
    for first, count, encoded in PART.findall(page):
        raw.append(gzip.decompress(base64.b64decode(encoded)))
        rows = orjson.loads(raw[-1])
        assert int(first) == len(data["events"]) and int(count) == len(rows)
        data["events"] += rows
    return data, b"\n".join(raw)


def strings_of(value) -> list[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings_of(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings_of(v)]
    return []
