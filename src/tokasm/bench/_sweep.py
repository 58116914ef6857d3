"""Scenarios x contenders over a sweep of sizes; a Python target only in a supervised worker.

A worker (``_worker``) sends a JSON line per step; a late or bad line or a death kills its
process group and stops that scenario (the size ``stopped``; the scenario's error unless it
hung measuring); a new worker takes the scenarios after it. Protocol testees and
``--in-process`` run ``measure`` here.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from tokasm.bench._measure import Fit, MemoryPeak, Point, format_seconds, format_size, verdicts
from tokasm.bench._worker import has_read_since, measure
from tokasm.bench.scenarios import LONG_TEXTS
from tokasm.corpus.steps import OPS, READ_SINCE
from tokasm.errors import TargetError
from tokasm.implementations import BACKENDS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from tokasm.bench.scenarios import Scenario
    from tokasm.implementations import Assembler, AssemblerFactory
    from tokasm.run.targets import Target

BUDGET, MAX_TIME = "budget", "max-time"
#: A worker silent for this many times the budget (at least ``OVERRUN_FLOOR`` s) is killed.
OVERRUN_FACTOR, OVERRUN_FLOOR = 3.0, 2.0
#: Allowed beyond twice the load timeout for a worker's interpreter to start.
START_SECONDS = 2.0
MAX_LINE = 1 << 20


@dataclass(frozen=True)
class Contender:
    """What to measure: a ``target`` run in a worker, or a ``factory`` run here (over the
    line protocol, ``per_request``: each call a request, in wall time, memory not traced)."""

    name: str
    has_read_since: bool
    target: str | None = None
    factory: AssemblerFactory | None = None
    per_request: bool = False


@dataclass(frozen=True)
class Skip:
    """A size not run, or stopped (``interrupted``) where its worker was killed."""

    size: int
    limit: str
    reason: str
    interrupted: bool = False


@dataclass
class Series:
    """One scenario on one contender; ``texts``: its points on long texts."""

    scenario: Scenario
    contender: Contender
    points: list[Point] = field(default_factory=list)
    skips: list[Skip] = field(default_factory=list)
    error: str | None = None
    texts: list[Point] = field(default_factory=list)

    @property
    def traced(self) -> Point | None:
        return next((p for p in self.points if p.memory is not None), None)

    @property
    def fit(self) -> Fit:
        return self.verdicts[0]

    @property
    def verdicts(self) -> tuple[Fit, Fit | None]:
        """The fit with its verdict, and how the cost of an event grows on long texts."""
        texts = None if self.scenario.per_operation else self.texts
        return verdicts(self.points, texts, self.scenario.per_operation)


@dataclass(frozen=True)
class SweepSettings:
    """``repeats``: most rounds of a batch per size; ``budget``: the most a run may take, and,
    times ``repeats`` / 6, a scenario before rounds past the third; ``batch``: least seconds
    a batch takes; ``max_time``: start nothing predicted to end later; ``texts``: the
    lengths of the long texts."""

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


class SweepProgress(Protocol):
    """Told what the sweep does: a live line shows steps, a log shows finished cells."""

    def starting(self, step: str) -> None: ...

    def finished(self, cell: str) -> None: ...


def over_max_time(results: Sequence[Series]) -> list[Skip]:
    """The steps the sweep's total bound left out (none if it was not reached)."""
    return [skip for series in results for skip in series.skips if skip.limit == MAX_TIME]


def python_contender(name: str, factory: AssemblerFactory) -> Contender:
    """An assembler factory measured in this process, unguarded (TargetError if it raises)."""
    return Contender(name, has_read_since(name, factory), factory=factory)


def bundled_contenders(in_process: bool = False) -> list[Contender]:
    """Every bundled backend, in registry order, each in a worker unless ``in_process``."""
    return [
        python_contender(n, f) if in_process else Contender(n, has_read_since(n, f), target=n)
        for n, f in BACKENDS.items()
    ]


class _SubjectAssembler:
    """Each call a request to a protocol testee (instance "bench"), which answers text or null."""

    def __init__(self, subject: Target) -> None:
        self._perform = subject.perform
        subject.new("bench")

    def __getattr__(self, op: str) -> Callable[..., Any]:
        if op not in OPS:
            raise AttributeError(op)
        return lambda *arguments: self._perform(OPS[op]("bench", None, *arguments))


