"""Whether a built answer has its declared shape (shapes.py): every key the shape requires, none it does not
declare (unless open), and so on inside. The views check what they build by it in debug and test runs
(render.built); tests/web/test_web_shapes.py checks real answers with the same rule."""

from __future__ import annotations

import typing

from . import shapes


def nested_shape(hint):
    """The TypedDict a value's hint declares for it (directly, in a list, or in an optional), if any."""
    if typing.is_typeddict(hint):
        return hint
    for arg in typing.get_args(hint):
        found = nested_shape(arg)
        if found is not None:
            return found
    return None


def conforms(shape, value, where: str) -> None:
    """Raises AssertionError, saying where, when `value` does not have `shape`."""
    if not isinstance(value, dict):
        raise AssertionError(f"{where}: {value!r} is not an object")
    hints = typing.get_type_hints(shape)
    missing = shape.__required_keys__ - set(value)
    if missing:
        raise AssertionError(f"{where}: {shape.__name__} requires {sorted(missing)}")
    if shape not in shapes.OPEN:
        extra = set(value) - set(hints)
        if extra:
            raise AssertionError(f"{where}: {sorted(extra)} not declared in {shape.__name__}")
    for key, hint in hints.items():
        inner = nested_shape(hint)
        if inner is None or value.get(key) is None:
            continue
        items = value[key] if isinstance(value[key], list) else [value[key]]
        for i, item in enumerate(items):
            conforms(inner, item, f"{where}.{key}[{i}]")
