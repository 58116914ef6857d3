"""The recommended backend's targets (issue: benchmarks), measured as ratios in one process.

Each test measures the recommended backend (``DEFAULT_BACKEND``) against a
reference in the same process with interleaved min-of-N runs, records the
ratio in the benchmark JSON (``extra_info``) and the run's summary, and
asserts it only outside the smoke run: CI runs tiny sizes and never fails on
a time. Sizes shrink 100-fold in the smoke run.

The fifth target, conformance on Python 3.10 to 3.13, is the test suite's:
the corpus runs on every registered backend, this one included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tokasm.bench import format_size, interleaved_min, make_workload, peak_memory, scaling_exponent
from tokasm.bench.scenarios import SCENARIOS
from tokasm.implementations import BACKENDS, DEFAULT_BACKEND

if TYPE_CHECKING:
    from pytest_benchmark.fixture import BenchmarkFixture

    from .conftest import TargetReport

__all__ = [
    "test_apply_cost_against_list_join",
    "test_peak_memory_of_a_long_stream",
    "test_read_cost_is_flat",
    "test_read_since_is_linear",
]

RECOMMENDED = BACKENDS[DEFAULT_BACKEND]
REFERENCE = BACKENDS["list-join"]
#: Short actions (1000 reads) are batched to this many seconds per timing.
_READ_BATCH = 0.05


def _size(size: int, smoke: bool) -> int:
    return max(10, size // 100) if smoke else size


def test_apply_cost_against_list_join(
    benchmark: BenchmarkFixture, report_target: TargetReport, smoke: bool
) -> None:
    """``apply`` costs <= 1.15x list-join on >= 300k distinct deltas (STREAM-LINEAR)."""
    scenario = SCENARIOS["stream_then_finalize"]
    workload = make_workload(_size(300_000, smoke))
    actions = {
        "recommended": scenario.prepare(RECOMMENDED, workload),
        "list-join": scenario.prepare(REFERENCE, workload),
    }
    repeats = 1 if smoke else 7
    best = interleaved_min(actions, repeats)
    ratio = best["recommended"] / best["list-join"]
    per_event = {name: f"{seconds / workload.size * 1e9:.0f} ns" for name, seconds in best.items()}
    benchmark.group = "targets"
    benchmark.pedantic(actions["recommended"], rounds=1)
    if report_target(
        benchmark.extra_info,
        target="apply cost / list-join",
        measured=ratio,
        limit=1.15,
        holds=ratio <= 1.15,
        details=f"{format_size(workload.size)} deltas, {per_event['recommended']} vs "
        f"{per_event['list-join']} per event, min of {repeats}",
    ):
        assert ratio <= 1.15


def test_peak_memory_of_a_long_stream(
    benchmark: BenchmarkFixture, report_target: TargetReport, smoke: bool
) -> None:
    """Peak traced memory over a 1M-delta stream <= 1.5x the final text (list-join: 12-15x)."""
    scenario = SCENARIOS["stream_then_finalize"]
    workload = make_workload(_size(1_000_000, smoke))
    benchmark.group = "targets"
    peak = benchmark.pedantic(peak_memory, (scenario, RECOMMENDED, workload), rounds=1)
    reference = peak_memory(scenario, REFERENCE, workload)
    if report_target(
        benchmark.extra_info,
        target="peak memory / final text",
        measured=peak.ratio,
        limit=1.5,
        holds=peak.ratio <= 1.5,
        details=f"{format_size(workload.size)} deltas, peak {peak.peak_bytes} B "
        f"for a {peak.text_bytes} B text; list-join {reference.ratio:.1f}x",
    ):
        assert peak.ratio <= 1.5


@pytest.mark.parametrize(
    "flat",
    [
        # get after final costs the same at 1k and 1M deltas (CACHE-FINAL)
        ("get_after_final", 1_000, 1_000_000),
        # an unchanged re-read while streaming costs the same at 1k and 200k deltas
        ("reread_unchanged", 1_000, 200_000),
    ],
    ids=["get_after_final", "reread_unchanged"],
)
def test_read_cost_is_flat(
    benchmark: BenchmarkFixture,
    report_target: TargetReport,
    smoke: bool,
    flat: tuple[str, int, int],
) -> None:
    """Time per read at the large size over the small size <= 1.5x, min of 15."""
    scenario_name, small, large = flat
    scenario = SCENARIOS[scenario_name]
    sizes = (_size(small, smoke), _size(large, smoke))
    actions = {str(size): scenario.prepare(RECOMMENDED, make_workload(size)) for size in sizes}
    best = interleaved_min(actions, repeats=1 if smoke else 15, batch=0 if smoke else _READ_BATCH)
    per_read = [best[str(size)] / scenario.operations(size) for size in sizes]
    ratio = per_read[1] / per_read[0]
    benchmark.group = "targets"
    benchmark.pedantic(actions[str(sizes[1])], rounds=1)
    if report_target(
        benchmark.extra_info,
        target=f"{scenario_name}, {format_size(sizes[1])} / {format_size(sizes[0])} deltas",
        measured=ratio,
        limit=1.5,
        holds=ratio <= 1.5,
        details=f"{per_read[0] * 1e9:.0f} ns per read at {format_size(sizes[0])} deltas, "
        f"{per_read[1] * 1e9:.0f} ns at {format_size(sizes[1])}",
    ):
        assert ratio <= 1.5


def test_read_since_is_linear(
    benchmark: BenchmarkFixture, report_target: TargetReport, smoke: bool
) -> None:
    """``read_since`` after every delta: exponent <= 1.15 over 100k-400k, and at 200k
    >= 10x faster than ``get`` after every delta keeping the snapshot (INC-LINEAR)."""
    since = SCENARIOS["read_since_each_delta"]
    sizes = [_size(size, smoke) for size in (100_000, 200_000, 400_000)]
    actions = {str(size): since.prepare(RECOMMENDED, make_workload(size)) for size in sizes}
    middle = make_workload(sizes[1])
    actions["keep"] = SCENARIOS["read_each_delta_keep"].prepare(RECOMMENDED, middle)
    best = interleaved_min(actions, repeats=1 if smoke else 3)
    exponent = scaling_exponent(sizes, [best[str(size)] for size in sizes])
    speedup = best["keep"] / best[str(sizes[1])]
    benchmark.group = "targets"
    benchmark.pedantic(actions[str(sizes[1])], rounds=1)
    details = ", ".join(f"{best[str(size)]:.3g} s at {format_size(size)}" for size in sizes)
    assert_exponent = report_target(
        benchmark.extra_info,
        target=f"read_since exponent, {format_size(sizes[0])}-{format_size(sizes[-1])} deltas",
        measured=exponent,
        limit=1.15,
        holds=exponent <= 1.15,
        details=details,
    )
    speedup_info: dict[str, object] = {}
    assert_speedup = report_target(
        speedup_info,
        target=f"read_since speed-up over get keeping the snapshot, {format_size(sizes[1])}",
        measured=speedup,
        limit=10,
        holds=speedup >= 10,
        details=f"{best['keep']:.3g} s keeping snapshots vs {best[str(sizes[1])]:.3g} s "
        "(this limit is a floor)",
    )
    benchmark.extra_info["speedup"] = speedup_info
    if assert_exponent:
        assert exponent <= 1.15
    if assert_speedup:
        assert speedup >= 10
