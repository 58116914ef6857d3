"""Render a sweep: a detailed table, a scenario x implementation matrix, JSON, a plot."""

from __future__ import annotations

import math
import platform
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from tokasm._versions import __version__
from tokasm.bench._measure import FIT_POINTS, GROWTH, format_seconds, format_size
from tokasm.bench._sweep import BUDGET, MAX_TIME, over_max_time
from tokasm.bench.scenarios import APPENDS
from tokasm.errors import ReportError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from tokasm.bench._measure import MemoryPeak
    from tokasm.bench._sweep import Point, Series, SweepSettings

__all__ = ["check_plot", "render_matrix", "render_table", "to_json", "write_plot"]

#: What a cell shows for a step not run (by the limit that skipped it), or stopped (killed).
_SKIP, _STOPPED = "skip", "stopped"
_SKIPPED = {BUDGET: _SKIP, MAX_TIME: MAX_TIME}


def _row(series: Series, sizes: Sequence[int], default: str | None) -> list[str]:
    """Label, cost per operation at each size, exponent, growth, verdict, peak memory."""
    name, texts, traced = series.bench_target.name, series.texts, series.traced
    tags = ["default"] * (name == default) + ["per request"] * series.bench_target.per_request
    shown = {s.size: _STOPPED if s.interrupted else _SKIPPED[s.limit] for s in series.skips[::-1]}
    shown |= {point.size: format_seconds(point.per_operation) for point in series.points}
    cells = [f"{name} ({', '.join(tags)})" if tags else name, *(shown.get(n, "-") for n in sizes)]
    growth = f"x{texts[-1].seconds / texts[0].seconds:.3g}" if len(texts) > 1 else "-"
    memory = "-"  # not asked for, or predicted over the budget
    if traced and traced.memory:
        at = "" if traced is series.points[-1] else f"@{format_size(traced.size)}"
        memory = f"{traced.memory.ratio:.1f}x{at}"
    return [*cells, _exponent_text(series), growth if series.scenario.on_long_texts else "n/a",
            _verdict_text(series), memory if series.scenario.traced else "n/a"]  # fmt: skip


def _exponent_text(series: Series) -> str:
    fit = series.fit
    return "-" if fit.exponent is None else f"{fit.exponent:.2f}±{fit.error:.2f}"


def _verdict_text(series: Series) -> str:
    return "ERROR" if series.error else series.fit.verdict


def _legend(results: Sequence[Series], settings: SweepSettings) -> str:
    bound = "none" if settings.max_time is None else f"{settings.max_time:g} s"
    lines = [
        "exponent: log-log slope of time against size over the sizes run within 8x of the "
        "largest (CPU time of the measuring thread, every size timed once a round: the slope "
        "through each size's fastest batch), ± its error from the spread of the rounds' slopes; "
        "per read or append: of the cost of one over every size;",
        f"long text: the cost of {APPENDS} events of the scenario on a message of "
        f"{format_size(settings.texts[-1])} characters (the longest timed) as a multiple of "
        f"their cost on one of {format_size(settings.texts[0])};",
        f"verdict: 'inconclusive' when the exponent ± two errors spans two verdicts ('at least "
        "V' if all are worse than linear), '-' with fewer than 3 sizes; 'worse than quadratic' "
        f"above 2.5; per read or append: 'constant' or 'grows' (at least {GROWTH:g}x over the "
        "sizes; in append_to_long, with the text: a stream at least quadratic); with a long "
        "text: 'linear' if the cost of an event stays within that there, 'quadratic' if it grows "
        "(a copy of the text per event), unless the exponent ± two errors is worse;",
        f"{_SKIP}: predicted over the budget per run ({settings.budget:g} s, set-up included); "
        f"{MAX_TIME}: not run, it would have ended past --max-time ({bound});",
        "peak mem: tracemalloc peak over one run, as a multiple of the final text size, at the "
        "largest size whose traced run fits a fifth of the budget (@size: not the largest run)",
    ]
    if any(skip.interrupted for series in results for skip in series.skips):
        lines.append(
            f"{_STOPPED}: its worker hung or died there and was killed (see the error line); "
            "the sizes above it skipped"
        )
    if cut := len(over_max_time(results)):
        lines.append(f"--max-time {bound} reached: {cut} steps not run (marked {MAX_TIME})")
    return "\n".join(lines)


def _line(cells: list[str], width: int, verdict_width: int) -> str:
    label, *at, exponent, growth, verdict, memory = cells
    return (f"{label:<{width}}{''.join(f'{cell:>9}' for cell in at)}{exponent:>12}{growth:>11}  "
            f"{verdict:<{verdict_width}}{memory:>11}")  # fmt: skip


