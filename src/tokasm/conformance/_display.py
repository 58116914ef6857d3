"""How values from a target are shown to a person: by ``repr``, abbreviated when long."""

from __future__ import annotations

__all__ = ["abbreviated", "first_difference", "show"]

_SHOW_LIMIT = 120  # characters of repr before a long value is abbreviated
_CONTEXT = 24  # characters either side of the first difference


def show(value: object) -> str:
    """``repr`` of a value, abbreviated in the middle when long, with its length."""
    text = repr(value)
    if len(text) <= _SHOW_LIMIT:
        return text
    half = _SHOW_LIMIT // 2
    length = f" (len {len(value)})" if isinstance(value, str) else ""
    return f"{text[:half]}...{text[-half:]}{length}"


def abbreviated(*values: str) -> bool:
    """Whether ``show`` cut any of these, so the difference itself may be hidden."""
    return any(len(repr(value)) > _SHOW_LIMIT for value in values)


def first_difference(expected: str, actual: str) -> str:
    """Where two texts first differ, with context either side."""
    index = next(
        (i for i, (e, a) in enumerate(zip(expected, actual, strict=False)) if e != a),
        min(len(expected), len(actual)),
    )
    start = max(0, index - _CONTEXT)
    return (
        f"\n  first difference at index {index} "
        f"(expected len {len(expected)}, actual len {len(actual)}):"
        f"\n    expected ...{expected[start : index + _CONTEXT]!r}"
        f"\n    actual   ...{actual[start : index + _CONTEXT]!r}"
    )
