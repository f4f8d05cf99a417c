"""Images carried in a log (base64 content blocks): which ones a page may show, and their bytes.

An event names its images by where they lie in its raw record, so their bytes stay in the file until their own URL
is asked for. Only raster types a browser runs no code from are shown (never SVG), under a byte cap, and only when
their first bytes are of the type they claim.
"""

from __future__ import annotations

import base64
import binascii

SHOWN_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
IMAGE_LIMIT = 5 * 1024 * 1024  # decoded bytes; the API takes images up to 5 MB, more is not a picture to look at
_MAGIC = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),  # then four bytes of length, then WEBP (checked below)
}


def described(source: object, at: list) -> dict:
    """What a page needs to know of an image block's `source` before asking for it: media type, decoded size,
    where it lies, and why it is not shown (None: shown)."""
    source = source if isinstance(source, dict) else {}
    media_type = source.get("media_type") if isinstance(source.get("media_type"), str) else "image"
    data = source.get("data")
    size = decoded_size(data) if isinstance(data, str) else 0
    if source.get("type") != "base64" or not isinstance(data, str):
        why = "not carried in the log" if source.get("type") != "base64" else "no data"
    elif media_type not in SHOWN_TYPES:
        why = f"{media_type} is not shown (only PNG, JPEG, GIF and WebP are)"
    elif size > IMAGE_LIMIT:
        why = f"too large to show ({size:,} bytes; at most {IMAGE_LIMIT:,})"
    elif not _looks_like(media_type, _head(data)):
        why = f"its bytes are not {media_type}"
    else:
        why = None
    return {"media_type": media_type, "size": size, "at": at, "hidden": why}


def _head(data: str) -> bytes:
    """The first 12 bytes a base64 text decodes to (b"" when it is not base64)."""
    try:
        return base64.b64decode(data[:16], validate=True)
    except (binascii.Error, ValueError):
        return b""


def _looks_like(media_type: str, data: bytes) -> bool:
    """Whether bytes start as their media type's do (a PNG claimed by a GIF's bytes is not shown)."""
    return data.startswith(_MAGIC[media_type]) and (media_type != "image/webp" or data[8:12] == b"WEBP")


def decoded_size(data: str) -> int:
    """Bytes a base64 text decodes to (without decoding it)."""
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def found(raw: object, at: list) -> object:
    """The value `at` names in a raw record (None when the record no longer has it)."""
    value = raw
    for key in at:
        if isinstance(value, dict) and isinstance(key, str):
            value = value.get(key)
        elif isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value):
            value = value[key]
        else:
            return None
    return value


def image_bytes(source: object) -> tuple[str, bytes] | None:
    """(media type, bytes) of an image block's source, or None when it may not be shown: not base64, not a
    shown type, over the cap, not valid base64, or bytes that are not of its media type."""
    info = described(source, [])
    if info["hidden"] is not None:
        return None
    try:
        data = base64.b64decode(source["data"], validate=True)
    except (binascii.Error, ValueError):
        return None
    if not _looks_like(info["media_type"], data):
        return None
    return info["media_type"], data
