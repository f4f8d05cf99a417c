"""Reading a request's query string: whole numbers, cursors, flags and agent lists, or a clear 400."""

from __future__ import annotations

import re

from flask import abort, request

from viewer.core import cursor
from viewer.reads.filters import is_on
from viewer.search.cursor_names import NAME as CURSOR_NAME

# Every number a query string carries (a position, a count, a page size, an event number, a
# cursor's parts) has at most this many digits: more than any log holds, fewer than would overflow
# an index or a JSON reader, so a 4,000-digit ?start= is a clear 400, never a 500 further on.
MAX_DIGITS = cursor.MAX_DIGITS
_WHOLE = re.compile(rf"\s*(-?)0*([0-9]{{1,{MAX_DIGITS}}})\s*")
_POSITION_CURSOR = cursor.PATTERN  # epoch-count, as pages are given
_SESSION_CURSOR = re.compile(rf"{_POSITION_CURSOR.pattern}|0+")  # a search cursor's part: 0 is that session's start
NOT_A_NUMBER = f"takes a whole number (at most {MAX_DIGITS} digits)"


def whole_number(text: str) -> int | None:
    """The whole number a query parameter's text holds, or None when it is not one (or is too long)."""
    match = _WHOLE.fullmatch(text)
    return None if match is None else int(match.group(1) + match.group(2))


def int_arg(name: str, default: int = 0, minimum: int = 0) -> int:
    """?name=N as a whole number no lower than `minimum`; 400 when it is not one."""
    if name not in request.args:
        return max(minimum, default)
    value = whole_number(request.args[name])
    if value is None:
        abort(400, f"?{name}= {NOT_A_NUMBER}.")
    return max(minimum, value)


_START = re.compile(r"\s*0+\s*")  # ?after=0: what clients of the API's first cursors (whole numbers) start with


def cursor_arg(name: str = "after") -> str | None:
    """A live feed's cursor (`epoch-count`, as the server gave it); 0, empty or absent: from the start (None)."""
    value = request.args.get(name)
    if not value or _START.fullmatch(value):
        return None
    if not _POSITION_CURSOR.fullmatch(value):
        abort(400, f"?{name}= takes a cursor this server gave (two whole numbers: epoch-count), or 0: from the start.")
    return value


def search_cursor_arg(name: str, per_session: re.Pattern | None = None) -> str | None:
    """A search cursor: `session=value` parts, comma-separated; each value a position (`from`) or,
    with `per_session`, a cursor matching it (`after`). 400 when a part is malformed."""
    value = request.args.get(name)
    for part in (value or "").split(","):
        _, _, number = part.rpartition("=")
        if part and not ((per_session or _WHOLE).fullmatch(number)):
            value_is = "epoch-count, or 0: from the start" if per_session else "position"
            abort(400, f"?{name}= takes a cursor this server gave (session={value_is}, comma-separated).")
    return value


def search_after_arg() -> str | None:
    """The search poll's cursor (`session=epoch-count`, comma-separated, or the name an answer gave a long one);
    0, empty or absent: from the start."""
    given = request.args.get("after") or "0"
    if _START.fullmatch(given):
        return None
    if CURSOR_NAME.fullmatch(given):
        return given
    return search_cursor_arg("after", _SESSION_CURSOR)


def flag_arg(name: str) -> bool:
    return is_on(request.args.get(name))


def agent_list_arg() -> list[str]:
    """`?agents=a,b` or repeated `?agents=a&agents=b` (the picker form), in the order given, each once."""
    chosen: list[str] = []
    for value in request.args.getlist("agents"):
        chosen.extend(a for a in value.split(",") if a and a not in chosen)
    return chosen
