"""The clocks tokasm times out and measures by, taken as tokasm loads.

A target runs in tokasm's process and may replace ``time.monotonic`` or
``time.perf_counter``: freezegun does (and rebinds every module attribute that
holds the real function), and a double may raise. The watchdog would then never
see a hang end its limit, nor a budget its end. So tokasm reads the real
functions from a class, where no such rebinding reaches.
"""

from __future__ import annotations

import time

__all__ = ["Clocks"]


class Clocks:
    """The real clocks, as they were when tokasm loaded."""

    monotonic = time.monotonic
    perf_counter = time.perf_counter
