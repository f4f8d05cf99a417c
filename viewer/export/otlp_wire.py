"""viewer.export.otlp spans as OTLP protobuf bytes (an ExportTraceServiceRequest), written directly.

The few messages a span needs are small and stable, so they are encoded here, with no dependency: the resource and
scope once per session, each key and repeated (key, value) pair once, and requests cut at a byte budget
(MAX_REQUEST_BYTES). Tests check the bytes against the OpenTelemetry SDK encoder's (otlp_sdk).
"""

from __future__ import annotations

import struct
from typing import Any, Iterable, Iterator

from . import otlp

MAX_REQUEST_BYTES = 4_000_000  # a request's protobuf before compression: under the usual 4 MiB receiver limit
MAX_REQUEST_SPANS = 5_000
SPAN_FLAGS = 0x100  # CONTEXT_HAS_IS_REMOTE_MASK, not remote: what the SDK's encoder writes for a local parent
_CACHED_VALUE_CHARS = 64  # (key, value) pairs with a string value this short are encoded once
_CACHE_LIMIT = 200_000  # pairs kept before the cache is emptied
UNIQUE_KEYS = frozenset(("agentview.message_id", "gen_ai.tool.call.id"))  # ids: never cached

_fixed64 = struct.Struct("<Q").pack
_fixed32 = struct.Struct("<I").pack
_double = struct.Struct("<d").pack


def _long_varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = [_long_varint(n) for n in range(0x4000)]  # every varint of one or two bytes, made once


def varint(n: int) -> bytes:
    if n < 0x4000:
        return _SMALL[n]
    if n < 0x200000:  # three bytes: positions and line numbers of big sessions
        return bytes((n & 0x7F | 0x80, n >> 7 & 0x7F | 0x80, n >> 14))
    return _long_varint(n)


def _field(tag: int, payload: bytes) -> bytes:
    """A length-delimited field: its tag byte (field number << 3 | 2), the length, the bytes."""
    return bytes((tag,)) + varint(len(payload)) + payload


def _text(tag: int, value: str) -> bytes:
    return _field(tag, value.encode("utf-8", "surrogatepass"))


def any_value(value: Any) -> bytes:
    """An AnyValue message (its body)."""
    if type(value) is str:
        return _text(0x0A, value)
    if isinstance(value, bool):
        return b"\x10\x01" if value else b"\x10\x00"
    if isinstance(value, int):
        return b"\x18" + varint(value & 0xFFFFFFFFFFFFFFFF)  # int64: negatives as two's complement
    if isinstance(value, float):
        return b"\x21" + _double(value)
    if isinstance(value, (list, tuple)):
        return _field(0x2A, b"".join(_field(0x0A, any_value(v)) for v in value))
    return _text(0x0A, str(value))


