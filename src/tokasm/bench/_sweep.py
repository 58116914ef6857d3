"""Run scenarios x implementations over a sweep of sizes, bounded per run and in total.

First the sweep climbs the sizes: at each size every scenario on every
implementation is set up, timed once and traced once for memory. Then it
times every cell again in interleaved rounds (min of N), one scenario at a
time. Before each step the cost is predicted from the same series at smaller
sizes (set-up included, each phase from its own measurements, erring high:
``_fit.predict_seconds``), and the step is skipped, with its reason, if it
would take longer than the budget per run or than the time left of
``max_time``. So a quadratic implementation stops early, and no implementation
can stretch the sweep by more than about one run past ``max_time``.
Unreported *probe* sizes below the smallest size asked for, and inside wide
gaps, keep every prediction within a 4x step, so even the first run at a
large size is predicted.
"""

from __future__ import annotations

import gc
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Protocol

from tokasm._clocks import Clocks
from tokasm._display import error_text
from tokasm.bench._fit import predict_seconds, scaling_exponent, verdict
from tokasm.bench._measure import MemoryPeak, peak_memory, time_action
from tokasm.bench._units import format_seconds, format_size
from tokasm.bench._watchdog import Overrun, watchdog
from tokasm.bench.workload import make_workload
from tokasm.run._guard import reraise_unless_target, watch_interrupts

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from tokasm.bench.scenarios import Action, Scenario
    from tokasm.bench.workload import Workload
    from tokasm.implementations import AssemblerFactory

__all__ = [
    "BUDGET",
    "FULL",
    "MAX_TIME",
    "MEMORY",
    "OVERRUN_FACTOR",
    "OVERRUN_FLOOR",
    "QUICK",
    "SMOKE",
    "TIME",
    "Contender",
    "Point",
    "Series",
    "Skip",
    "SweepProgress",
    "SweepSettings",
    "over_max_time",
    "probe_sizes",
    "run_sweep",
]

#: The phases of a cell: timed runs, and the traced (tracemalloc) run.
TIME = "time"
MEMORY = "memory"
#: The limits that skip a step: the budget per run, and the sweep's total bound.
BUDGET = "budget"
MAX_TIME = "max-time"

#: The first traced run of a series is guessed at this many untraced runs
#: (tracemalloc costs per allocation); later ones use the slowdown measured.
TRACE_FACTOR = 5.0
#: A run still going after this many times the budget (and at least
#: ``OVERRUN_FLOOR`` seconds) is interrupted (``_watchdog``); so is one still
#: going a budget past ``max_time``.
OVERRUN_FACTOR = 2.0
OVERRUN_FLOOR = 1.0
#: Probe sizes keep measured sizes at most this factor apart (the margin of
#: ``_fit.predict_seconds`` holds up to 10x) ...
PROBE_STEP = 4
#: ... down to no fewer deltas than this (a run of a quadratic class is cheap there).
PROBE_FLOOR = 1_000


@dataclass(frozen=True)
class Contender:
    """An implementation to measure: a factory and what it supports."""

    name: str
    factory: AssemblerFactory
    has_read_since: bool
    #: Over the line protocol: each call is a request, memory is not traceable here.
    per_request: bool = False


@dataclass
class Point:
    """One scenario at one size: the best time per run, its set-up, and its memory."""

    size: int
    seconds: float
    operations: int
    #: How many timings the best was taken from (fewer than asked if time ran out).
    runs: int = 1
    #: Untimed set-up of the action (a fresh stream for the read scenarios).
    setup_seconds: float = 0.0
    memory: MemoryPeak | None = None

    @property
    def per_operation(self) -> float:
        return self.seconds / self.operations

    @property
    def cost(self) -> float:
        """Wall time of one run with its set-up: what the budget per run bounds."""
        return self.setup_seconds + self.seconds


@dataclass(frozen=True)
class Skip:
    """A step not run: at which size, in which phase, by which limit, and why."""

    size: int
    phase: str
    limit: str
    reason: str
    #: Started, but stopped by the watchdog (not skipped on a prediction).
    interrupted: bool = False


