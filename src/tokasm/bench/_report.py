"""Render a sweep: a detailed table, a scenario x implementation matrix, and JSON."""

from __future__ import annotations

import platform
import sys
from typing import TYPE_CHECKING, Any

from tokasm._versions import __version__
from tokasm.bench._fit import FIT_POINTS
from tokasm.bench._sweep import MAX_TIME, over_max_time
from tokasm.bench._units import format_seconds, format_size

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tokasm.bench._measure import MemoryPeak
    from tokasm.bench._sweep import Point, Series, SweepSettings

__all__ = ["render_matrix", "render_table", "to_json"]

#: What a cell shows for a step that was not run, by the limit that skipped it.
_MARKERS = {MAX_TIME: "max-time"}
_SKIP = "skip"
#: ... or stopped: the worker hung or died there, and was killed.
_STOPPED = "stopped"


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
    skip = next((s for s in series.skips if s.size == size), None)
    if skip is None:
        return "-"
    return _STOPPED if skip.interrupted else _MARKERS.get(skip.limit, _SKIP)


def _memory_cell(series: Series) -> str:
    memory, size = series.memory, series.memory_size
    if not series.scenario.traced:
        return "n/a"
    if memory is None:  # not asked for, or predicted over the budget
        return "-"
    largest = series.points[-1].size
    return f"{memory.ratio:.1f}x" + ("" if size == largest else f"@{format_size(size or 0)}")


def _exponent_text(series: Series) -> str:
    fitted = series.fit
    if fitted.exponent is None:
        return "-"
    return f"{fitted.exponent:.2f}" + (f"±{fitted.error:.2f}" if fitted.error else "")


def _verdict_text(series: Series) -> str:
    return "ERROR" if series.error else series.verdict


def _legend(results: Sequence[Series], settings: SweepSettings) -> str:
    bound = "none" if settings.max_time is None else f"{settings.max_time:g} s"
    lines = [
        f"exponent: log-log slope of time against size over the {FIT_POINTS} largest sizes run "
        "(CPU time of the measuring thread, min of the batches), ± one standard error from the "
        "spread of the batches; per read or append: of the growth over the smallest size;",
        f"verdict: '-' with fewer than {FIT_POINTS} sizes; 'inconclusive' when the exponent "
        "± two errors spans two verdicts ('at least V' if all are worse than linear); "
        "'worse than quadratic' above 2.5; per read or append: 'constant' or 'grows' "
        "(with the text: in append_to_long, a stream at least quadratic);",
        f"{_SKIP}: predicted over the budget per run ({settings.budget:g} s, set-up included); "
        f"{_MARKERS[MAX_TIME]}: not run, it would have ended past --max-time ({bound});",
        "peak mem: tracemalloc peak over one run at the largest size timed, as a multiple of "
        "the final text size (@size: the largest size whose traced run fitted)",
    ]
    if any(skip.interrupted for series in results for skip in series.skips):
        lines.append(
            f"{_STOPPED}: its worker hung or died there and was killed (see the error line); "
            "the sizes above it skipped"
        )
    cut = len(over_max_time(results))
    if cut:
        lines.append(
            f"--max-time {bound} reached: {cut} steps not run (marked {_MARKERS[MAX_TIME]})"
        )
    return "\n".join(lines)


def render_table(results: Sequence[Series], settings: SweepSettings, default: str | None) -> str:
    """Per scenario: cost per operation at each size, exponent, verdict, peak memory."""
    blocks: list[str] = []
    scenarios = list(dict.fromkeys(series.scenario for series in results))
    verdict_width = max(len("verdict"), *(len(_verdict_text(series)) for series in results))
    for scenario in scenarios:
        rows = [series for series in results if series.scenario is scenario]
        sizes = scenario.sizes(settings.sizes)
        labels = [_implementation_label(series, default) for series in rows]
        width = max(len("implementation"), *(len(label) for label in labels))
        header = (
            f"{'implementation':<{width}}"
            + "".join(f"{format_size(size):>9}" for size in sizes)
            + f"{'exponent':>12}  {'verdict':<{verdict_width}}{'peak mem':>11}"
        )
        lines = [
            f"{scenario.name}: {scenario.summary} (time per {scenario.unit})",
            header,
            "-" * len(header),
        ]
        for label, series in zip(labels, rows, strict=True):
            cells = "".join(f"{_cell(series, size):>9}" for size in sizes)
            lines.append(
                f"{label:<{width}}{cells}{_exponent_text(series):>12}  "
                f"{_verdict_text(series):<{verdict_width}}{_memory_cell(series):>11}"
            )
            if series.error:
                lines.append(f"  {label} raised: {series.error}")
            for skip in series.skips:
                if skip.interrupted and skip.reason != series.error:
                    lines.append(f"  {label} stopped at {format_size(skip.size)}: {skip.reason}")
        blocks.append("\n".join(lines))
    return "\n\n".join([*blocks, _legend(results, settings)])


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
                row.append("ERROR" if series.error else series.verdict)
            else:
                row.append(f"{_exponent_text(series)} {series.verdict}")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def _memory_json(memory: MemoryPeak) -> dict[str, Any]:
    return {
        "peak_bytes": memory.peak_bytes,
        "text_bytes": memory.text_bytes,
        "ratio": memory.ratio,
        "traced_seconds": memory.seconds,
    }


def _point_json(point: Point) -> dict[str, Any]:
    return {
        "size": point.size,
        "seconds": point.seconds,
        "operations": point.operations,
        "seconds_per_operation": point.per_operation,
        "runs": point.runs,
        "setup_seconds": point.setup_seconds,
        "memory": None if point.memory is None else _memory_json(point.memory),
    }


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
            "max_time_seconds": settings.max_time,
            "probe_sizes": [],
        },
        "default": default,
        "max_time_reached": bool(over_max_time(results)),
        "results": [
            {
                "scenario": series.scenario.name,
                "implementation": series.contender.name,
                "per_request": series.contender.per_request,
                "unit": series.scenario.unit,
                "points": [_point_json(point) for point in series.points],
                "skipped_sizes": series.skipped,
                "skips": [
                    {
                        "size": s.size,
                        "phase": s.phase,
                        "limit": s.limit,
                        "reason": s.reason,
                        "interrupted": s.interrupted,
                    }
                    for s in series.skips
                ],
                "exponent": series.exponent,
                "exponent_error": series.fit.error,
                "verdict": series.verdict,
                "error": series.error,
                "memory": None
                if series.memory is None
                else {"size": series.memory_size, **_memory_json(series.memory)},
            }
            for series in results
        ],
    }
