"""Scenarios x targets over a sweep of sizes: ``climb`` decides each step, a worker
(``_worker``) runs it; one that hangs, dies or answers badly costs its scenario, no more."""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from tokasm._display import safe_block
from tokasm.bench._measure import (
    INCONCLUSIVE,
    Fit,
    MemoryPeak,
    fit,
    format_seconds,
    format_size,
    judge,
    predict_seconds,
)
from tokasm.bench._worker import LONG_RUNS, Bench, Raised, has_read_since
from tokasm.bench.scenarios import LONG_TEXTS
from tokasm.corpus.steps import OPS, READ_SINCE
from tokasm.errors import TargetError, TargetFault
from tokasm.implementations import BACKENDS
from tokasm.protocol import LineTooLong, NoResponse, Process, python_child, signal_name

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tokasm.bench.scenarios import Scenario
    from tokasm.implementations import AssemblerFactory
    from tokasm.run.targets import Target

__all__ = [
    "FULL", "QUICK", "SMOKE", "BenchTarget", "SweepSettings", "bundled_targets", "load_target",
    "over_max_time", "protocol_target", "python_target", "run_sweep",
]  # fmt: skip

BUDGET, MAX_TIME = "budget", "max-time"
#: A worker silent for this many times the budget (at least ``OVERRUN_FLOOR`` s) is killed.
OVERRUN_FACTOR, OVERRUN_FLOOR = 3.0, 2.0
#: Allowed beyond twice the load timeout for a worker's interpreter to start.
START_SECONDS = 2.0
#: A traced run is predicted at this many untraced ones (tracemalloc costs per allocation).
TRACE_FACTOR = 5.0
#: Rounds a size must have time for, and rounds run whatever they cost (a median of 3).
MIN_ROUNDS = 3


@dataclass(frozen=True)
class BenchTarget:
    """A target run here by its ``factory`` (``per_request``: a testee's), else in a worker."""

    name: str
    has_read_since: bool
    factory: AssemblerFactory | None = None
    per_request: bool = False


@dataclass
class Point:
    """One size: seconds per run of each batch (one a round), its set-up, its memory."""

    size: int
    operations: int
    batches: list[float] = field(default_factory=list)
    setup_seconds: float = 0.0
    memory: MemoryPeak | None = None

    @property
    def seconds(self) -> float:
        return min(self.batches)

    @property
    def per_operation(self) -> float:
        return self.seconds / self.operations

    @property
    def first_cost(self) -> float:
        return self.setup_seconds + self.batches[0]


@dataclass(frozen=True)
class Skip:
    """A size not run, or stopped (``interrupted``) where its worker was killed."""

    size: int
    limit: str
    reason: str
    interrupted: bool = False


@dataclass
class Series:
    """One scenario on one target; ``texts``: its points on long texts."""

    scenario: Scenario
    bench_target: BenchTarget
    points: list[Point] = field(default_factory=list)
    skips: list[Skip] = field(default_factory=list)
    error: str | None = None
    texts: list[Point] = field(default_factory=list)

    @property
    def traced(self) -> Point | None:
        return next((p for p in self.points if p.memory is not None), None)

    @property
    def fit(self) -> Fit:
        return self.verdicts()[0]

    def verdicts(self, z: float = 2.0) -> tuple[Fit, Fit | None]:
        """The fit and verdict at +- ``z`` errors, judged with the growth on long texts (if any)."""

        def fitted(points: list[Point], per_operation: bool) -> Fit:
            rounds = list(zip(*(point.batches for point in points), strict=False))
            return fit([point.size for point in points], rounds, per_operation, z)

        stream = fitted(self.points, self.scenario.per_operation)
        if not self.scenario.on_long_texts:
            return stream, None
        growth = fitted(self.texts, True)
        return Fit(stream.exponent, stream.error, judge(stream, growth, z)), growth


@dataclass(frozen=True)
class SweepSettings:
    """``repeats``: most rounds; ``budget``: most seconds a run may take (times ``repeats`` / 6:
    a scenario before rounds past the third); ``batch``: least seconds a batch takes."""

    sizes: tuple[int, ...]
    repeats: int = 3
    budget: float = 2.0
    batch: float = 0.002
    memory: bool = True
    max_time: float | None = None
    texts: tuple[int, ...] = LONG_TEXTS