class Encoder:
    """Encodes spans; keeps the bytes of keys and of short (key, value) pairs across calls."""

    def __init__(self) -> None:
        # per field tag: key -> (KeyValue.key's bytes and the tag of KeyValue.value, {short value: the whole field}
        # or None for keys whose values are ids, never repeated)
        self._keys: dict[int, dict[str, tuple[bytes, dict[str, bytes] | None]]] = {}
        self._cached = 0
        self._names: dict[str, bytes] = {}  # span name -> Span.name's field (names repeat: `chat {model}`...)

    def _key(self, tag: int, key: str) -> tuple[bytes, dict[str, bytes] | None]:
        keys = self._keys.setdefault(tag, {})
        known = keys.get(key)
        if known is None:
            known = keys[key] = (_text(0x0A, key) + b"\x12", None if key in UNIQUE_KEYS else {})
        return known

    def attributes(self, tag: int, attributes: dict[str, Any], out: list[bytes]) -> None:
        """Appends each attribute as the repeated KeyValue field `tag` of its message. The pieces are appended
        rather than joined, so a long value's bytes are copied once, into the request. (The hottest loop of a
        push: it is written for speed.)"""
        keys, small = self._keys.get(tag), _SMALL
        if keys is None:
            keys = self._keys[tag] = {}
        tag_byte = small[tag]
        for key, value in attributes.items():
            key_bytes, cache = keys.get(key) or self._key(tag, key)
            if type(value) is str:
                short = cache is not None and len(value) <= _CACHED_VALUE_CHARS
                if short:
                    field = cache.get(value)
                    if field is not None:
                        out.append(field)
                        continue
                encoded = value.encode("utf-8", "surrogatepass")
                n = len(encoded)
                length = small[n] if n < 0x4000 else _long_varint(n)
                any_size = 1 + len(length) + n
                any_length = small[any_size] if any_size < 0x4000 else _long_varint(any_size)
                size = len(key_bytes) + len(any_length) + any_size
                pieces = (tag_byte, small[size] if size < 0x4000 else varint(size), key_bytes, any_length,
                          b"\x0a", length, encoded)
                if short:
                    self._cached += 1
                    if self._cached > _CACHE_LIMIT:  # labels are few: this many means ids; start again
                        for _, values in self._keys[tag].values():
                            if values is not None:
                                values.clear()
                        self._cached = 0
                    cache[value] = b"".join(pieces)
                out += pieces
            elif type(value) is int and 0 <= value < 0x200000:  # positions, line numbers, indexes
                number = varint(value)
                out += (tag_byte, small[len(key_bytes) + 2 + len(number)], key_bytes, small[1 + len(number)], b"\x18",
                        number)
            else:
                any_body = any_value(value)
                body = key_bytes + varint(len(any_body)) + any_body
                out += (tag_byte, varint(len(body)), body)

    def span(self, span: otlp.Span) -> bytes:
        """A Span message (its body), fields in field-number order as the SDK's encoder writes them."""
        parts = [b"\x0a\x10", span.trace_id, b"\x12\x08", span.span_id]
        if span.parent_id is not None:
            parts += (b"\x22\x08", span.parent_id)
        name = self._names.get(span.name)
        if name is None:
            if len(self._names) >= 10_000:
                self._names.clear()
            name = self._names[span.name] = _text(0x2A, span.name)
        parts += (name, b"\x30", varint(span.kind),
                  b"\x39", _fixed64(span.start), b"\x41", _fixed64(max(span.start, span.end)))
        self.attributes(0x4A, span.attributes, parts)
        for link in span.links:
            link_parts = [b"\x0a\x10", span.trace_id, b"\x12\x08", link.span_id]
            self.attributes(0x22, link.attributes, link_parts)
            link_parts += (b"\x35", _LINK_FLAGS)
            body = b"".join(link_parts)
            parts += (b"\x6a", varint(len(body)), body)
        parts.append(_STATUS_AND_FLAGS)
        return b"".join(parts)

    def resource(self, attributes: dict[str, Any]) -> bytes:
        """ResourceSpans.resource, tag and length included: encoded once per session."""
        out: list[bytes] = []
        self.attributes(0x0A, attributes, out)
        return _field(0x0A, b"".join(out))


_LINK_FLAGS = _fixed32(SPAN_FLAGS)
_STATUS_AND_FLAGS = b"\x7a\x00" + b"\x85\x01" + _fixed32(SPAN_FLAGS)  # an empty (unset) status; the flags


_SCOPE = _field(0x0A, _text(0x0A, otlp.SCOPE))  # ScopeSpans.scope: InstrumentationScope{name}
_SCHEMA = _text(0x1A, otlp.SCHEMA_URL)  # schema_url, field 3 of both ScopeSpans and ResourceSpans


def request(resource: bytes, spans: list[bytes]) -> bytes:
    """An ExportTraceServiceRequest of encoded spans under one encoded resource, joined once."""
    pieces = [b"", resource, b"", b"", _SCOPE]
    size = len(_SCOPE) + len(_SCHEMA)
    for span in spans:
        length = varint(len(span))
        pieces += (b"\x12", length, span)
        size += 1 + len(length) + len(span)
    pieces.append(_SCHEMA)
    scope_length = varint(size)
    pieces[2], pieces[3] = b"\x12", scope_length
    resource_spans_size = len(resource) + 1 + len(scope_length) + size + len(_SCHEMA)
    pieces[0] = b"\x0a" + varint(resource_spans_size)
    pieces.append(_SCHEMA)
    return b"".join(pieces)


def requests(resource: bytes, spans: Iterable[bytes], max_bytes: int = MAX_REQUEST_BYTES,
             max_spans: int = MAX_REQUEST_SPANS) -> Iterator[tuple[bytes, int]]:
    """Encoded spans cut into requests of at most max_bytes (a span bigger than that goes alone) and max_spans;
    each request with the number of spans it holds."""
    batch: list[bytes] = []
    size = 0
    for span in spans:
        cost = len(span) + 6  # its tag and length
        if batch and (size + cost > max_bytes or len(batch) >= max_spans):
            yield request(resource, batch), len(batch)
            batch, size = [], 0
        batch.append(span)
        size += cost
    if batch:
        yield request(resource, batch), len(batch)
