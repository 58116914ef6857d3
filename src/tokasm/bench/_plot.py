"""Plot a sweep: log-log time against size, one panel per scenario, one line per implementation.

matplotlib is the optional extra ``plot``; without it, ``PlotError`` says how
to install it. The figure is drawn without pyplot, so no display is needed.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from tokasm.bench._units import format_size
from tokasm.errors import ReportError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from tokasm.bench._sweep import Series

__all__ = ["PLOT_FORMATS", "PlotError", "check_plot", "write_plot"]

PLOT_FORMATS = (".png", ".svg")
_COLUMNS = 4


class PlotError(ReportError):
    """The plot cannot be written: matplotlib missing, or an unsupported file type."""


def check_plot(path: Path) -> None:
    """Raise PlotError now if ``path`` cannot be written later (type, matplotlib)."""
    if path.suffix.lower() not in PLOT_FORMATS:
        raise PlotError(f"--plot {path}: the file name must end in .png or .svg")
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError:
        raise PlotError(
            "--plot needs matplotlib: pip install matplotlib (or, from a clone of tokasm, "
            "pip install '.[plot]')"
        ) from None


def write_plot(results: Sequence[Series], path: Path, default: str | None) -> None:
    """Write the plot to ``path`` (.png or .svg)."""
    check_plot(path)
    from matplotlib.figure import Figure

    scenarios = list(dict.fromkeys(series.scenario for series in results))
    rows = max(1, math.ceil(len(scenarios) / _COLUMNS))
    figure = Figure(figsize=(4.2 * _COLUMNS, 3.6 * rows), layout="constrained")
    axes = figure.subplots(rows, _COLUMNS, squeeze=False).flatten()
    for axis, scenario in zip(axes, scenarios, strict=False):
        for series in results:
            if series.scenario is not scenario or not series.points:
                continue
            name = series.contender.name
            axis.plot(
                [point.size for point in series.points],
                [point.seconds for point in series.points],
                marker="o",
                linewidth=2.5 if name == default else 1.2,
                label=f"{name} (default)" if name == default else name,
            )
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_title(scenario.name, fontsize=10)
        axis.set_xlabel("characters of text" if scenario.own_sizes else "deltas (n)")
        axis.set_ylabel("seconds per run")
        shown = [series for series in results if series.scenario is scenario]
        sizes = sorted({point.size for series in shown for point in series.points})
        axis.set_xticks(sizes, [format_size(size) for size in sizes])
        axis.grid(True, which="both", alpha=0.3)
    for axis in axes[len(scenarios) :]:
        axis.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 7))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
