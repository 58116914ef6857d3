"""Benchmarks shared by ``benchmarks/`` (pytest-benchmark) and ``tokasm bench``.

The public paths are this package, ``tokasm.bench.scenarios`` (one definition
of each scenario) and ``tokasm.bench.workload`` (the text stream). Behind them:
``_worker`` measures one contender (in a process of its own for a Python
target), ``_sweep`` supervises the workers, ``_measure`` times and traces,
``_fit`` turns a sweep into an exponent and a verdict, ``_report`` and
``_plot`` render, ``_units`` reads and writes sizes and durations, and
``_contenders`` makes in-process and protocol contenders.
"""

from __future__ import annotations

from tokasm.bench._contenders import bundled_contenders, protocol_contender, python_contender
from tokasm.bench._fit import predict_seconds, scaling_exponent, verdict
from tokasm.bench._measure import MemoryPeak, interleaved_min, peak_memory, time_action
from tokasm.bench._plot import check_plot, write_plot
from tokasm.bench._report import render_matrix, render_table, to_json
from tokasm.bench._sweep import (
    FULL,
    QUICK,
    SMOKE,
    Contender,
    Series,
    SweepSettings,
    load_contender,
    over_max_time,
    run_sweep,
)
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
    "check_plot",
    "format_seconds",
    "format_size",
    "interleaved_min",
    "load_contender",
    "make_workload",
    "over_max_time",
    "parse_size",
    "peak_memory",
    "predict_seconds",
    "protocol_contender",
    "python_contender",
    "render_matrix",
    "render_table",
    "run_sweep",
    "scaling_exponent",
    "time_action",
    "to_json",
    "verdict",
    "write_plot",
]
