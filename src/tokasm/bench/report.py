"""Render a sweep: a detailed table, a scenario x implementation matrix, and JSON."""

from __future__ import annotations

import platform
import sys
from typing import TYPE_CHECKING, Any

from .._versions import __version__
from .fit import FIT_POINTS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .sweep import Series, SweepSettings

__all__ = [
    "format_seconds",
    "format_size",
    "parse_size",
    "render_matrix",
    "render_table",
    "to_json",
]

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


def _implementation_label(series: Series, default: str | None) -> str:
    name = series.contender.name
    tags = ["default"] if name == default else []
    if series.contender.per_request:
        tags.append("per request")
    return f"{name} ({', '.join(tags)})" if tags else name


def _cell(series: Series, size: int) -> str:
    for point in series.points:
        if point.size == size:
            return format_seconds(point.per_operation)
    return "skip" if size in series.skipped else "-"


def _exponent_text(series: Series) -> str:
    exponent = series.exponent
    return "-" if exponent is None else f"{exponent:.2f}"


def render_table(results: Sequence[Series], settings: SweepSettings, default: str | None) -> str:
    """Per scenario: cost per operation at each size, exponent, verdict, peak memory."""
    sizes = sorted(settings.sizes)
    blocks: list[str] = []
    scenarios = list(dict.fromkeys(series.scenario for series in results))
    for scenario in scenarios:
        rows = [series for series in results if series.scenario is scenario]
        labels = [_implementation_label(series, default) for series in rows]
        width = max(len("implementation"), *(len(label) for label in labels))
        header = (
            f"{'implementation':<{width}}"
            + "".join(f"{format_size(size):>9}" for size in sizes)
            + f"{'exponent':>10}  {'verdict':<10}{'peak mem':>9}"
        )
        lines = [
            f"{scenario.name}: {scenario.summary} (time per {scenario.unit})",
            header,
            "-" * len(header),
        ]
        for label, series in zip(labels, rows, strict=True):
            cells = "".join(f"{_cell(series, size):>9}" for size in sizes)
            memory = "-" if series.memory is None else f"{series.memory.ratio:.1f}x"
            verdict = "ERROR" if series.error else series.verdict
            lines.append(
                f"{label:<{width}}{cells}{_exponent_text(series):>10}  {verdict:<10}{memory:>9}"
            )
            if series.error:
                lines.append(f"  {label} raised: {series.error}")
        blocks.append("\n".join(lines))
    legend = (
        f"exponent: log-log slope of time against size over the {FIT_POINTS} largest sizes run; "
        "skip: predicted over the time budget;\n"
        "peak mem: tracemalloc peak over one run at the largest size run, as a multiple of "
        "the final text size"
    )
    return "\n\n".join([*blocks, legend])


def render_matrix(results: Sequence[Series], default: str | None) -> str:
    """A Markdown table: one row per scenario, one column per implementation."""
    names = list(dict.fromkeys(series.contender.name for series in results))
    scenarios = list(dict.fromkeys(series.scenario.name for series in results))
    cell = {(s.scenario.name, s.contender.name): s for s in results}
    head = ["scenario", *(f"{name} (default)" if name == default else name for name in names)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for scenario in scenarios:
        row = [scenario]
        for name in names:
            series = cell.get((scenario, name))
            if series is None:
                row.append("n/a")
            elif series.exponent is None:
                row.append("ERROR" if series.error else "-")
            else:
                row.append(f"{_exponent_text(series)} {series.verdict}")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def to_json(
    results: Sequence[Series], settings: SweepSettings, default: str | None
) -> dict[str, Any]:
    """Everything measured, with the settings and the interpreter it was measured on."""
    return {
        "tokasm": __version__,
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "settings": {
            "sizes": sorted(settings.sizes),
            "repeats": settings.repeats,
            "budget_seconds": settings.budget,
            "batch_seconds": settings.batch,
            "fit_points": FIT_POINTS,
        },
        "default": default,
        "results": [
            {
                "scenario": series.scenario.name,
                "implementation": series.contender.name,
                "per_request": series.contender.per_request,
                "unit": series.scenario.unit,
                "points": [
                    {
                        "size": point.size,
                        "seconds": point.seconds,
                        "operations": point.operations,
                        "seconds_per_operation": point.per_operation,
                    }
                    for point in series.points
                ],
                "skipped_sizes": series.skipped,
                "exponent": series.exponent,
                "verdict": series.verdict,
                "error": series.error,
                "memory": None
                if series.memory is None
                else {
                    "size": series.memory_size,
                    "peak_bytes": series.memory.peak_bytes,
                    "text_bytes": series.memory.text_bytes,
                    "ratio": series.memory.ratio,
                },
            }
            for series in results
        ],
    }
