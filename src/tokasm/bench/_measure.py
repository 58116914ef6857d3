"""The numbers of a benchmark: sizes and durations as text, timing, memory, the log-log fit."""

from __future__ import annotations

import gc
import math
import sys
import time
import tracemalloc
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from tokasm.bench.scenarios import Action, Scenario
    from tokasm.bench.workload import Workload
    from tokasm.implementations import AssemblerFactory

_SUFFIXES = (("M", 1_000_000), ("k", 1_000))


def format_size(size: int) -> str:
    """``256000`` -> ``256k``, ``1000000`` -> ``1M``; other numbers as they are."""
    for suffix, factor in _SUFFIXES:
        if size >= factor and size % factor == 0:
            return f"{size // factor}{suffix}"
    return str(size)


def parse_size(text: str) -> int:
    """``4k`` -> 4000, ``1M`` -> 1000000, ``500`` -> 500; ValueError if not a positive size."""
    stripped, factor = text.strip(), 1
    for suffix, value in _SUFFIXES:
        if stripped.endswith((suffix, suffix.lower())):
            stripped, factor = stripped[:-1], value
            break
    size = int(stripped) * factor
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
    action: Action, batch: float = 0.0, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Seconds per run of ``action``, run back to back for at least ``batch`` seconds, with
    the cyclic GC off (as ``timeit``: a collection would charge one run for everyone's)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        runs, start = 0, clock()
        while True:
            action()
            runs += 1
            elapsed = clock() - start
            if elapsed >= batch:
                return elapsed / runs
    finally:
        if was_enabled:
            gc.enable()


def interleaved_min(
    actions: Mapping[str, Action], repeats: int, batch: float = 0.0
) -> dict[str, float]:
    """The minimum wall time of each action over ``repeats`` rounds of all of them."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    best = dict.fromkeys(actions, float("inf"))
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
    seconds: float = 0.0

    @property
    def ratio(self) -> float:
        return self.peak_bytes / self.text_bytes if self.text_bytes else float("nan")


def peak_memory(scenario: Scenario, factory: AssemblerFactory, workload: Workload) -> MemoryPeak:
    """Trace ``prepare`` and one run (the deltas sliced while streaming count, not the source)."""
    gc.collect()
    start = time.perf_counter()
    tracemalloc.start()
    try:
        texts = scenario.prepare(factory, workload)()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    seconds = time.perf_counter() - start
    return MemoryPeak(peak, sum(sys.getsizeof(text) for text in texts), seconds)


# The fit: the least-squares slope of log time against log size over the FIT_POINTS largest
# sizes (two points make any noise a slope), with a standard error from the points' noise.
# A verdict only if the exponent +- two errors stays in one band. A fixed count of operations
# (reads, appends) is fitted on its growth over the smallest size: a large fixed cost would
# hide a small growing one.
FIT_POINTS = 3
#: (upper bound of the exponent, verdict), in order; above the last: worse than quadratic.
VERDICT_BANDS = ((0.5, "constant"), (1.2, "linear"), (1.6, "superlinear"), (2.5, "quadratic"))
INCONCLUSIVE = "inconclusive"
GROWS = "grows"
#: Bounds on a point's relative noise; growth under SIGNIFICANT noises is none.
NOISE_FLOOR, NOISE_CEILING, SIGNIFICANT = 0.003, 0.25, 2.0
#: The least error of an exponent: two CPU burners add about 0.05 to a linear one.
EXPONENT_FLOOR = 0.05
#: A fixed-cost operation measures up to ~100ns apart from one heap layout to another.
GROWTH_FLOOR = 200e-9
#: A prediction takes the last exponent plus this, at least MIN_EXPONENT (errs high).
EXPONENT_MARGIN, MIN_EXPONENT = 0.5, 1.5


@dataclass(frozen=True)
class Fit:
    """An exponent (None below ``FIT_POINTS`` points), its standard error, and the verdict."""

    exponent: float | None
    error: float
    verdict: str


def _slope(xs: Sequence[float], ys: Sequence[float], noise: Sequence[float]) -> Fit:
    """The slope, its error, the verdict (``at least V`` if all it spans are worse than linear)."""
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sxx
    noise_error = math.sqrt(sum(((x - mean_x) * d) ** 2 for x, d in zip(xs, noise, strict=True)))
    error = max(noise_error / sxx, EXPONENT_FLOOR)
    low, high = verdict(slope - 2 * error), verdict(slope + 2 * error)
    if low == high:
        return Fit(slope, error, low)
    worse = low not in ("constant", "linear")
    return Fit(slope, error, f"at least {low}" if worse else INCONCLUSIVE)


def scaling_exponent(sizes: Sequence[int], seconds: Sequence[float]) -> float:
    """The log-log least-squares slope over the ``FIT_POINTS`` largest sizes."""
    if len(sizes) != len(seconds):
        raise ValueError(f"{len(sizes)} sizes but {len(seconds)} timings")
    points = sorted(zip(sizes, seconds, strict=True))[-FIT_POINTS:]
    if len({size for size, _ in points}) < 2:
        raise ValueError("a scaling exponent needs timings at two or more sizes")
    if any(size <= 0 or time <= 0 for size, time in points):
        raise ValueError("sizes and timings must be positive")
    xs = [math.log(size) for size, _ in points]
    ys = [math.log(time) for _, time in points]
    return _slope(xs, ys, [0.0] * len(xs)).exponent or 0.0


def fit(
    sizes: Sequence[int], seconds: Sequence[float], noise: Sequence[float], growth: bool
) -> Fit:
    """The fit of ``seconds`` (relative ``noise`` each) against ascending ``sizes``; with
    ``growth``, of their growth over the smallest: ``constant``, ``grows`` or inconclusive."""
    noise = [min(max(NOISE_FLOOR, d), NOISE_CEILING) for d in noise]
    points = list(zip(sizes, seconds, noise, strict=True))
    if growth and len(points) >= FIT_POINTS:
        (_, base, base_noise), rest = points[0], points[1:]
        spread = [SIGNIFICANT * (t * d + base * base_noise) for _, t, d in rest]
        grown = [
            (n, t - base, noise / SIGNIFICANT / (t - base))
            for (n, t, _), noise in zip(rest, spread, strict=True)
            if t - base > max(noise, GROWTH_FLOOR)
        ]
        if not grown:  # constant, unless the noise could hide a growth by half
            hidden = rest[-1][1] - base + spread[-1] / SIGNIFICANT > max(GROWTH_FLOOR, base / 2)
            return Fit(0.0, 0.0, INCONCLUSIVE if hidden else "constant")
        points = grown
    if len(points) < FIT_POINTS:
        return Fit(None, 0.0, INCONCLUSIVE if growth and len(sizes) >= FIT_POINTS else "-")
    last = points if growth else points[-FIT_POINTS:]  # growth: over every size it shows
    xs, ys = [math.log(n) for n, _, _ in last], [math.log(t) for _, t, _ in last]
    fitted = _slope(xs, ys, [d for _, _, d in last])
    if not growth or fitted.exponent is None:
        return fitted
    low = fitted.exponent - 2 * fitted.error
    return Fit(fitted.exponent, fitted.error, GROWS if low >= VERDICT_BANDS[0][0] else INCONCLUSIVE)


def verdict(exponent: float) -> str:
    """``constant``, ``linear``, ``superlinear``, ``quadratic`` or ``worse than quadratic``."""
    return next((name for bound, name in VERDICT_BANDS if exponent < bound), "worse than quadratic")


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
    growth: float = (size / sizes[-1]) ** min(exponent, steepest)
    return seconds[-1] * growth