#: 1k to 256k deltas, at most 10 s per run, 10 minutes in all.
FULL = SweepSettings((1_000, 4_000, 16_000, 64_000, 256_000), 15, budget=10.0, max_time=600.0)
#: ``tokasm bench --quick``: within a minute, loaded machine or not; sizes 2x apart, so that
#: a quadratic backend has 3 of them within the budget; a copy of texts up to 1M characters
#: shows against a fixed cost of up to about 30us per event.
QUICK = SweepSettings(
    (1_000, 2_000, 4_000, 8_000, 16_000), 15, 0.4, max_time=50.0, texts=(64_000, 256_000, 1_000_000)
)
#: The CI smoke run of ``benchmarks/``: tiny sizes, once, so the suite cannot rot.
SMOKE = SweepSettings((50, 200), 1, budget=1.0, batch=0.0, texts=(1_000, 4_000, 16_000))


#: Told each step as it starts (False) and each cell as it is finished (True).
SweepProgress: TypeAlias = Callable[[str, bool], None]


def over_max_time(results: Sequence[Series]) -> list[Skip]:
    """The steps the sweep's total bound left out (none if it was not reached)."""
    return [skip for series in results for skip in series.skips if skip.limit == MAX_TIME]


def python_target(name: str, factory: AssemblerFactory) -> BenchTarget:
    """An assembler factory measured in this process, unguarded (TargetError if it raises)."""
    return BenchTarget(name, has_read_since(name, factory), factory=factory)


def bundled_targets(in_process: bool = False) -> list[BenchTarget]:
    """Every bundled backend, in registry order, each in a worker unless ``in_process``."""
    return [
        BenchTarget(n, has_read_since(n, f), f if in_process else None) for n, f in BACKENDS.items()
    ]


def protocol_target(target: Target) -> BenchTarget:
    """A running testee, ``cmd:NAME``; each factory call starts a fresh assembler in it, whose
    every call is a request to instance "bench", which answers text or null."""

    def assembler() -> Any:
        target.new("bench")
        return SimpleNamespace(**{op: partial(_request, target, op) for op in OPS})

    return BenchTarget(f"cmd:{target.name}", READ_SINCE in target.features, assembler, True)


def _request(target: Target, op: str, *arguments: Any) -> Any:
    return target.perform(OPS[op]("bench", None, *arguments))


#: One step of a sweep on one target (``Bench``'s call): here, or asked of a worker.
Step = Callable[[str, str, int, bool], Any]


_WORKER_MAIN = "from tokasm.bench._worker import main; raise SystemExit(main())"


def _numbers(value: object, count: int, *, zero: bool = False) -> bool:
    """Whether ``value`` is ``count`` finite numbers, each over 0 (or 0 itself if ``zero``)."""
    values = value if isinstance(value, list) else [value]
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    least = 0.0 if zero else math.ulp(0.0)
    highest = sys.float_info.max  # an int above it overflows a float (10**400 / 2)
    return len(values) == len(numbers) == count and all(least <= v <= highest for v in numbers)


#: Whether an answer has its op's shape (``_worker.Bench``): a line of another shape on the
#: worker's channel came from the target (a time of 0 would divide the report by zero).
_SHAPES: dict[str, Callable[[object], bool]] = {
    "hello": lambda ok: type(ok) is bool,
    "prepare": lambda ok: type(ok) is list and _numbers(ok, 2),
    "time": lambda ok: type(ok) is not list and _numbers(ok, 1),
    "memory": lambda ok: type(ok) is list and _numbers(ok, 3, zero=True),
    "drop": lambda ok: ok is None,
}