@dataclass
class Series:
    """One scenario on one implementation: its points, fit, memory and skips."""

    scenario: Scenario
    contender: Contender
    points: list[Point] = field(default_factory=list)
    #: Measured below the sizes asked for, only to predict the first of them.
    probes: list[Point] = field(default_factory=list)
    skips: list[Skip] = field(default_factory=list)
    #: What the implementation raised, if it did; the series stops there.
    error: str | None = None
    #: Phase -> the limit at which a run of it was interrupted; that phase stops there.
    interrupted: dict[str, str] = field(default_factory=dict)

    @property
    def skipped(self) -> list[int]:
        """Sizes not timed (see ``skips`` for why)."""
        return [skip.size for skip in self.skips if skip.phase == TIME]

    @property
    def _traced(self) -> Point | None:
        return next((p for p in reversed(self.points) if p.memory is not None), None)

    @property
    def memory(self) -> MemoryPeak | None:
        """The traced run at the largest size that fitted (``memory_size``)."""
        traced = self._traced
        return None if traced is None else traced.memory

    @property
    def memory_size(self) -> int | None:
        traced = self._traced
        return None if traced is None else traced.size

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

    def predicted(self, phase: str, size: int) -> float:
        """Seconds one run of ``phase`` is predicted to take at ``size`` (0.0 if unknown).

        A timed run is extrapolated from the smaller sizes. A traced run follows
        the timed run at its size: that run's cost times the slowdown tracemalloc
        caused at the last size traced (``TRACE_FACTOR`` before any), which fixed
        overheads only inflate at small sizes.
        """
        measured = [*self.probes, *self.points]
        if phase == MEMORY:
            slowdowns = [p.memory.seconds / p.cost for p in measured if p.memory and p.cost > 0]
            slowdown = max(1.0, slowdowns[-1]) if slowdowns else TRACE_FACTOR
            timed = [p.cost for p in measured if p.size == size]
            return slowdown * (timed[0] if timed else self.predicted(TIME, size))
        earlier = [p for p in measured if p.size < size]
        return predict_seconds([p.size for p in earlier], [p.cost for p in earlier], size)


@dataclass(frozen=True)
class SweepSettings:
    """How much to measure: sizes, min-of-N repeats, time bounds, memory or not."""

    sizes: tuple[int, ...]
    repeats: int = 3
    #: Skip a step predicted to take longer than this per run, set-up included (seconds).
    budget: float = 2.0
    #: Repeat a short run back to back for at least this long (seconds).
    batch: float = 0.05
    memory: bool = True
    #: Start no step predicted to end later than this after the sweep began
    #: (seconds); None: no bound.
    max_time: float | None = None


#: The full sweep: about 1k to 256k deltas, min of 5, at most ~5 s per run, and
#: at most 10 minutes in all (the bundled backends take about 7 on 2 shared
#: cores; an implementation of the user's gets what is left).
FULL = SweepSettings(
    sizes=(1_000, 4_000, 16_000, 64_000, 256_000),
    repeats=5,
    budget=5.0,
    batch=0.05,
    max_time=600.0,
)
#: ``tokasm bench --quick``: under a minute whatever the implementations.
#: Small sizes show a copy-bound quadratic cost only in part; the full sweep shows it.
QUICK = SweepSettings(
    sizes=(1_000, 4_000, 16_000), repeats=3, budget=0.5, batch=0.01, max_time=60.0
)
#: The CI smoke run of ``benchmarks/``: tiny sizes, once, so the suite cannot rot.
SMOKE = SweepSettings(sizes=(50, 200), repeats=1, budget=1.0, batch=0.0)


class SweepProgress(Protocol):
    """Told what the sweep does: a live line shows steps, a log shows finished cells."""

    def starting(self, step: str) -> None: ...

    def finished(self, cell: str) -> None: ...


def over_max_time(results: Sequence[Series]) -> list[Skip]:
    """The steps the sweep's total bound left out (none if it was not reached)."""
    return [skip for series in results for skip in series.skips if skip.limit == MAX_TIME]


def probe_sizes(sizes: Sequence[int]) -> tuple[int, ...]:
    """Unreported sizes that leave no step of more than ``PROBE_STEP`` unpredicted.

    Below the smallest size asked for and inside any wider gap between two
    sizes asked for, down to ``PROBE_FLOOR``. Ascending.
    """
    probes: set[int] = set()
    ordered = sorted(set(sizes))
    for below, size in zip([0, *ordered[:-1]], ordered, strict=True):
        probe = size // PROBE_STEP
        while probe > below and probe >= PROBE_FLOOR:
            probes.add(probe)
            probe //= PROBE_STEP
    return tuple(sorted(probes))


