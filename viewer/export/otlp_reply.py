"""What a trace store says in a successful OTLP/HTTP reply: its partial success.

A store may take a request (200) yet refuse some spans; the reply's `partial_success` says how many and why, as
protobuf or JSON. Only those two fields are read, by hand (no protobuf package); a body that is neither says
nothing, and is no reason to stop a push.
"""

from __future__ import annotations

import json

MAX_MESSAGE_CHARS = 300  # a store's message, shown on one line of stderr


def partial_success(body: bytes, content_type: str | None = None) -> tuple[int, str]:
    """(spans rejected, the store's message) of a reply body; (0, "") when it says nothing (or nothing legible)."""
    if not body:
        return 0, ""
    if "json" in (content_type or "").lower() or body.lstrip()[:1] == b"{":
        rejected, message = _from_json(body)
    else:
        try:
            rejected, message = _from_protobuf(body)
        except (IndexError, ValueError):  # cut short or not protobuf: nothing legible
            return 0, ""
    return max(rejected, 0), _one_line(message)


def _from_json(body: bytes) -> tuple[int, str]:
    try:
        reply = json.loads(body)
    except (ValueError, RecursionError):
        return 0, ""
    part = reply.get("partialSuccess", reply.get("partial_success")) if isinstance(reply, dict) else None
    if not isinstance(part, dict):
        return 0, ""
    rejected = part.get("rejectedSpans", part.get("rejected_spans", 0))
    message = part.get("errorMessage", part.get("error_message", ""))
    try:  # int64 is a string in OTLP/JSON, a number as some stores write it
        rejected = int(rejected)
    except (TypeError, ValueError):
        rejected = 0
    return rejected, message if isinstance(message, str) else ""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]  # IndexError when cut short
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _fields(data: bytes):
    """(field number, wire type, value) of each field of a message; unknown ones are skipped as the spec says."""
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
        elif wire == 2:
            length, at = _varint(data, at)
            value, at = data[at:at + length], at + length
            if at > len(data):
                raise ValueError("field runs past the end")
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
            value = None
        else:
            raise ValueError(f"wire type {wire}")
        yield number, wire, value


def _from_protobuf(body: bytes) -> tuple[int, str]:
    rejected, message = 0, ""
    for number, wire, value in _fields(body):
        if number != 1 or wire != 2:  # ExportTraceServiceResponse.partial_success
            continue
        for inner, inner_wire, inner_value in _fields(value):
            if inner == 1 and inner_wire == 0:
                rejected = inner_value - (1 << 64) if inner_value >= 1 << 63 else inner_value  # int64: two's complement
            elif inner == 2 and inner_wire == 2:
                message = inner_value.decode("utf-8", "replace")
    return rejected, message


def _one_line(message: str) -> str:
    text = "".join(c for c in " ".join(message.split()) if c.isprintable())
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS - 1] + "…"
