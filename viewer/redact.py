"""Mask secrets in log content before it is shown: header values, bearer tokens, common key shapes.

Patterns never match a quote or a backslash, so masking serialized JSON keeps it valid JSON
(the API masks its response bytes in one pass). `MASK` holds neither either.
"""

from __future__ import annotations

import contextlib
import functools
import re
from contextvars import ContextVar

MASK = "[masked]"
# Whether text shown now is masked: set per request by security.install, and by `agentview export`.
ACTIVE: ContextVar[bool] = ContextVar("agentview_masking", default=False)

# A word starts here: at \b, or right after a JSON escape such as \n (serialized text is masked too).
_START = r"(?:(?<=\\[nrt])|\b)"
# Header-like fields whose value is a secret (seed 002: Authorization, x-api-key, ...). A cookie
# header's whole line is secret; other values end at whitespace (after an auth scheme) or punctuation.
_KEYS = (r"(?:proxy-)?authorization|x-api-key|api[-_]?key|x-auth-token|x-goog-api-key"
         r"|password|passwd|client[-_]secret|access[-_]token|refresh[-_]token")
_ALREADY_MASKED = r"(?!\s*(?:\[(?:redacted|masked|hidden)\]|\*{3}|<redacted>))"
_VALUE = r"(?:(?:bearer|basic|token|digest)\s+)?[^\s\"'\\`<>,;]{3,}"
_COOKIE_VALUE = r"[^\"'\\\r\n]{3,}"


def _field(separator_quote: str) -> str:
    """Key, separator and value; `separator_quote` is what may quote the value (see the two uses)."""
    # Between key and value: a JSON member's `": "`, or `: ` / `=` inside text, optionally quoted.
    sep = rf"\"\s*:\s*\"|(?:{separator_quote})?\s*[:=]\s*(?:{separator_quote})?"
    return (rf"(?P<key>{_KEYS})(?P<sep>{sep}){_ALREADY_MASKED}(?P<value>{_VALUE})"
            rf"|(?P<ckey>set-cookie|cookie)(?P<csep>{sep}){_ALREADY_MASKED}(?P<cvalue>{_COOKIE_VALUE})")


# In serialized JSON a raw quote ends a string, so inside text only an escaped quote (\") may be taken.
_FIELD_TEXT = _field(r"\\?[\"']")
_FIELD_JSON = _field(r"\\[\"']|'")
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
)] + [r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?:[^\"\\]|\\[nrt])*?-----END [A-Z ]*PRIVATE KEY-----"]
_PATTERN = re.compile("|".join([f"{_START}(?:{_FIELD_TEXT})", *_SHAPES]), re.IGNORECASE)
_PATTERN_BYTES = re.compile("|".join([f"{_START}(?:{_FIELD_JSON})", *_SHAPES]).encode(), re.IGNORECASE)

# Every match holds one of these (lowercased), at most _BACK characters after the match starts.
# Finding them with str.find is a hundred times faster than running the pattern everywhere,
# and most text holds none, so masking costs almost nothing when there is nothing to mask.
_TRIGGERS = ("authoriz", "api-key", "api_key", "apikey", "auth-token", "access_token", "access-token",
             "refresh_token", "refresh-token", "cookie",
             "password", "passwd", "secret", "bearer", "sk-", "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
             "github_pat_", "xox", "aiza", "glpat-", "private key")
_BACK = 24
_SHORTEST = 11  # no secret the patterns know fits in fewer characters


_TRIGGER_BYTES = tuple(t.encode() for t in _TRIGGERS)
# On short text one regex search costs less than a find per trigger; on long text the finds win.
_TRIGGER_PATTERN = re.compile("|".join(re.escape(t) for t in _TRIGGERS))
_SHORT = 256


def _matches(text, lowered, pattern) -> list[re.Match]:
    if isinstance(lowered, str) and len(lowered) < _SHORT:
        candidates = [m.start() for m in _TRIGGER_PATTERN.finditer(lowered)]
    else:
        candidates = []
        for trigger in _TRIGGER_BYTES if isinstance(lowered, bytes) else _TRIGGERS:
            i = lowered.find(trigger)
            while i >= 0:
                candidates.append(i)
                i = lowered.find(trigger, i + 1)
    if not candidates:
        return []
    found, covered = [], 0
    for candidate in sorted(candidates):
        for start in range(max(covered, candidate - _BACK), candidate + 1):
            match = pattern.match(text, start)
            if match:
                found.append(match)
                covered = match.end()
                break
    return found


def _replace(text, matches, masked, empty):
    pieces, last = [], 0
    for match in matches:
        pieces += [text[last : match.start()], masked(match)]
        last = match.end()
    return empty.join(pieces) + text[last:]


def mask(text: str) -> str:
    """The text with every secret it holds replaced (cheap when there is none)."""
    if len(text) < _SHORTEST:
        return text
    if len(text) < _SHORT:  # names, ids, labels: printed again and again on every page
        return _mask_short(text)
    return _mask(text)


@functools.lru_cache(maxsize=8192)
def _mask_short(text: str) -> str:
    return _mask(text)


def _mask(text: str) -> str:
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters lowercase to two: positions would shift
        return _PATTERN.sub(_masked, text)
    matches = _matches(text, lowered, _PATTERN)
    return _replace(text, matches, _masked, "") if matches else text


def mask_json(data: bytes) -> bytes:
    """Serialized JSON with its secrets masked; still valid JSON."""
    matches = _matches(data, data.lower(), _PATTERN_BYTES)
    return _replace(data, matches, lambda m: _masked(_DecodedMatch(m)).encode(), b"") if matches else data


def _masked(match: re.Match) -> str:
    for key, sep in (("key", "sep"), ("ckey", "csep")):
        if match.group(key):
            return f"{match.group(key)}{match.group(sep)}{MASK}"
    token = match.group(0)
    if token.startswith("-----"):
        return MASK
    visible = token.split()[0] + " " if token[:6].lower() == "bearer" else token[:4]
    return f"{visible}…{MASK}"


class _DecodedMatch:
    """A bytes match seen as text, so one function words both masks."""

    def __init__(self, match: re.Match):
        self._match = match

    def group(self, name: int | str = 0) -> str | None:
        value = self._match.group(name)
        return None if value is None else value.decode("utf-8", errors="replace")


def shown(text: str) -> str:
    """Log text as it may be shown now: masked while masking is active.

    For text that is cut or marked up before it is printed (snippets, diffs, labels), mask the
    whole first, so no cut leaves part of a secret and no markup splits one.
    """
    return mask(text) if ACTIVE.get() else text


def shown_json(data: bytes) -> bytes:
    return mask_json(data) if ACTIVE.get() else data


@contextlib.contextmanager
def masking(on: bool = True):
    token = ACTIVE.set(on)
    try:
        yield
    finally:
        ACTIVE.reset(token)
