"""The numbers of a benchmark: sizes and durations as text, timing, memory, the fit, the verdict."""

from __future__ import annotations

import gc
import math
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tokasm import _clocks

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from tokasm.bench.scenarios import Action, Scenario, Workload
    from tokasm.implementations import AssemblerFactory

__all__ = [
    "format_seconds", "format_size", "interleaved_min", "parse_size", "peak_memory",
    "predict_seconds", "scaling_exponent", "time_action", "verdict",
]  # fmt: skip

_SUFFIXES = {"M": 1_000_000, "k": 1_000}


def format_size(size: int) -> str:
    """``256000`` -> ``256k``, ``1000000`` -> ``1M``; other numbers as they are."""
    for suffix, factor in _SUFFIXES.items():
        if size >= factor and size % factor == 0:
            return f"{size // factor}{suffix}"
    return str(size)


def parse_size(text: str) -> int:
    """``4k`` -> 4000, ``1M`` or ``1m`` -> 1000000, ``500`` -> 500; ValueError unless >= 1."""
    stripped = text.strip()
    factor = {**_SUFFIXES, "m": 1_000_000}.get(stripped[-1:])
    size = int(stripped[:-1] if factor else stripped) * (factor or 1)
    if size < 1:
        raise ValueError(f"size must be at least 1, got {text!r}")
    return size


def format_seconds(seconds: float) -> str:
    """A duration in the unit that keeps three significant digits readable."""
    for unit, factor in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= factor * 0.9995:  # 999.7ns rounds to "1us", never "1e+03ns"
            return f"{seconds / factor:.3g}{unit}"
    return f"{seconds / 1e-9:.3g}ns"


