"""Is it quadratic? A log-log fit of time against size, and a plain verdict.

If time grows as ``c * n**k``, then ``log t = log c + k log n``: the slope of
a least-squares line through the points in log-log space is the scaling
exponent ``k``. An ``n log n`` cost has a local slope of ``1 + 1/ln n``
(about 1.1 over these sizes), so the bands below separate what can be
separated honestly: a constant, a linear, a clearly superlinear and a
quadratic cost.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["FIT_POINTS", "VERDICT_BANDS", "predict_seconds", "scaling_exponent", "verdict"]

#: The exponent is fitted over the largest sizes measured, where the cost that
#: grows with n has overtaken the fixed per-call overhead of small sizes.
FIT_POINTS = 3

#: (upper bound of the exponent, verdict), checked in order.
VERDICT_BANDS: tuple[tuple[float, str], ...] = (
    (0.5, "constant"),
    (1.2, "linear"),
    (1.6, "n log n"),
    (2.5, "quadratic"),
)


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
    mean_x = sum(xs) / len(xs)
    mean_y = sum(ys) / len(ys)
    covariance = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    variance = sum((x - mean_x) ** 2 for x in xs)
    return covariance / variance


def verdict(exponent: float) -> str:
    """``constant``, ``linear``, ``n log n``, ``quadratic`` or ``worse than quadratic``."""
    for bound, name in VERDICT_BANDS:
        if exponent < bound:
            return name
    return "worse than quadratic"


def predict_seconds(sizes: Sequence[int], seconds: Sequence[float], size: int) -> float:
    """Extrapolate the time at ``size`` from the last two points (at least linearly).

    Used to skip a size that would blow the time budget; it errs toward
    running, because a single point is extrapolated linearly.
    """
    if not sizes:
        return 0.0
    exponent = 1.0
    if len(sizes) >= 2 and sizes[-1] != sizes[-2]:
        exponent = max(1.0, scaling_exponent(sizes[-2:], seconds[-2:]))
    growth: float = (size / sizes[-1]) ** exponent
    return seconds[-1] * growth
