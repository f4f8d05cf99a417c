"""Mask secrets in log content before it is shown: header values, bearer tokens, common key shapes.

What a pattern replaces never holds a quote or part of an escape sequence, so masking serialized JSON keeps it
valid JSON (the API masks its answers' bytes in one pass). The rules: docs/design.md, "What is masked".
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import itertools
import re
from contextvars import ContextVar

from ahocorasick_rs import BytesAhoCorasick, MatchKind

from . import jsonio

MASK = "[masked]"
# Whether text shown now is masked: set per request by security.install, and by `agentview export`.
ACTIVE: ContextVar[bool] = ContextVar("agentview_masking", default=False)

# A word starts here: at \b, or right after an escape of serialized JSON (\n, \f, \u001b...):
# serialized text is masked too, and a control character or an ANSI colour code before a key is no
# part of it.
_START = r"(?:(?<=\\[nrtbf])|(?<=\\u[0-9a-fA-F]{4})|\b)"
# A blank as ids write it inside a URL (%20, or + in a query string) or a session id (~20, see
# session_ids.session_id_for): a message or agent id holding a secret is printed in links too.
_ESCAPED_BLANK = r"[%~](?:20|0[9ad])|\+"
_SPACE = rf"(?:\s|{_ESCAPED_BLANK})"
# A line break or tab escaped in serialized JSON (\n), or twice (\\n: JSON text inside JSON, as tool
# arguments are, or a repr inside JSON, as error details are).
_ESCAPED_BREAK = r"(?:\\)+[nrt]"
# Blank between a field's name and its value: spaces and line breaks, raw or escaped, so
# `password:\n  value` is a field whose value is on the next line.
_GAP = rf"(?:\s|{_ESCAPED_BREAK}|{_ESCAPED_BLANK})*"
_EQUALS = r"[:=]|[%~]3[ad]"  # also as a URL or a session id escapes them
# Header-like fields whose value is a secret (seed 002: Authorization, x-api-key, ...). A cookie
# header's whole line is secret; other values end at whitespace (after an auth scheme) or punctuation.
# A name is a field's also inside a longer name (`DB_PASSWORD=`, `openai_api_key:`, or after an
# ANSI colour code): no word boundary is asked for before it.
_KEYS = (r"(?:proxy-)?authorization|x-api-key|api[-_]?key|x-auth-token|x-goog-api-key"
         r"|password|passwd|client[-_]secret|access[-_]token|refresh[-_]token")
_ALREADY_MASKED = rf"(?!{_GAP}(?:\[(?:redacted|masked|hidden)\]|\*{{3}}|<redacted>))"
# A value ends where another field begins (`key: k3y(query=password: p4ss)`: both are masked).
_NOT_A_FIELD = rf"(?!(?:{_KEYS}|set-cookie|cookie){_GAP}(?:{_EQUALS}))"
_VALUE = rf"(?:(?:bearer|basic|token|digest)\s+)?(?:{_NOT_A_FIELD}[^\s\"'\\`<>,;]){{3,}}"
_COOKIE_VALUE = r"[^\"'\\\r\n]{3,}"


def _field(separator_quote: str) -> str:
    """Key, separator and value; `separator_quote` is what may quote the value (see the two uses)."""
    # Between key and value: a JSON member's `": "`, or `: ` / `=` inside text, optionally quoted.
    sep = rf"\"\s*:\s*\"|(?:{separator_quote})?{_GAP}(?:{_EQUALS}){_GAP}(?:{separator_quote})?"
    return (rf"(?P<key>{_KEYS})(?P<sep>{sep}){_ALREADY_MASKED}(?P<value>{_VALUE})"
            rf"|(?P<ckey>set-cookie|cookie)(?P<csep>{sep}){_ALREADY_MASKED}(?P<cvalue>{_COOKIE_VALUE})")


# In serialized JSON a raw quote ends a string, so inside text only an escaped quote (\") may be taken.
_FIELD_TEXT = _field(r"\\?[\"']")
_FIELD_JSON = _field(r"\\[\"']|'")
# Tokens recognisable by their shape wherever they appear, as (prefix, characters of the random
# part, how many); the first few characters stay visible.
_TOKENS = (
    (rf"Bearer{_SPACE}+", r"[A-Za-z0-9._~+/=-]", "{8,}"),
    (r"sk-(?:proj-|ant-(?:api\d\d-)?|live[-_]|test[-_])?", r"[A-Za-z0-9_-]", "{16,}"),
    (r"(?-i:AKIA|ASIA)", r"(?-i:[0-9A-Z])", "{16}"),  # AWS key ids are upper case: "Eurasian..." is not one
    (r"gh[pousr]_", r"[A-Za-z0-9]", "{30,}"),
    (r"github_pat_", r"[A-Za-z0-9_]", "{30,}"),
    (r"xox[abposr]-", r"[A-Za-z0-9-]", "{10,}"),
    (r"AIza", r"[0-9A-Za-z_-]", "{35}"),
    (r"glpat-", r"[A-Za-z0-9_-]", "{20,}"),
)


def _token(prefix: str, chars: str, count: str) -> str:
    r"""A key shape. At a word's start any such token is a key. Glued to a letter or digit before it
    (run into a word: `keysk-proj-...`, or after an ANSI colour code: `\x1b[32msk-proj-...`) only
    one whose random part holds a digit, as generated keys do: `tasks-for-the-next-agent` stays."""
    return rf"{_START}{prefix}{chars}{count}|{prefix}(?={chars}*?[0-9]){chars}{count}"


# A PEM private key runs to its END line; without one, to the end of its text (or of its JSON
# string: key material holds no quote or backslash), so a key cut short is still masked whole.
_PEM_BODY = rf"(?:[^\"\\]|{_ESCAPED_BREAK})"
_PEM_LINE = rf"(?:[A-Z]|{_SPACE})*PRIVATE{_SPACE}KEY-----"
_PEM = rf"-----BEGIN{_PEM_LINE}(?:{_PEM_BODY}*?-----END{_PEM_LINE}|{_PEM_BODY}*)"
_SHAPES = [_token(*token) for token in _TOKENS] + [_PEM]


@functools.cache
def _pattern(serialized: bool) -> re.Pattern:
    """Every secret, in text or in serialized JSON's bytes: compiled when a text first holds a trigger (some 20 ms
    each), not at every start (most text holds none: a server that lists sessions may never need them)."""
    if serialized:
        return re.compile("|".join([f"(?:{_FIELD_JSON})", *_SHAPES]).encode(), re.IGNORECASE)
    return re.compile("|".join([f"(?:{_FIELD_TEXT})", *_SHAPES]), re.IGNORECASE)


# Every match holds one of these (lowercased), at most _BACK characters after the match starts.
# Finding them with str.find is a hundred times faster than running the pattern everywhere,
# and most text holds none, so masking costs almost nothing when there is nothing to mask.
_TRIGGERS = ("authoriz", "api-key", "api_key", "apikey", "auth-token", "access_token", "access-token",
             "refresh_token", "refresh-token", "cookie",
             "password", "passwd", "secret", "bearer", "sk-", "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
             "github_pat_", "xox", "aiza", "glpat-", "-----begin")
_BACK = 7  # the farthest: "secret" in client_secret, "api-key" in x-goog-api-key (a PEM key starts with its trigger)
_SHORTEST = 11  # no secret the patterns know fits in fewer characters


# On short text one regex search costs less than a find per trigger; on long text the finds win.
_TRIGGER_PATTERN = re.compile("|".join(re.escape(t) for t in _TRIGGERS))
_SHORT = 256
# Serialized JSON (an API answer, a shared file's data: megabytes) is searched for every trigger at once: a
# leftmost-first search skips ahead over bytes no trigger starts with, and what starts inside a match it gives (a
# trigger overlapping another) is looked for there, so every occurrence is found, as finds would find them.
_TRIGGER_SEARCH = BytesAhoCorasick([t.encode() for t in _TRIGGERS], matchkind=MatchKind.LeftmostFirst)
_TRIGGER_OVERLAPS = BytesAhoCorasick([t.encode() for t in _TRIGGERS])  # every occurrence, overlapping ones too
_LONGEST_TRIGGER = max(map(len, _TRIGGERS))


def trigger_starts(lowered: bytes) -> list[int]:
    """Where each trigger occurs in lower-cased bytes: every occurrence, overlapping ones too (not sorted)."""
    starts = []
    for _, start, end in _TRIGGER_SEARCH.find_matches_as_indexes(lowered):
        starts.append(start)
        inside = memoryview(lowered)[start + 1 : end + _LONGEST_TRIGGER - 1]
        starts += [start + 1 + at for _, at, _ in _TRIGGER_OVERLAPS.find_matches_as_indexes(inside, overlapping=True)
                   if at < end - start - 1]
    return starts


def _matches(text, lowered) -> list[re.Match]:
    if isinstance(lowered, str) and len(lowered) < _SHORT:
        candidates = [m.start() for m in _TRIGGER_PATTERN.finditer(lowered)]
    elif isinstance(lowered, bytes):
        candidates = trigger_starts(lowered)
    else:
        candidates = []
        for trigger in _TRIGGERS:
            i = lowered.find(trigger)
            while i >= 0:
                candidates.append(i)
                i = lowered.find(trigger, i + 1)
    if not candidates:
        return []
    pattern = _pattern(isinstance(text, bytes))
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


def unmasked(texts) -> set[str]:
    """Those of `texts` that `mask` gives back as they are (no trigger in them), found by one search over them all: a
    page printing hundreds of names and ids masks only those holding one."""
    texts = [text for text in dict.fromkeys(texts) if type(text) is str]
    joined = "\0".join(texts)  # no trigger holds a NUL: none is found across two texts
    lowered = joined.lower()
    if len(lowered) != len(joined):  # a character lowercases to two (see `_secrets`): each is masked alone
        return set()
    # The one-pass search of serialized JSON, over UTF-8: the triggers are ASCII, and no byte of a character beyond
    # it is one (a regular expression over a name of one such character took 4 ms for a tree of 300 agents)
    encoded = lowered.encode("utf-8", "surrogatepass")
    hits = [start for _, start, _ in _TRIGGER_SEARCH.find_matches_as_indexes(encoded)]
    if not hits:
        return set(texts)
    ends = list(itertools.accumulate(len(text) + 1 for text in texts))
    if len(encoded) != len(lowered):  # where each text's bytes end: each character lowercased to one (see above)
        ends = list(itertools.accumulate(len(lowered[end - len(text) - 1:end - 1].encode("utf-8", "surrogatepass"))
                                         + 1 for text, end in zip(texts, ends)))
    held = {bisect.bisect_right(ends, at) for at in hits}
    return {text for i, text in enumerate(texts) if i not in held}


def _mask(text: str) -> str:
    matches = _secrets(text)
    return _replace(text, matches, _masked, "") if matches else text


def _secrets(text: str) -> list[re.Match]:
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters lowercase to two: positions would shift
        return list(_pattern(False).finditer(text))
    return _matches(text, lowered)


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where the secrets in a text are (start, end), for a cut that must not split one."""
    return [match.span() for match in _secrets(text)] if len(text) >= _SHORTEST else []