def time_action(
    action: Action,
    batch: float = 0.0,
    clock: Callable[[], float] = time.perf_counter,
    most: float = math.inf,
) -> float:
    """Seconds per run of ``action``, run back to back for at least ``batch`` seconds (or
    ``most`` runs), with the cyclic GC off (as ``timeit``: a collection would charge one run
    for everyone's)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        runs, start = 1, clock()
        action()
        while (elapsed := clock() - start) < batch and runs < most:
            action()
            runs += 1
        return elapsed / runs
    finally:
        if was_enabled:
            gc.enable()


def interleaved_min(
    actions: Mapping[str, Action], repeats: int, batch: float = 0.0
) -> dict[str, float]:
    """The minimum wall time of each action over ``repeats`` rounds of all of them."""
    best = dict.fromkeys(actions, math.inf)
    gc.collect()
    for _ in range(repeats):
        for name, action in actions.items():
            best[name] = min(best[name], time_action(action, batch))
    return best


@dataclass(frozen=True)
class MemoryPeak:
    """Peak traced memory of one scenario run, the size of its final texts, the traced time."""

    peak_bytes: int
    text_bytes: int
    traced_seconds: float = 0.0

    @property
    def ratio(self) -> float:
        return self.peak_bytes / self.text_bytes if self.text_bytes else float("nan")


def peak_memory(scenario: Scenario, factory: AssemblerFactory, workload: Workload) -> MemoryPeak:
    """Trace ``prepare`` and one run (the deltas sliced while streaming count, not the source)."""
    gc.collect()
    start = _clocks.perf_counter()
    tracemalloc.start()
    try:
        texts = scenario.prepare(factory, workload)()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return MemoryPeak(peak, sum(map(sys.getsizeof, texts)), _clocks.perf_counter() - start)


# The fit, as docs/benchmarks.md explains it: the slope through each size's fastest batch, its
# error from the spread of the rounds' slopes (at least that of points NOISE_FLOOR noisy).
#: A stream's fit: the sizes within FIT_SPAN times the largest (a fixed cost flattens the small).
FIT_POINTS, FIT_SPAN = 3, 8
#: (upper bound of the exponent, verdict), in order; above the last: worse than quadratic.
VERDICT_BANDS = ((0.5, "constant"), (1.2, "linear"), (1.6, "superlinear"), (2.5, "quadratic"))
INCONCLUSIVE, GROWS, WORSE = "inconclusive", "grows", "worse than quadratic"
#: A cost per operation ``grows`` if GROWTH times larger at the largest size (a copy of the text).
NOISE_FLOOR, GROWTH = 0.1, 3.0
#: A prediction takes the last exponent plus this, at least MIN_EXPONENT (errs high).
EXPONENT_MARGIN, MIN_EXPONENT = 0.5, 1.5


@dataclass(frozen=True)
class Fit:
    """An exponent (None below ``FIT_POINTS`` points), its error, and the verdict."""

    exponent: float | None
    error: float
    verdict: str


def _slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sxx


def scaling_exponent(sizes: Sequence[int], seconds: Sequence[float]) -> float:
    """The log-log least-squares slope over the ``FIT_POINTS`` largest sizes."""
    points = sorted(zip(sizes, seconds, strict=True))[-FIT_POINTS:]
    if len({size for size, _ in points}) < 2:
        raise ValueError("a scaling exponent needs timings at two or more sizes")
    return _slope([math.log(n) for n, _ in points], [math.log(t) for _, t in points])


def verdict(exponent: float) -> str:
    """``constant``, ``linear``, ``superlinear``, ``quadratic`` or ``worse than quadratic``."""
    return next((name for bound, name in VERDICT_BANDS if exponent < bound), WORSE)


def fit(
    sizes: Sequence[int], rounds: Sequence[Sequence[float]], per_operation: bool, z: float = 2.0
) -> Fit:
    """The fit of ``rounds`` (each: seconds at every one of the ascending ``sizes``), the
    verdict for the exponent +- ``z`` errors."""
    if not per_operation:
        keep = max(FIT_POINTS, sum(n * FIT_SPAN >= sizes[-1] for n in sizes))
        sizes, rounds = sizes[-keep:], [row[-keep:] for row in rounds]
    if len(sizes) < FIT_POINTS or not rounds:
        return Fit(None, 0.0, "-")
    xs = [math.log(n) for n in sizes]
    logs = [[math.log(max(t, 1e-12)) for t in row] for row in rounds]
    slopes = [_slope(xs, row) for row in logs]
    exponent = _slope(xs, [min(column) for column in zip(*logs, strict=False)])
    spread = 1.4826 * statistics.median(abs(slope - statistics.median(slopes)) for slope in slopes)
    floor = NOISE_FLOOR / math.sqrt(sum((x - sum(xs) / len(xs)) ** 2 for x in xs))
    error = max(1.2533 * spread / math.sqrt(len(slopes)), floor)  # a median's, robust sigma
    low, high = exponent - z * error, exponent + z * error
    if per_operation:  # the growth from the smallest size to the largest
        span, bound = xs[-1] - xs[0], math.log(GROWTH)
        named = GROWS if low * span >= bound else "constant" if high * span < bound else None
        return Fit(exponent, error, named or INCONCLUSIVE)
    if verdict(low) == verdict(high):
        return Fit(exponent, error, verdict(low))
    worse = verdict(low) not in ("constant", "linear")
    return Fit(exponent, error, f"at least {verdict(low)}" if worse else INCONCLUSIVE)


def judge(stream: Fit, long_text: Fit, z: float = 2.0) -> str:
    """A stream's verdict from its sweep and the cost of its events on long texts: an event
    that costs the same there cannot make the stream worse than linear unless the sweep shows
    it; one that grows copies the text, quadratic unless the sweep shows worse."""
    low = None if stream.exponent is None else verdict(stream.exponent - z * stream.error)
    if long_text.verdict == GROWS:
        return WORSE if low == WORSE else "quadratic"
    if long_text.verdict == "constant" and low in (None, "constant", "linear"):
        return "linear"
    return stream.verdict


def predict_seconds(
    sizes: Sequence[int], seconds: Sequence[float], size: int, steepest: float = math.inf
) -> float:
    """The time at ``size`` from the last two points, erring high, with an exponent of at most
    ``steepest`` (a step between memory regimes looks steeper than any trend); 0.0 if none."""
    if not sizes:
        return 0.0
    exponent = 2.0
    if len(sizes) >= 2 and sizes[-1] != sizes[-2]:
        measured = scaling_exponent(sizes[-2:], [max(t, 1e-9) for t in seconds[-2:]])
        exponent = min(max(MIN_EXPONENT, measured + EXPONENT_MARGIN), max(2.0, measured))
    try:
        growth: float = (size / sizes[-1]) ** min(exponent, steepest)
    except OverflowError:  # beyond any budget
        return math.inf
    return seconds[-1] * growth
