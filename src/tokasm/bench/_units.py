"""Sizes and durations as people write them: ``4k`` deltas, ``12.5ms``.

Shared by the sweep (progress and skip reasons), the renderers and the
command-line parser, so none of them imports another for a formatter.
"""

from __future__ import annotations

__all__ = ["format_seconds", "format_size", "parse_size"]

_SUFFIXES = (("M", 1_000_000), ("k", 1_000))


def format_size(size: int) -> str:
    """``256000`` -> ``256k``, ``1000000`` -> ``1M``; other numbers as they are."""
    for suffix, factor in _SUFFIXES:
        if size >= factor and size % factor == 0:
            return f"{size // factor}{suffix}"
    return str(size)


def parse_size(text: str) -> int:
    """``4k`` -> 4000, ``1M`` -> 1000000, ``500`` -> 500; ValueError if not a positive size."""
    stripped = text.strip()
    factor = 1
    for suffix, value in _SUFFIXES:
        if stripped.endswith((suffix, suffix.lower())):
            stripped, factor = stripped[:-1], value
            break
    size = int(stripped) * factor
    if size < 1:
        raise ValueError(f"size must be at least 1, got {text!r}")
    return size


def format_seconds(seconds: float) -> str:
    """A duration in the unit that keeps three significant digits readable."""
    for unit, factor in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= factor * 0.9995:  # 999.7ns rounds to "1us", never "1e+03ns"
            return f"{seconds / factor:.3g}{unit}"
    return f"{seconds / 1e-9:.3g}ns"
