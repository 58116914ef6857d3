"""Is it quadratic? A log-log fit of time against size, its uncertainty, and a plain verdict.

If time grows as ``c * n**k``, the least-squares slope of ``log t`` against
``log n`` is the scaling exponent ``k``. It is fitted over the ``FIT_POINTS``
largest sizes, never fewer: with two points any noise is a slope. Each point
carries its relative noise (the spread of its batches), which gives the slope
a standard error (at least ``EXPONENT_FLOOR``). A verdict is printed only if
the exponent plus or minus two errors stays within one band; if every band it
spans is worse than linear, ``at least`` the best of them; else
``inconclusive``.

When a fixed count of operations is timed at every size (reads, appends), a
large fixed cost per operation hides a small growing one, so the fit is of the
*growth*: the time at each size less the time at the smallest. Growth within
the noise at every size is ``constant``; at fewer than 3 sizes,
``inconclusive``; else the operation ``grows`` if its growth is at least
linear whatever the error (how fast is the exponent: the memory system bends
it, copying 16M characters costs more per character than copying 256k).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "FIT_POINTS",
    "GROWS",
    "INCONCLUSIVE",
    "VERDICT_BANDS",
    "Fit",
    "fit",
    "predict_seconds",
    "scaling_exponent",
    "verdict",
]

FIT_POINTS = 3
#: (upper bound of the exponent, verdict), checked in order; above the last:
#: ``worse than quadratic`` (a cost of n**3 or more, say a quadratic step per event).
VERDICT_BANDS: tuple[tuple[float, str], ...] = (
    (0.5, "constant"),
    (1.2, "linear"),
    (1.6, "superlinear"),
    (2.5, "quadratic"),
)
INCONCLUSIVE = "inconclusive"
#: The verdict on an operation whose cost grows with the text, at least linearly.
GROWS = "grows"
#: The least relative noise assumed of a point, and growth under this many noises is none.
NOISE_FLOOR = 0.003
#: The least error of an exponent: what a busy machine does to the caches of the largest
#: sizes (two CPU burners add about 0.05 to a linear exponent at --quick sizes).
EXPONENT_FLOOR = 0.05
#: The most: the minimum of several batches is taken to be within this of the true cost,
#: however far apart its two best (a run that changes regime, page faults, now and then).
NOISE_CEILING = 0.25
SIGNIFICANT = 2.0
#: ... nor under this many seconds per operation: an operation of fixed cost measures up
#: to about 100ns apart from one heap layout to another.
GROWTH_FLOOR = 200e-9


@dataclass(frozen=True)
class Fit:
    """An exponent (None below ``FIT_POINTS`` points), its standard error, and the verdict."""

    exponent: float | None
    error: float
    verdict: str


def _slope(xs: Sequence[float], ys: Sequence[float], noise: Sequence[float], good: str) -> Fit:
    """The least-squares slope, its error, and the verdict (``at least V`` if the error
    allows more than one but all are worse than ``good``)."""
    mean_x = sum(xs) / len(xs)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    mean_y = sum(ys) / len(ys)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sxx
    noise_error = math.sqrt(sum(((x - mean_x) * d) ** 2 for x, d in zip(xs, noise, strict=True)))
    error = max(noise_error / sxx, EXPONENT_FLOOR)
    low, high = verdict(slope - 2 * error), verdict(slope + 2 * error)
    if low == high:
        return Fit(slope, error, low)
    names = [name for _, name in VERDICT_BANDS]
    worse = names.index(low) > names.index(good) if low in names else True
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
    return _slope(xs, ys, [0.0] * len(xs), "linear").exponent or 0.0


def fit(
    sizes: Sequence[int], seconds: Sequence[float], noise: Sequence[float], growth: bool
) -> Fit:
    """The fit of ``seconds`` (relative ``noise`` each) against ``sizes``, ascending;
    ``growth``: ``seconds`` are per operation, and the fit is of their growth over the
    smallest size (see the module)."""
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
    xs = [math.log(n) for n, _, _ in last]
    ys = [math.log(t) for _, t, _ in last]
    fitted = _slope(xs, ys, [d for _, _, d in last], "linear")
    if not growth:
        return fitted
    assert fitted.exponent is not None
    low = fitted.exponent - 2 * fitted.error
    return Fit(fitted.exponent, fitted.error, GROWS if low >= VERDICT_BANDS[0][0] else INCONCLUSIVE)


def verdict(exponent: float) -> str:
    """``constant``, ``linear``, ``superlinear``, ``quadratic`` or ``worse than quadratic``."""
    for bound, name in VERDICT_BANDS:
        if exponent < bound:
            return name
    return "worse than quadratic"


#: The exponent measured over the last two sizes, plus this, predicts the next (a cost
#: ``a*n + b*n**2`` steepens toward 2 by less than this from one size to the next) ...
EXPONENT_MARGIN = 0.5
#: ... but never flatter than this, and 2 from a single point.
MIN_EXPONENT = 1.5


def predict_seconds(
    sizes: Sequence[int], seconds: Sequence[float], size: int, steepest: float = math.inf
) -> float:
    """Extrapolate the time at ``size`` from the last two points, erring high (used to skip
    a size that would blow a time budget), with an exponent of at most ``steepest`` (a
    step between two regimes of the memory system looks steeper than any trend). 0.0 when
    nothing is measured."""
    if not sizes:
        return 0.0
    exponent = 2.0
    if len(sizes) >= 2 and sizes[-1] != sizes[-2]:
        measured = scaling_exponent(sizes[-2:], [max(t, 1e-9) for t in seconds[-2:]])
        exponent = min(max(MIN_EXPONENT, measured + EXPONENT_MARGIN), max(2.0, measured))
    exponent = min(exponent, steepest)
    growth: float = (size / sizes[-1]) ** exponent
    return seconds[-1] * growth