class _Worker(Process):
    """``_worker.main`` on TARGET BATCH: loaded within ``first`` s (TargetError if it fails),
    each answer within ``each`` s, none after monotonic ``last``; ``size``: the step's."""

    max_line = 1 << 20

    def __init__(self, target: str, batch: float, first: float, each: float, last: float):
        super().__init__(python_child(_WORKER_MAIN, target, repr(batch)))
        self.each, self.last = each, last
        self.size: int | None = None
        try:
            self.read_since: bool = self._answer(first, "hello")
        except Raised as error:
            self.kill()
            raise TargetError(str(error)) from None

    def __call__(self, op: str, name: str, size: int, text: bool = False) -> Any:
        self.size = size
        self.write(json.dumps([op, name, size, text]).encode() + b"\n")
        return self._answer(self.each, op)

    def _answer(self, seconds: float, op: str) -> Any:
        """The next line's ``ok`` (Raised with its ``error``); a fault (TargetFault) kills the
        worker: a hang, its end, or a line that is not an answer."""
        wait = min(seconds, self.last - time.monotonic())
        try:
            answer = json.loads(raw := self.read_line(wait))
            if "error" in answer:  # the worker's is escaped; one the target forged may not be
                raise Raised(safe_block(answer["error"]))
            if not _SHAPES[op](answer["ok"]):
                raise ValueError(op)
            return answer["ok"]
        except NoResponse:
            fault: TargetFault = NoResponse(f"hung: no answer after {max(wait, 0):.3g} s; killed")
        except LineTooLong:
            fault = TargetFault("sent a line of over 1 MB")
        except TargetFault:  # it ended, or ends now: how, with the tail of its (escaped) stderr
            self.kill()
            code = self.popen.returncode
            how = f"killed by {signal_name(-code)}" if code < 0 else f"exit status {code}"
            tail = safe_block(self.stderr_text()[-600:].strip())
            fault = TargetFault(
                f"the worker ended ({how})" + (tail and f"; its stderr ends: {tail}")
            )
        except (ValueError, LookupError, TypeError, RecursionError):  # the target wrote it
            shown = raw[:200].decode("utf-8", "replace")
            fault = TargetFault(f"sent a line that is not a result: {shown!r}")
        self.kill()
        raise fault


def load_target(target: str, timeout: float) -> BenchTarget:
    """A target loaded in a worker, to learn ``read_since``; TargetError if it fails or hangs."""
    seconds = 2 * timeout + START_SECONDS
    try:
        worker = _Worker(target, 0.0, seconds, seconds, time.monotonic() + seconds)
    except NoResponse:
        raise TargetError(
            f"target {target!r}: loading it hung: no answer after "
            f"{seconds:.3g} s (twice --timeout, plus the start)"
        ) from None
    except TargetFault as error:
        raise TargetError(f"target {target!r}: {error}") from None
    worker.kill()
    return BenchTarget(target, worker.read_since)


def climb(
    series: Series,
    step: Step,
    settings: SweepSettings,
    deadline: float,
    progress: SweepProgress | None = None,
) -> None:
    """A batch per size ascending, each predicted first, over the sizes then the long texts;
    then rounds over them all (``MIN_ROUNDS`` to ``repeats``) until the verdicts are settled
    or the scenario has used its time (monotonic ``deadline``)."""
    scenario, budget, name = series.scenario, settings.budget, series.scenario.name
    runs = LONG_RUNS if scenario.text_sizes else 1  # a long text: batches, the fastest
    ladders = [(False, scenario.sizes(settings.sizes, settings.texts), series.points, runs)]
    if scenario.on_long_texts:
        ladders.append((True, list(settings.texts), series.texts, LONG_RUNS))
    trace = settings.memory and scenario.traced and not series.bench_target.per_request

    def ask(op: str, size: int, text: bool = False) -> Any:
        if progress:
            what, on = "memory of " if op == "memory" else "", " characters" if text else ""
            progress(f"{name}: {what}{series.bench_target.name} at {size}{on}", False)
        return step(op, name, size, text)

    for text, sizes, points, runs in ladders:
        steepest = 1.5 if text or scenario.per_operation else math.inf  # fixed count of ops
        for size in sizes:
            costs = [p.first_cost for p in points]
            predicted = runs * predict_seconds([p.size for p in points], costs, size, steepest)
            left = deadline - time.monotonic()
            if predicted > budget or MIN_ROUNDS * predicted > left:
                batch_of = f", {runs} runs a batch" if runs > 1 else ""
                why = (
                    f"budget: predicted {format_seconds(predicted / runs)} per run with its "
                    f"set-up{batch_of}, budget {budget:g} s"
                    if predicted > budget
                    else f"max-time: predicted {format_seconds(predicted * MIN_ROUNDS)} for "
                    f"{MIN_ROUNDS} batches, {max(left, 0.0):.3g} s left of --max-time"
                )
                if not text:  # a long text not timed only leaves the growth unknown
                    series.skips.append(Skip(size, why.partition(":")[0], f"over --{why}"))
                break
            setup, seconds = ask("prepare", size, text)
            points.append(Point(size, scenario.operations(size, text), [seconds], setup))
        traced = [p for p in points if p.first_cost <= budget / 5 / TRACE_FACTOR]
        if trace and traced and not text:  # a testee's memory is another process's
            traced[-1].memory = MemoryPeak(*ask("memory", traced[-1].size))
    spent = sum(p.first_cost for _, _, points, _ in ladders for p in points)
    for rounds in range(1, settings.repeats):
        over = spent > budget * settings.repeats / 6
        if time.monotonic() >= deadline or (rounds >= MIN_ROUNDS and (over or _settled(series))):
            return
        for text, _, points, runs in ladders:
            for point in points:
                point.batches.append(last := ask("time", point.size, text))
                spent += max(runs * last, settings.batch)


