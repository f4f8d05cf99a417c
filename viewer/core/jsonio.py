"""JSON values read from logs, written back exactly: integers of any size, values of any depth.

orjson reads every line, but reads an integer beyond 64 bits as a float and writes at most 254 levels. So a line
that may hold such an integer is read again with the standard library (`settle`), a value nested deeper than
MAX_DEPTH is cut there (`cut`), and every answer is written by `answer`/`text`: orjson first, else a writer without
those limits. Lines of strings skip these checks (model.only_text).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

MAX_DEPTH = 100  # levels of nesting shown of a logged value; deeper parts are replaced by CUT
CUT = f"… cut: nested deeper than {MAX_DEPTH} levels"

# One byte scan finds both signs: digits become "0" (an integer beyond 64 bits has 20 or more),
# and both kinds of opening bracket become "[" (a value deeper than MAX_DEPTH has more than MAX_DEPTH).
_SIGNS = bytes.maketrans(b"0123456789{", b"0000000000[")
_LONG_NUMBER = b"0" * 20


def settle(data: bytes | str, value: Any) -> tuple[Any, bool]:
    """`value`, orjson's reading of `data`, with its integers exact; and whether it nests deeper than MAX_DEPTH.

    The same object when nothing is to change. A line both deeper than the standard library can read
    (about 900 levels) and holding a long integer keeps orjson's reading of that integer.
    """
    signs = (data if type(data) is bytes else data.encode("utf-8", errors="replace")).translate(_SIGNS)
    if _LONG_NUMBER not in signs:
        return value, signs.count(b"[") > MAX_DEPTH and deeper_than(value)
    if _may_hold_long_int(value):
        try:
            value = json.loads(data)
        except (RecursionError, ValueError):
            pass
    return value, signs.count(b"[") > MAX_DEPTH and deeper_than(value)


def _may_hold_long_int(value: Any) -> bool:
    """Whether orjson read a number as a float that may be an integer it could not keep (beyond 64 bits)."""
    stack = [value]
    while stack:
        current = stack.pop()
        if type(current) is float:
            if current.is_integer() and abs(current) >= 9.2e18:
                return True
        elif type(current) is dict:
            stack.extend(current.values())
        elif type(current) is list:
            stack.extend(current)
    return False


def loads(data: bytes | str) -> Any:
    """A JSON text parsed, integers exact (raises orjson.JSONDecodeError like orjson.loads)."""
    return settle(data, orjson.loads(data))[0]


def deeper_than(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a container lies more than `limit` levels down (`value` itself, if a container, is level 1)."""
    stack = [(value, 1)]
    while stack:
        current, level = stack.pop()
        children = current.values() if type(current) is dict else current if type(current) is list else None
        if children is None:
            continue
        if level > limit:
            return True
        stack.extend((child, level + 1) for child in children if type(child) in (dict, list))
    return False


def cut(value: Any, limit: int = MAX_DEPTH, in_place: bool = False) -> Any:
    """`value` with every container more than `limit` levels down replaced by CUT.

    A copy (sharing nothing it changed), or with `in_place` the value itself changed: the index cuts
    the events a format normalizer still holds (a message that grows is changed where it is).
    """
    if type(value) not in (dict, list):
        return value
    top = value if in_place else type(value)()
    stack = [(value, top, 1)]
    while stack:
        source, target, level = stack.pop()
        items = list(source.items()) if type(source) is dict else list(enumerate(source))
        if not in_place and type(target) is list:
            target.extend([None] * len(items))
        for key, child in items:
            if type(child) in (dict, list):
                if level >= limit:
                    child_copy = CUT
                else:
                    child_copy = child if in_place else type(child)()
                    stack.append((child, child_copy, level + 1))
            else:
                child_copy = child
            target[key] = child_copy
    return top


def answer(data: Any, indent: bool = False) -> bytes:
    """JSON bytes of an answer: orjson's, or when it refuses (deeper than 254, an integer beyond 64 bits),
    the same text written by `_write`."""
    option = orjson.OPT_INDENT_2 if indent else 0
    try:
        return orjson.dumps(data, option=option)
    except TypeError:
        return _write(data, indent)


def text(value: Any, indent: bool = False) -> str:
    """JSON text of a logged value, shown: nested deeper than MAX_DEPTH it is cut there (CUT marks where)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0).decode()
    except TypeError:
        return _write(cut(value) if deeper_than(value) else value, indent).decode()


def _write(value: Any, indent: bool) -> bytes:
    """JSON bytes as orjson writes them, for what it refuses: without recursion, integers exact.

    Each part orjson can write is written by it (indented to its place); only the containers on the
    way to what it refuses are written here, so the cost grows with those, not with the answer."""
    option = orjson.OPT_INDENT_2 if indent else 0
    colon = b": " if indent else b":"
    out: list[bytes] = []
    stack: list = [(value, 0)]  # (a value to write, its level) or bytes written as they are
    while stack:
        item = stack.pop()
        if type(item) is bytes:
            out.append(item)
            continue
        current, level = item
        try:
            written = orjson.dumps(current, option=option)
        except TypeError:
            pass
        else:
            out.append(written.replace(b"\n", b"\n" + _indent(level)) if indent and level else written)
            continue
        if isinstance(current, int):  # beyond 64 bits (orjson writes the others, and booleans)
            out.append(str(int(current)).encode())
            continue
        if isinstance(current, dict):
            pairs = [(orjson.dumps(str(k)) + colon, v) for k, v in current.items()]
            stack.extend(_container(b"{", b"}", pairs, level, indent))
        elif isinstance(current, (list, tuple)):
            stack.extend(_container(b"[", b"]", [(b"", v) for v in current], level, indent))
        else:  # a type orjson does not know: its text
            out.append(orjson.dumps(str(current)))
    return b"".join(out)


def _container(opening: bytes, closing: bytes, members: list, level: int, indent: bool) -> list:
    """The stack entries that write a container, in reverse (the stack pops the last first)."""
    if not members:
        return [opening + closing]
    inner = b"\n" + _indent(level + 1) if indent else b""
    entries: list = [opening]
    for i, (prefix, member) in enumerate(members):
        entries.append((b"," if i else b"") + inner + prefix)
        entries.append((member, level + 1))
    entries.append((b"\n" + _indent(level) if indent else b"") + closing)
    return entries[::-1]


def _indent(level: int) -> bytes:
    """Two spaces a level, up to MAX_DEPTH levels: deeper lines are not indented further (a tree thousands of
    levels deep would otherwise take space growing with the square of its depth)."""
    return b"  " * min(level, MAX_DEPTH)
