"""Is it quadratic? A log-log fit of time against size, and a plain verdict.

If time grows as ``c * n**k``, then ``log t = log c + k log n``: the slope of
a least-squares line through the points in log-log space is the scaling
exponent ``k``. An ``n log n`` cost has a local slope of ``1 + 1/ln n``
(about 1.1 over these sizes, so it reads ``linear``), and the bands below
separate what can be separated honestly: a constant, a linear, a clearly
superlinear and a quadratic cost.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "EXPONENT_MARGIN",
    "FIT_POINTS",
    "MIN_EXPONENT",
    "UNKNOWN_EXPONENT",
    "VERDICT_BANDS",
    "predict_seconds",
    "scaling_exponent",
    "verdict",
]

#: The exponent is fitted over the largest sizes measured, where the cost that
#: grows with n has overtaken the fixed per-call overhead of small sizes.
FIT_POINTS = 3

#: (upper bound of the exponent, verdict), checked in order.
VERDICT_BANDS: tuple[tuple[float, str], ...] = (
    (0.5, "constant"),
    (1.2, "linear"),
    (1.6, "superlinear"),
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
    """``constant``, ``linear``, ``superlinear``, ``quadratic`` or ``worse than quadratic``."""
    for bound, name in VERDICT_BANDS:
        if exponent < bound:
            return name
    return "worse than quadratic"


#: With one point there is no growth to measure: assume a quadratic one.
UNKNOWN_EXPONENT = 2.0
#: Added to the exponent measured over the last two sizes: a cost ``a*n + b*n**2``
#: steepens toward 2 as ``n`` grows, by less than this from one size to the next
#: (sizes up to 10x apart).
EXPONENT_MARGIN = 0.5
#: Never extrapolate flatter than this: noise can make a linear cost read flat.
MIN_EXPONENT = 1.5


def predict_seconds(sizes: Sequence[int], seconds: Sequence[float], size: int) -> float:
    """Extrapolate the time at ``size`` from the last two points, erring high.

    Used to skip a size that would blow a time budget, so it must not
    under-predict a cost that is turning quadratic: the exponent is the one
    measured over the last two points plus ``EXPONENT_MARGIN``, at least
    ``MIN_EXPONENT``, and capped at 2 unless the measured growth is steeper
    (``UNKNOWN_EXPONENT`` from a single point). 0.0 when nothing is measured.
    """
    if not sizes:
        return 0.0
    exponent = UNKNOWN_EXPONENT
    if len(sizes) >= 2 and sizes[-1] != sizes[-2]:
        measured = scaling_exponent(sizes[-2:], [max(t, 1e-9) for t in seconds[-2:]])
        exponent = min(max(MIN_EXPONENT, measured + EXPONENT_MARGIN), max(2.0, measured))
    growth: float = (size / sizes[-1]) ** exponent
    return seconds[-1] * growth