def _settled(series: Series) -> bool:
    """The verdict and the growth are the same at one error and at three, neither in doubt."""
    one, three = ([fitted.verdict for fitted in series.verdicts(z) if fitted] for z in (1, 3))
    pairs = zip(one, three, strict=True)
    return all(a == b and a != INCONCLUSIVE and "at least" not in a for a, b in pairs)


def _log(progress: SweepProgress | None, series: Series, size: int | None, outcome: str) -> None:
    if progress:
        at = "" if size is None else f" {format_size(size)}"
        progress(f"{series.scenario.name} {series.bench_target.name}{at}: {outcome}", True)


def _finished(progress: SweepProgress | None, series: Series) -> None:
    for point in series.points:
        memory = point.memory and f", peak mem {point.memory.ratio:.1f}x"
        cost = f"{format_seconds(point.per_operation)} per {series.scenario.unit}"
        _log(progress, series, point.size, cost + (memory or ""))
    for point in series.texts:
        cost = format_seconds(point.per_operation)
        _log(progress, series, None, f"{cost} per event on {format_size(point.size)} characters")
    for skip in series.skips:
        _log(progress, series, skip.size, f"skipped, {skip.reason}")


def _sweep(
    target: BenchTarget,
    run: list[Series],
    settings: SweepSettings,
    last: float,
    *,
    load: float,
    progress: SweepProgress | None,
) -> None:
    """Every scenario of ``run`` on ``target``, here or in a worker (a new one after one hung
    or died), by monotonic ``last``; ``load``: seconds for a worker's first line."""
    each = max(OVERRUN_FACTOR * settings.budget, OVERRUN_FLOOR)
    deadline, worker, loading = last - settings.budget, None, 0.0
    clock = time.perf_counter if target.per_request else time.thread_time
    bench = target.factory and Bench(target.factory, clock, settings.batch)
    try:
        for series in run:
            first = min(series.scenario.sizes(settings.sizes, settings.texts))
            try:
                if bench is None and worker is None:
                    if time.monotonic() >= deadline:
                        series.skips.append(Skip(first, MAX_TIME, "--max-time reached"))
                        continue
                    loading = time.monotonic()
                    worker = _Worker(target.name, settings.batch, load, each, last)
                    loading = time.monotonic() - loading  # its time starts once it is loaded
                step = bench or cast("Step", worker)
                climb(series, step, settings, deadline + loading, progress)
                try:
                    step("drop", series.scenario.name, 0, False)
                except TargetFault as fault:  # a finalizer ended or hung the worker (killed)
                    worker = None  # its scenario's error (not a cut by --max-time), all measured
                    if time.monotonic() < last or not isinstance(fault, NoResponse):
                        raise Raised(f"at its end, dropping what it kept: {fault}") from None
                _finished(progress, series)
            except Raised as error:
                series.error = str(error)[:2000]
                _log(progress, series, None, f"raised {series.error}")
            except (TargetFault, TargetError) as error:  # the worker is killed: a new one next
                size = (worker and worker.size) or first
                if worker is None or not isinstance(error, NoResponse):  # a hang is no error
                    series.error = str(error)
                limit = MAX_TIME if time.monotonic() >= last else BUDGET
                series.skips.append(Skip(size, limit, str(error), interrupted=True))
                _log(progress, series, size, str(error))
                worker = None
    finally:
        if worker:
            worker.kill()


def run_sweep(
    scenarios: Sequence[Scenario],
    bench_targets: Sequence[BenchTarget],
    settings: SweepSettings,
    progress: SweepProgress | None = None,
    load_timeout: float = 5.0,
) -> list[Series]:
    """Every scenario on every target that supports it, in turn, until ``max_time``."""
    bound = math.inf if settings.max_time is None else settings.max_time + settings.budget
    last, load = time.monotonic() + bound, 2 * load_timeout + START_SECONDS
    results: list[Series] = []
    for target in bench_targets:
        run = [
            Series(s, target) for s in scenarios if target.has_read_since or not s.needs_read_since
        ]
        _sweep(target, run, settings, last, load=load, progress=progress)
        results += run
    return results
