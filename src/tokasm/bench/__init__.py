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

from tokasm.bench._contenders import bundled_contenders, python_contender
from tokasm.bench._fit import predict_seconds, scaling_exponent, verdict
from tokasm.bench._measure import MemoryPeak, interleaved_min, peak_memory, time_action
from tokasm.bench._report import render_table
from tokasm.bench._sweep import FULL, QUICK, SMOKE, Contender, Series, SweepSettings, run_sweep
from tokasm.bench._units import format_seconds, format_size, parse_size
from tokasm.bench.scenarios import SCENARIOS, Scenario
from tokasm.bench.workload import Workload, make_workload

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
