"""Run scenarios x implementations over a sweep of sizes, within a time budget.

Every (size, implementation) cell is timed in interleaved rounds (min of N).
An implementation whose next size is predicted to take longer than the
budget per run is skipped at that size and above: a quadratic backend at
256k deltas would otherwise take minutes.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from .fit import predict_seconds, scaling_exponent, verdict
from .measure import MemoryPeak, peak_memory, time_action
from .report import format_size
from .workload import make_workload

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..implementations import AssemblerFactory
    from .scenarios import Action, Scenario

__all__ = [
    "FULL",
    "QUICK",
    "SMOKE",
    "Contender",
    "Point",
    "ProgressHook",
    "Series",
    "SweepSettings",
    "run_sweep",
]


@dataclass(frozen=True)
class Contender:
    """An implementation to measure: a factory and what it supports."""

    name: str
    factory: AssemblerFactory
    has_read_since: bool
    #: Over the line protocol: each call is a request, memory is not traceable here.
    per_request: bool = False


@dataclass(frozen=True)
class Point:
    """The best time of one scenario run at one size."""

    size: int
    seconds: float
    operations: int

    @property
    def per_operation(self) -> float:
        return self.seconds / self.operations


@dataclass
class Series:
    """One scenario on one implementation: its points, fit and memory."""

    scenario: Scenario
    contender: Contender
    points: list[Point] = field(default_factory=list)
    #: Sizes not run because the prediction exceeded the time budget.
    skipped: list[int] = field(default_factory=list)
    memory: MemoryPeak | None = None
    memory_size: int | None = None
    #: What the implementation raised, if it did; the series stops there.
    error: str | None = None

    @property
    def exponent(self) -> float | None:
        if len(self.points) < 2:
            return None
        return scaling_exponent(
            [p.size for p in self.points], [max(p.seconds, 1e-9) for p in self.points]
        )

    @property
    def verdict(self) -> str:
        exponent = self.exponent
        return "-" if exponent is None or math.isnan(exponent) else verdict(exponent)

    def allows(self, size: int, budget: float) -> bool:
        """Whether a run at ``size`` is predicted to fit in ``budget`` seconds."""
        if self.skipped or self.error:
            return False
        sizes = [p.size for p in self.points]
        seconds = [p.seconds for p in self.points]
        return predict_seconds(sizes, seconds, size) <= budget


@dataclass(frozen=True)
class SweepSettings:
    """How much to measure: sizes, min-of-N repeats, seconds per run, memory or not."""

    sizes: tuple[int, ...]
    repeats: int = 3
    #: Skip a size predicted to take longer than this per run (seconds).
    budget: float = 2.0
    #: Repeat a short run back to back for at least this long (seconds).
    batch: float = 0.05
    memory: bool = True


#: The full sweep: about 1k to 256k deltas, min of 5, at most ~5 s per run.
FULL = SweepSettings(
    sizes=(1_000, 4_000, 16_000, 64_000, 256_000), repeats=5, budget=5.0, batch=0.05
)
#: ``tokasm bench --quick``: under a minute for every bundled backend on 2 shared cores.
#: Small sizes show a copy-bound quadratic cost only in part; the full sweep shows it.
QUICK = SweepSettings(sizes=(1_000, 4_000, 16_000), repeats=3, budget=0.1, batch=0.01)
#: The CI smoke run of ``benchmarks/``: tiny sizes, once, so the suite cannot rot.
SMOKE = SweepSettings(sizes=(50, 200), repeats=1, budget=1.0, batch=0.0)


#: Called before each step: (scenario, what is measured now).
ProgressHook: TypeAlias = Callable[[str, str], None]


def _guarded(series: Series, action: Action) -> Action:
    """``action``, but an exception is recorded on the series instead of ending the sweep."""

    def run() -> list[str]:
        if series.error is None:
            try:
                return action()
            except Exception as error:
                series.error = f"{type(error).__name__}: {error}"
        return []

    return run


def _first_round(
    scenario: Scenario, size: int, series: Sequence[Series], settings: SweepSettings
) -> list[tuple[Series, Action]]:
    """Prepare and time once every series the budget allows at ``size``; return its actions."""
    workload = make_workload(size)
    cells: list[tuple[Series, Action]] = []
    for one in series:
        if not one.allows(size, settings.budget):
            if one.error is None:
                one.skipped.append(size)
            continue
        try:
            action = _guarded(one, scenario.prepare(one.contender.factory, workload))
        except Exception as error:
            one.error = f"{type(error).__name__}: {error}"
            continue
        cells.append((one, action))
    for one, action in cells:
        seconds = time_action(action, settings.batch)
        if one.error is None:
            one.points.append(Point(size, seconds, scenario.operations(size)))
    return cells


def _better(one: Series, size: int, seconds: float) -> None:
    """Keep the minimum of the runs at ``size``."""
    for index, point in enumerate(one.points):
        if point.size == size and seconds < point.seconds:
            one.points[index] = Point(size, seconds, point.operations)


def run_sweep(
    scenarios: Sequence[Scenario],
    contenders: Sequence[Contender],
    settings: SweepSettings,
    progress: ProgressHook | None = None,
) -> list[Series]:
    """Every scenario on every contender that supports it, sizes ascending.

    The first round goes up the sizes (the budget needs the smaller sizes'
    times); the other rounds revisit every size and contender in turn, so a
    slow spell of a shared machine lands on one round of many cells, and the
    minimum discards it.
    """
    results: list[Series] = []
    for scenario in scenarios:
        series = [
            Series(scenario, contender)
            for contender in contenders
            if contender.has_read_since or not scenario.needs_read_since
        ]
        cells: list[tuple[Series, int, Action]] = []
        for size in sorted(settings.sizes):
            if progress:
                progress(
                    scenario.name, f"{format_size(size)} deltas, round 1 of {settings.repeats}"
                )
            cells.extend(
                (one, size, action)
                for one, action in _first_round(scenario, size, series, settings)
            )
        for round_number in range(2, settings.repeats + 1):
            if progress:
                progress(scenario.name, f"all sizes, round {round_number} of {settings.repeats}")
            gc.collect()
            for one, size, action in cells:
                seconds = time_action(action, settings.batch)
                if one.error is None:
                    _better(one, size, seconds)
        del cells
        if settings.memory:
            for one in series:
                if one.points and one.error is None and not one.contender.per_request:
                    size = one.points[-1].size
                    if progress:
                        progress(
                            scenario.name, f"memory of {one.contender.name} at {format_size(size)}"
                        )
                    one.memory = peak_memory(scenario, one.contender.factory, make_workload(size))
                    one.memory_size = size
        results.extend(series)
    return results