@dataclass
class _Cell:
    """A series timed once at one size in the climb: its workload, action and point."""

    series: Series
    workload: Workload
    action: Action
    point: Point


@dataclass
class _Watch:
    """Whether the watchdog interrupted the body it watched."""

    overran: bool = False


@dataclass
class _Sweep:
    """The settings, the clock of the whole sweep, and where progress goes."""

    settings: SweepSettings
    progress: SweepProgress | None
    results: Sequence[Series]
    #: Told the results so far when a run ignored its interrupt and cannot be stopped.
    on_stuck: Callable[[Sequence[Series]], object] | None = None
    started: float = field(default_factory=Clocks.perf_counter)

    def left(self) -> float:
        if self.settings.max_time is None:
            return math.inf
        return self.settings.max_time - (Clocks.perf_counter() - self.started)

    def owed(self) -> float:
        """Seconds the later rounds are predicted to take over the points measured so far."""
        repeats, batch = self.settings.repeats, self.settings.batch
        return sum(
            point.setup_seconds + (repeats - point.runs) * max(batch, point.seconds)
            for series in self.results
            if not series.error
            for point in series.points
            if point.runs < repeats
        )

    def refusal(self, series: Series, phase: str, size: int, runs: int) -> Skip | None:
        """Why ``runs`` runs of ``phase`` at ``size`` must not start, or None if they may.

        Time for the rounds that the points measured so far are owed is kept,
        so a bound that is reached cuts sizes, not the repeats of those measured.
        """
        if phase in series.interrupted:
            limit = series.interrupted[phase]
            return Skip(size, phase, limit, f"over --{limit}: a smaller size was interrupted")
        predicted = series.predicted(phase, size)
        what = "per run with its set-up" if phase == TIME else "for the traced run"
        if predicted > self.settings.budget:
            reason = (
                f"over --budget: predicted {format_seconds(predicted)} {what}, "
                f"budget {self.settings.budget:g} s"
            )
            return Skip(size, phase, BUDGET, reason)
        left = self.left() - self.owed()
        if left <= 0 or predicted * runs > left:
            reason = (
                f"over --max-time: predicted {format_seconds(predicted * runs)}, "
                f"{max(left, 0.0):.3g} s left of {self.settings.max_time:g} s "
                "less the rounds owed"
            )
            return Skip(size, phase, MAX_TIME, reason)
        return None

    @contextmanager
    def watched(self, series: Series, phase: str, size: int, reported: bool) -> Iterator[_Watch]:
        """Run the body under the watchdog; an overrun is a skip, and ends that phase's climb."""
        per_run = max(OVERRUN_FACTOR * self.settings.budget, OVERRUN_FLOOR)
        total = self.left() + self.settings.budget
        seconds, limit, why = (
            (per_run, BUDGET, f"{OVERRUN_FACTOR:g}x --budget, at least {OVERRUN_FLOOR:g} s")
            if per_run <= total
            else (max(total, 0.0), MAX_TIME, "--max-time plus --budget")
        )
        watch = _Watch()
        stuck = None if self.on_stuck is None else partial(self._stuck, series, size, seconds)
        try:
            with watchdog(seconds, stuck):
                yield watch
        except Overrun:
            watch.overran = True
            series.interrupted[phase] = limit
            reason = f"over --{limit}: interrupted, still running after {seconds:.3g} s ({why})"
            if reported:
                series.skips.append(Skip(size, phase, limit, reason, interrupted=True))
            if phase == TIME:  # a traced run's line says it (``_log_cells``)
                self.finished(series, size, reason)

    def _stuck(self, series: Series, size: int, limit: float, ran: float, stack: str) -> None:
        """From the watchdog's thread: the run of ``series`` at ``size`` ignored its
        interrupt. It is the series' error, and ``on_stuck`` gets the results so far."""
        where = f"\nthe stuck code's stack (innermost last):\n{stack.rstrip()}" if stack else ""
        series.error = (
            f"still running at {format_size(size)} after {ran:.3g} s, though interrupted "
            f"at {limit:.3g} s: it ignored the interrupt (it catches BaseException, or "
            f"uses SIGALRM itself), and a thread cannot be stopped, so the sweep ended "
            f"here; measure it in a process of its own with --cmd{where}"
        )
        assert self.on_stuck is not None
        self.on_stuck(self.results)

    def starting(self, step: str) -> None:
        if self.progress:
            self.progress.starting(step)

    def log(self, line: str) -> None:
        if self.progress:
            self.progress.finished(f"{line} [{Clocks.perf_counter() - self.started:.0f} s]")

    def finished(self, series: Series, size: int, outcome: str) -> None:
        name = f"{series.scenario.name} {series.contender.name} {format_size(size)}"
        self.log(f"{name}: {outcome}")