def protocol_contender(subject: Target) -> Contender:
    """A running testee, ``cmd:NAME``; each factory call starts a fresh assembler in it."""

    def factory() -> Assembler:
        return _SubjectAssembler(subject)

    has_read_since = READ_SINCE in subject.features
    return Contender(f"cmd:{subject.name}", has_read_since, factory=factory, per_request=True)


class _WorkerFailed(Exception):
    """The worker died, or sent what is not a line of its own."""


class _WorkerHung(_WorkerFailed):
    """The worker sent no line in time."""


def _spec(target: str | None, names: Sequence[str], settings: SweepSettings, last: float) -> Any:
    """What a worker measures; ``seconds``: left until monotonic ``last`` less a budget."""
    seconds = None if last == math.inf else last - settings.budget - time.monotonic()
    return {**asdict(settings), "target": target, "scenarios": list(names), "seconds": seconds}


class _Worker:
    """``python -m tokasm.bench._worker SPEC`` in a session of its own, stderr to a file."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by ``close``)
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tokasm.bench._worker", json.dumps(spec)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            start_new_session=True,
        )

    def lines(self, first: float, each: float, last: float) -> Iterator[Any]:
        """Its lines: the first within ``first`` s, each next within ``each``, none after
        monotonic ``last``."""
        buffer, seconds, fd = b"", first, self._process.stdout.fileno()  # type: ignore[union-attr]
        while True:
            deadline = min(time.monotonic() + seconds, last)
            while b"\n" not in buffer:
                wait = deadline - time.monotonic()
                if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                    waited = seconds - (deadline - time.monotonic())
                    raise _WorkerHung(f"hung: no answer after {waited:.3g} s; killed")
                if not (chunk := os.read(fd, 65536)):
                    return
                if len(buffer := buffer + chunk) > MAX_LINE:
                    raise _WorkerFailed("sent a line of over 1 MB")
            raw, _, buffer = buffer.partition(b"\n")
            try:
                yield json.loads(raw)
            except ValueError:
                raise _WorkerFailed(f"sent a line that is not a result: {raw[:200]!r}") from None
            seconds = each

    def ended(self) -> str:
        """How the worker ended (waited for briefly), with the tail of its stderr."""
        try:
            code = self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.close()
            code = self._process.returncode
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        self._stderr.seek(0)
        tail = self._stderr.read()[-600:].decode("utf-8", "replace").strip()
        return f"the worker ended ({how})" + (f"; its stderr ends: {tail}" if tail else "")

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signal.SIGKILL)
        self._process.wait()
        self._process.stdout.close()  # type: ignore[union-attr]
        self._stderr.close()


def load_contender(target: str, timeout: float) -> Contender:
    """A target loaded in a worker, to learn ``read_since``; TargetError if it fails or hangs."""
    worker = _Worker(_spec(target, [], SMOKE, math.inf))
    seconds = 2 * timeout + START_SECONDS
    try:
        line = next(worker.lines(seconds, seconds, time.monotonic() + seconds), None)
        if line is None:
            raise TargetError(f"target {target!r}: {worker.ended()}")
        if "error" in line:
            raise TargetError(line["error"])
        return Contender(target, line["hello"]["read_since"], target=target)
    except _WorkerFailed:
        raise TargetError(
            f"target {target!r}: loading it hung: no answer after "
            f"{seconds:.3g} s (twice --timeout, plus the start)"
        ) from None
    finally:
        worker.close()


class _Recorder:
    """Turns the lines of one contender into its series."""

    def __init__(self, series: dict[str, Series], progress: SweepProgress | None) -> None:
        self.series, self.progress = series, progress
        self.current: str | None = None
        self.size: int | None = None  # of the measurement under way
        self.done: set[str] = set()

    def log(self, series: Series, size: int | None, outcome: str) -> None:
        if self.progress:
            at = "" if size is None else f" {format_size(size)}"
            self.progress.finished(f"{series.scenario.name} {series.contender.name}{at}: {outcome}")

    def _finished(self, series: Series) -> None:
        for point in series.points:
            memory = point.memory and f", peak mem {point.memory.ratio:.1f}x"
            cost = f"{format_seconds(point.per_operation)} per {series.scenario.unit}"
            self.log(series, point.size, cost + (memory or ""))
        for point in series.texts:
            cost = format_seconds(point.per_operation)
            self.log(series, None, f"{cost} per event on {format_size(point.size)} characters")
        for skip in series.skips:
            self.log(series, skip.size, f"skipped, {skip.reason}")

    def take(self, line: dict[str, Any]) -> None:
        """Record one line of the worker's (trusted: it was JSON from our own code)."""
        if "scenario" not in line:  # hello, or the target failed to load
            if "error" in line:
                raise _WorkerFailed(line["error"])
            return
        name, size, text = line["scenario"], line.get("size", 0), line.get("text", False)
        series, self.current = self.series[name], name
        points = series.texts if text else series.points
        point = next((p for p in points if p.size == size), None)
        if line.get("done"):
            self.done.add(name)
            self._finished(series)
        elif "error" in line:
            series.error = str(line["error"])[:2000]
            self.log(series, None, f"raised {series.error}")
        elif "starting" in line:
            self.size = size
            if self.progress:
                what = "memory of " if line["starting"] == "memory" else ""
                on = " characters" if text else ""
                self.progress.starting(f"{name}: {what}{series.contender.name} at {size}{on}")
        elif "skip" in line:
            series.skips.append(Skip(size, line["skip"], line["reason"]))
        elif "memory" in line:
            point.memory = MemoryPeak(*line["memory"])  # type: ignore[union-attr]
        else:
            if point is None:
                count = series.scenario.operations(size, text)
                points.append(point := Point(size, count, setup_seconds=line["setup"]))
            point.batches.append(line["seconds"])


