"""Mask secrets in log content before it is shown: header values, bearer tokens, common key shapes.

Patterns never match a quote or a backslash, so masking serialized JSON keeps it valid JSON
(the API masks its response bytes in one pass). `MASK` holds neither either.
"""

from __future__ import annotations

import re

MASK = "[masked]"

# A word starts here: at \b, or right after a JSON escape such as \n (serialized text is masked too).
_START = r"(?:(?<=\\[nrt])|\b)"
# Header-like fields whose whole value is a secret (seed 002: Authorization, x-api-key, ...).
_HEADER = (
    _START + r"(?P<key>(?:proxy-)?authorization|x-api-key|api[-_]?key|x-auth-token|x-goog-api-key"
    r"|set-cookie|cookie|password|client[-_]secret|access[-_]token|refresh[-_]token)"
    r"(?P<sep>(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?)"
    r"(?!\s*(?:\[(?:redacted|masked|hidden)\]|\*{3}|<redacted>))(?P<value>[^\"'\\\r\n]{3,})"
)
# Tokens recognisable by their shape wherever they appear; the first few characters stay visible.
_SHAPES = [_START + shape for shape in (
    r"Bearer\s+[A-Za-z0-9._~+/=-]{8,}",
    r"sk-(?:proj-|ant-(?:api\d\d-)?|live[-_]|test[-_])?[A-Za-z0-9_-]{16,}",
    r"(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"gh[pousr]_[A-Za-z0-9]{30,}",
    r"github_pat_[A-Za-z0-9_]{30,}",
    r"xox[abposr]-[A-Za-z0-9-]{10,}",
    r"AIza[0-9A-Za-z_-]{35}",
    r"glpat-[A-Za-z0-9_-]{20,}",
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[^\"\\]*?-----END [A-Z ]*PRIVATE KEY-----",
)]
_PATTERN = re.compile(_HEADER + "|" + "|".join(f"(?:{p})" for p in _SHAPES), re.IGNORECASE)
_PATTERN_BYTES = re.compile(_PATTERN.pattern.encode(), re.IGNORECASE)


def _masked(match: re.Match) -> str:
    if match.group("key"):
        return f"{match.group('key')}{match.group('sep')}{MASK}"
    token = match.group(0)
    if token.startswith("-----"):
        return MASK
    visible = token.split()[0] + " " if token[:6].lower() == "bearer" else token[:4]
    return f"{visible}…{MASK}"


def mask(text: str) -> str:
    """The text with every secret it holds replaced (cheap when there is none)."""
    return _PATTERN.sub(_masked, text)


def mask_json(data: bytes) -> bytes:
    """Serialized JSON with its secrets masked; still valid JSON."""
    return _PATTERN_BYTES.sub(lambda m: _masked_bytes(m), data)


def _masked_bytes(match: re.Match) -> bytes:
    return _masked(_DecodedMatch(match)).encode()


class _DecodedMatch:
    """A bytes match seen as text, so one function words both masks."""

    def __init__(self, match: re.Match):
        self._match = match

    def group(self, name: int | str = 0) -> str | None:
        value = self._match.group(name)
        return None if value is None else value.decode("utf-8", errors="replace")