def render_table(results: Sequence[Series], settings: SweepSettings, default: str | None) -> str:
    """A table per scenario, a row per implementation (``_row``), then the legend."""
    blocks: list[str] = []
    verdict_width = max(len("verdict"), *(len(_verdict_text(series)) for series in results))
    for scenario in dict.fromkeys(series.scenario for series in results):
        sizes = scenario.sizes(settings.sizes, settings.texts)
        rows = [(s, _row(s, sizes, default)) for s in results if s.scenario is scenario]
        head = ["implementation", *map(format_size, sizes), "exponent", "long text", "verdict"]
        widths = (max(len(row[0]) for row in [head, *(row for _, row in rows)]), verdict_width)
        header = _line([*head, "peak mem"], *widths)
        lines = [f"{scenario.name}: {scenario.summary} (time per {scenario.unit})", header]
        lines.append("-" * len(header))
        for series, row in rows:
            lines.append(_line(row, *widths))
            if series.error:
                lines.append(f"  {row[0]} raised: {series.error}")
            for skip in series.skips:
                if skip.interrupted and skip.reason != series.error:
                    lines.append(f"  {row[0]} stopped at {format_size(skip.size)}: {skip.reason}")
        blocks.append("\n".join(lines))
    return "\n\n".join([*blocks, _legend(results, settings)])


def render_matrix(results: Sequence[Series], default: str | None) -> str:
    """A Markdown table: one row per scenario, one column per implementation."""
    names = list(dict.fromkeys(series.bench_target.name for series in results))
    shown = {
        (s.scenario.name, s.bench_target.name): (
            _verdict_text(s) if s.fit.exponent is None else f"{_exponent_text(s)} {s.fit.verdict}"
        )
        for s in results
    }
    head = ["scenario", *(f"{name} (default)" if name == default else name for name in names)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for scenario in dict.fromkeys(series.scenario.name for series in results):
        row = [scenario, *(shown.get((scenario, name), "n/a") for name in names)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def _points_json(points: list[Point]) -> list[dict[str, Any]]:
    return [
        {**asdict(point), "seconds": point.seconds, "seconds_per_operation": point.per_operation,
         "runs": len(point.batches), "memory": _memory_json(point.memory)}
        for point in points
    ]  # fmt: skip


def _memory_json(memory: MemoryPeak | None) -> dict[str, Any] | None:
    return None if memory is None else {**asdict(memory), "ratio": memory.ratio}


def _series_json(series: Series) -> dict[str, Any]:
    (fitted, growth), traced = series.verdicts(), series.traced
    return {
        "scenario": series.scenario.name,
        "implementation": series.bench_target.name,
        "per_request": series.bench_target.per_request,
        "unit": series.scenario.unit,
        "points": _points_json(series.points),
        "skipped_sizes": [skip.size for skip in series.skips],
        "skips": [{"size": skip.size, "phase": "time", **asdict(skip)} for skip in series.skips],
        "exponent": fitted.exponent,
        "exponent_error": fitted.error,
        "verdict": fitted.verdict,
        "error": series.error,
        "memory": traced and {"size": traced.size, **(_memory_json(traced.memory) or {})},
        "long_text": growth and {"points": _points_json(series.texts), "exponent": growth.exponent,
                                 "exponent_error": growth.error, "verdict": growth.verdict},
    }  # fmt: skip


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
            "long_texts": list(settings.texts),
        },
        "default": default,
        "max_time_reached": bool(over_max_time(results)),
        "results": [_series_json(series) for series in results],
    }


_COLUMNS = 4  # panels per row of the plot


def check_plot(path: Path) -> None:
    """ReportError now, before measuring, if ``path`` cannot be written (type, matplotlib)."""
    if path.suffix.lower() not in (".png", ".svg"):
        raise ReportError(f"--plot {path}: the file name must end in .png or .svg")
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError:
        raise ReportError(
            "--plot needs matplotlib: pip install matplotlib (or, from a clone of tokasm, "
            "pip install '.[plot]')"
        ) from None


def write_plot(results: Sequence[Series], path: Path, default: str | None) -> None:
    """Write the plot to ``path``, which ``check_plot`` has passed."""
    from matplotlib.figure import Figure

    scenarios = list(dict.fromkeys(series.scenario for series in results))
    rows = max(1, math.ceil(len(scenarios) / _COLUMNS))
    figure = Figure(figsize=(4.2 * _COLUMNS, 3.6 * rows), layout="constrained")
    axes = figure.subplots(rows, _COLUMNS, squeeze=False).flatten()
    for axis, scenario in zip(axes, scenarios, strict=False):
        shown = [series for series in results if series.scenario is scenario and series.points]
        for series in shown:
            name = series.bench_target.name
            label, width = (f"{name} (default)", 2.5) if name == default else (name, 1.2)
            sizes, seconds = [p.size for p in series.points], [p.seconds for p in series.points]
            axis.plot(sizes, seconds, marker="o", linewidth=width, label=label)
        axis.set(xscale="log", yscale="log", ylabel="seconds per run")
        axis.set_title(scenario.name, fontsize=10)
        axis.set_xlabel("characters of text" if scenario.text_sizes else "deltas (n)")
        ticks = sorted({point.size for series in shown for point in series.points})
        axis.set_xticks(ticks, [format_size(size) for size in ticks])
        axis.grid(True, which="both", alpha=0.3)
    for axis in axes[len(scenarios) :]:
        axis.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 7))
    figure.savefig(path)