def _supervise(
    contender: Contender, recorder: _Recorder, settings: SweepSettings, last: float, load: float
) -> None:
    """Workers for ``contender`` until every scenario is done or errored, by monotonic
    ``last``; ``load``: seconds for a worker's first line."""
    each = max(OVERRUN_FACTOR * settings.budget, OVERRUN_FLOOR)
    while left := [name for name in recorder.series if name not in recorder.done]:
        if time.monotonic() >= last - settings.budget:
            for name in left:
                size = min(recorder.series[name].scenario.sizes(settings.sizes, settings.texts))
                recorder.series[name].skips.append(Skip(size, MAX_TIME, "--max-time reached"))
            return
        worker = _Worker(_spec(contender.target, left, settings, last))
        recorder.current = recorder.size = None
        hung = False
        try:
            for line in worker.lines(load, each, last):
                recorder.take(line)
            failure = None if set(left) <= recorder.done else worker.ended()
        except _WorkerFailed as error:
            failure, hung = str(error), isinstance(error, _WorkerHung)
        finally:
            worker.close()
        if failure is None:
            return
        name = recorder.current or left[0]
        series = recorder.series[name]
        limit = MAX_TIME if time.monotonic() >= last else BUDGET
        if not hung or recorder.size is None:  # a hang while loading is the target's error
            series.error = series.error or failure
        size = recorder.size or min(series.scenario.sizes(settings.sizes, settings.texts))
        series.skips.append(Skip(size, limit, failure, interrupted=True))
        recorder.log(series, size, failure)
        recorder.done.add(name)


def run_sweep(
    scenarios: Sequence[Scenario],
    contenders: Sequence[Contender],
    settings: SweepSettings,
    progress: SweepProgress | None = None,
    load_timeout: float = 5.0,
) -> list[Series]:
    """Every scenario on every contender that supports it, in turn, until ``max_time``."""
    bound = math.inf if settings.max_time is None else settings.max_time + settings.budget
    last = time.monotonic() + bound
    results: list[Series] = []
    for contender in contenders:
        run = [s for s in scenarios if contender.has_read_since or not s.needs_read_since]
        recorder = _Recorder({s.name: Series(s, contender) for s in run}, progress)
        if contender.factory is None:
            _supervise(contender, recorder, settings, last, 2 * load_timeout + START_SECONDS)
        else:
            clock = time.perf_counter if contender.per_request else time.thread_time
            spec = _spec(None, [s.name for s in run], settings, last)
            spec["memory"] = settings.memory and not contender.per_request  # a testee: elsewhere
            for line in measure(contender.factory, spec, clock):
                recorder.take(line)
        results.extend(recorder.series.values())
    return results