@contextmanager
def _recording(series: Series) -> Iterator[None]:
    """Whatever the implementation raises in the body (``SystemExit`` too) becomes the
    series' error instead of ending the sweep; a real Ctrl-C and ``Overrun`` go through."""
    try:
        yield
    except Overrun:
        raise
    except BaseException as error:
        reraise_unless_target(error)
        series.error = error_text(error)


def _guarded(series: Series, action: Action) -> Action:
    """``action``, but what it raises is recorded on the series (``_recording``)."""

    def run() -> list[str]:
        if series.error is None:
            with _recording(series):
                return action()
        return []

    return run


def _fits(sweep: _Sweep, series: Series, size: int, repeats: int, reported: bool) -> bool:
    """Whether ``series`` may be timed at ``size``; if not, the skip is recorded and logged."""
    skip = sweep.refusal(series, TIME, size, repeats)
    if skip and reported:  # a skipped probe shows in the prediction of the sizes above it
        series.skips.append(skip)
        sweep.finished(series, size, f"skipped, {skip.reason}")
    return skip is None


def _time_once(sweep: _Sweep, series: Series, workload: Workload, reported: bool) -> _Cell | None:
    """Set up ``series`` on ``workload`` and time one run: its point (or probe) and action."""
    size = workload.size
    with sweep.watched(series, TIME, size, reported) as watch:
        start = Clocks.perf_counter()
        with _recording(series):
            action = _guarded(series, series.scenario.prepare(series.contender.factory, workload))
        if series.error:
            return None
        setup = Clocks.perf_counter() - start
        seconds = time_action(action, sweep.settings.batch)
    if series.error or watch.overran:  # overran: interrupted, or swallowed it and ran on
        return None
    point = Point(size, seconds, series.scenario.operations(size), setup_seconds=setup)
    (series.points if reported else series.probes).append(point)
    return _Cell(series, workload, action, point)


def _first_round(
    sweep: _Sweep, grid: Sequence[tuple[Scenario, list[Series]]], size: int, reported: bool
) -> list[_Cell]:
    """Set up and time once every series that fits at ``size``; the cells to go on with."""
    repeats = sweep.settings.repeats if reported else 1
    workload: Workload | None = None  # built for the first series that fits
    cells: list[_Cell] = []
    for scenario, row in grid:
        sweep.starting(f"{scenario.name}: {format_size(size)} deltas, round 1 of {repeats}")
        for series in row:
            if series.error or not _fits(sweep, series, size, repeats, reported):
                continue
            if workload is None:
                workload = make_workload(size)
            cell = _time_once(sweep, series, workload, reported)
            if cell:
                cells.append(cell)
    return cells


def _prepare_rounds(
    sweep: _Sweep, row: Sequence[Series], sizes: Sequence[int]
) -> list[tuple[Series, Point, Action]]:
    """Set every measured point of one scenario up again, while its rounds fit the time left."""
    rounds = sweep.settings.repeats - 1
    cells: list[tuple[Series, Point, Action]] = []
    for size in sizes:
        for series in row:
            point = next((p for p in series.points if p.size == size), None)
            if point is None or series.error:
                continue
            if (
                point.setup_seconds + rounds * max(sweep.settings.batch, point.seconds)
                > sweep.left()
            ):
                continue
            with sweep.watched(series, TIME, size, reported=True), _recording(series):
                prepared = series.scenario.prepare(series.contender.factory, make_workload(size))
                cells.append((series, point, _guarded(series, prepared)))
    return cells


