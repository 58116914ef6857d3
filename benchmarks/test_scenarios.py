"""Every scenario on every bundled backend over the sweep of sizes (pytest-benchmark).

Group by scenario and size, so ``--benchmark-compare`` and the tables line up
backends against each other. The default backend (``tokasm.TokenAssembler``)
is marked in ``extra_info``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest

from tokasm.bench import python_target, time_action
from tokasm.bench.scenarios import SCENARIOS
from tokasm.implementations import BACKENDS, DEFAULT_BACKEND

if TYPE_CHECKING:
    from pytest_benchmark.fixture import BenchmarkFixture

    from .conftest import BenchCell, Timings

__all__ = ["test_scenario"]

#: A round lasts at least this long (short runs are repeated within it) ...
_ROUND_SECONDS = 0.01
#: ... and a cell spends about this long in rounds (at least one, at most five).
_CELL_SECONDS = 1.0
_MAX_ROUNDS = 5


def test_scenario(
    benchmark: BenchmarkFixture, bench_cell: BenchCell, timings: Timings, smoke: bool
) -> None:
    scenario = SCENARIOS[bench_cell.scenario]
    factory = BACKENDS[bench_cell.backend]
    if scenario.needs_read_since and not python_target("", factory).has_read_since:
        pytest.skip(f"{bench_cell.backend} has no read_since")
    predicted = timings.predicted(bench_cell)
    if predicted > timings.budget:
        pytest.skip(
            f"{bench_cell.scenario} on {bench_cell.backend} at {bench_cell.size} deltas: "
            f"predicted {predicted:.1f} s per run from the smaller sizes, "
            f"over the budget of {timings.budget:g} s (--bench-budget)"
        )
    workload = scenario.workload(bench_cell.size)
    action = scenario.prepare(factory, workload)
    first = time_action(action)  # warm-up, and the calibration of rounds
    iterations = 1 if smoke else max(1, math.ceil(_ROUND_SECONDS / max(first, 1e-9)))
    rounds = 1 if smoke else max(1, min(_MAX_ROUNDS, int(_CELL_SECONDS / (first * iterations))))
    benchmark.group = f"{scenario.name} n={bench_cell.size}"
    benchmark.extra_info.update(
        scenario=scenario.name,
        backend=bench_cell.backend,
        default=bench_cell.backend == DEFAULT_BACKEND,
        size=bench_cell.size,
        unit=scenario.unit,
        operations=scenario.operations(bench_cell.size),
    )
    texts = benchmark.pedantic(action, rounds=rounds, iterations=iterations)
    stats = getattr(benchmark.stats, "stats", None)  # None when --benchmark-disable
    timings.record(bench_cell, min(first, stats.min) if stats else first)
    # The work was real: the final texts hold every character of the stream.
    if scenario.traced:
        assert sum(map(len, texts)) == len(workload.source)
