"""Benchmarks shared by ``benchmarks/`` (pytest-benchmark) and ``tokasm bench``.

The public paths are this package, ``tokasm.bench.scenarios`` (one
definition of each scenario) and ``tokasm.bench.workload`` (the text
stream). Behind them, private modules: ``_measure`` times and traces the
scenarios, ``_fit`` turns a sweep into a scaling exponent and a verdict,
``_sweep`` runs the grid within a budget per run and a bound in total,
``_report`` and ``_plot`` render it, ``_units`` reads and writes sizes and
durations, and ``_contenders`` wraps backends, targets and protocol testees.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._contenders import bundled_contenders, python_contender
    from ._fit import predict_seconds, scaling_exponent, verdict
    from ._measure import MemoryPeak, interleaved_min, peak_memory, time_action
    from ._report import render_table
    from ._sweep import FULL, QUICK, SMOKE, Contender, Series, SweepSettings, run_sweep
    from ._units import format_seconds, format_size, parse_size
    from .scenarios import SCENARIOS, Scenario
    from .workload import Workload, make_workload

__all__ = [
    "FULL",
    "QUICK",
    "SCENARIOS",
    "SMOKE",
    "Contender",
    "MemoryPeak",
    "Scenario",
    "Series",
    "SweepSettings",
    "Workload",
    "bundled_contenders",
    "format_seconds",
    "format_size",
    "interleaved_min",
    "make_workload",
    "parse_size",
    "peak_memory",
    "predict_seconds",
    "python_contender",
    "render_table",
    "run_sweep",
    "scaling_exponent",
    "time_action",
    "verdict",
]

#: Where each public name lives. Names are imported lazily (PEP 562): ``tokasm check``
#: imports ``_measure`` (the cost probe) and ``_units`` (option parsing) through this
#: package, and must not pay for the sweep, the contenders and the report (about 8 ms).
_HOMES: dict[str, str] = {
    "bundled_contenders": "_contenders",
    "python_contender": "_contenders",
    "predict_seconds": "_fit",
    "scaling_exponent": "_fit",
    "verdict": "_fit",
    "MemoryPeak": "_measure",
    "interleaved_min": "_measure",
    "peak_memory": "_measure",
    "time_action": "_measure",
    "render_table": "_report",
    "FULL": "_sweep",
    "QUICK": "_sweep",
    "SMOKE": "_sweep",
    "Contender": "_sweep",
    "Series": "_sweep",
    "SweepSettings": "_sweep",
    "run_sweep": "_sweep",
    "format_seconds": "_units",
    "format_size": "_units",
    "parse_size": "_units",
    "SCENARIOS": "scenarios",
    "Scenario": "scenarios",
    "Workload": "workload",
    "make_workload": "workload",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