def _rounds(sweep: _Sweep, scenario: Scenario, row: Sequence[Series]) -> None:
    """Rounds 2..N of one scenario over every size and implementation in turn.

    A slow spell of a shared machine then lands on one round of every size,
    and the minimum discards it (timing each size's rounds back to back would
    let one spell inflate a whole size, and bend the fit).
    """
    batch, repeats = sweep.settings.batch, sweep.settings.repeats
    cells = _prepare_rounds(sweep, row, sorted(sweep.settings.sizes))
    for round_number in range(2, repeats + 1):
        sweep.starting(f"{scenario.name}: all sizes, round {round_number} of {repeats}")
        gc.collect()
        for cell in list(cells):
            series, point, action = cell
            if series.error or sweep.left() < max(batch, point.seconds):
                continue
            with sweep.watched(series, TIME, point.size, reported=True) as watch:
                seconds = time_action(action, batch)
            if watch.overran:  # that cell hung: the others go on
                cells.remove(cell)
            elif series.error is None:
                point.seconds = min(point.seconds, seconds)
                point.runs += 1
    sweep.log(f"{scenario.name}: rounds 2 to {repeats} over {len(cells)} cells done")


def _trace_memory(sweep: _Sweep, cells: Sequence[_Cell], size: int, reported: bool) -> None:
    """One traced run per cell that fits (not for protocol testees: another process)."""
    for cell in cells:
        series = cell.series
        if series.error or series.contender.per_request:
            continue
        skip = sweep.refusal(series, MEMORY, size, 1)
        if skip:
            if reported:
                series.skips.append(skip)
            continue
        sweep.starting(
            f"{series.scenario.name}: memory of {series.contender.name} at {format_size(size)}"
        )
        with sweep.watched(series, MEMORY, size, reported) as watch, _recording(series):
            memory = peak_memory(series.scenario, series.contender.factory, cell.workload)
        if not watch.overran and series.error is None:
            cell.point.memory = memory


def _log_cells(sweep: _Sweep, cells: Sequence[_Cell], size: int, reported: bool) -> None:
    """One line per cell measured at ``size``."""
    for cell in cells:
        series, point = cell.series, cell.point
        if series.error:
            outcome = f"raised {series.error}"
        elif not reported:
            outcome = f"probe, {format_seconds(point.cost)} per run with its set-up"
        else:
            outcome = f"{format_seconds(point.per_operation)} per {series.scenario.unit}"
            if point.memory is not None:
                outcome += f", peak mem {point.memory.ratio:.1f}x"
            memory_skip = [s for s in series.skips if s.size == size and s.phase == MEMORY]
            if memory_skip:
                outcome += f", memory not traced ({memory_skip[0].reason})"
        sweep.finished(series, size, outcome)


def _climb(
    sweep: _Sweep, grid: Sequence[tuple[Scenario, list[Series]]], size: int, reported: bool
) -> None:
    """Every scenario on every implementation at one size: set up, time once, trace, log."""
    cells = _first_round(sweep, grid, size, reported)
    if sweep.settings.memory:
        _trace_memory(sweep, cells, size, reported)
    _log_cells(sweep, cells, size, reported)


def run_sweep(
    scenarios: Sequence[Scenario],
    contenders: Sequence[Contender],
    settings: SweepSettings,
    progress: SweepProgress | None = None,
    on_stuck: Callable[[Sequence[Series]], object] | None = None,
) -> list[Series]:
    """Every scenario on every contender that supports it, sizes ascending; ``on_stuck``
    ends the process with the results so far if a run cannot be stopped (``_Sweep``).

    First the climb: one size at a time, smallest first (probe sizes, from
    ``probe_sizes``, in their place but not reported), every scenario on every
    implementation is set up, timed once and traced, so a bound that is
    reached cuts the largest sizes, not the last scenarios. Then the other
    rounds, one scenario at a time (``_rounds``).
    """
    grid = [
        (
            scenario,
            [
                Series(scenario, contender)
                for contender in contenders
                if contender.has_read_since or not scenario.needs_read_since
            ],
        )
        for scenario in scenarios
    ]
    watch_interrupts()  # so that a target's own KeyboardInterrupt is its error, not a Ctrl-C
    sweep = _Sweep(settings, progress, [series for _, row in grid for series in row], on_stuck)
    probes = probe_sizes(settings.sizes)
    for size in sorted({*probes, *settings.sizes}):
        _climb(sweep, grid, size, reported=size not in probes)
    if settings.repeats > 1:
        for scenario, row in grid:
            _rounds(sweep, scenario, row)
    return list(sweep.results)