def mask_json(data: bytes) -> bytes:
    """Serialized JSON with its secrets masked; still valid JSON."""
    matches = _matches(data, data.lower())
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


def shown_value(value) -> str:
    """Any value from the log as it is printed: a string as it is, anything else (a `role` that is a
    list, say) as JSON, never as Python's repr of it; masked either way (see `shown`)."""
    if isinstance(value, str):
        return shown(value)
    try:
        return shown(jsonio.text(value))
    except TypeError:  # holds what JSON cannot
        return "[a value that cannot be shown]"


def shown_json(data: bytes) -> bytes:
    return mask_json(data) if ACTIVE.get() else data


@contextlib.contextmanager
def masking(on: bool = True):
    token = ACTIVE.set(on)
    try:
        yield
    finally:
        ACTIVE.reset(token)


class ShownOnce:
    """`shown_as(value)` for values that repeat (a log's agent ids, roles and names; a delivery's text, once for
    each listener), each masked once: kept per masking state (`now()` picks the one in force), at most `limit`
    of them (emptied when full: what repeats, repeats soon)."""

    def __init__(self, shown_as, limit: int):
        self.shown_as, self.limit = shown_as, limit
        self._by_state: dict[bool, dict] = {}
        self.now()

    def now(self) -> None:
        self.values = self._by_state.setdefault(ACTIVE.get(), {})

    def __call__(self, value):
        shown = self.values.get(value)
        if shown is None:
            if len(self.values) >= self.limit:
                self.values.clear()
            shown = self.values[value] = self.shown_as(value)
        return shown
