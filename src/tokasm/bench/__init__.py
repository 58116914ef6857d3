"""Benchmarks shared by ``benchmarks/`` (pytest-benchmark) and ``tokasm bench``."""

from __future__ import annotations

from tokasm.bench._measure import (
    format_seconds,
    format_size,
    interleaved_min,
    parse_size,
    peak_memory,
    predict_seconds,
    scaling_exponent,
    time_action,
    verdict,
)
from tokasm.bench._report import check_plot, render_matrix, render_table, to_json, write_plot
from tokasm.bench._sweep import (
    FULL,
    QUICK,
    SMOKE,
    BenchTarget,
    SweepSettings,
    bundled_targets,
    load_target,
    over_max_time,
    protocol_target,
    python_target,
    run_sweep,
)
from tokasm.bench.scenarios import SCENARIOS, make_workload

__all__ = [
    "FULL", "QUICK", "SCENARIOS", "SMOKE", "BenchTarget", "SweepSettings", "bundled_targets",
    "check_plot", "format_seconds", "format_size", "interleaved_min", "load_target",
    "make_workload", "over_max_time", "parse_size", "peak_memory", "predict_seconds",
    "protocol_target", "python_target", "render_matrix", "render_table", "run_sweep",
    "scaling_exponent", "time_action", "to_json", "verdict", "write_plot",
]  # fmt: skip
