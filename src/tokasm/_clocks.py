"""The clocks tokasm measures by, taken as tokasm loads: in a worker that is before the
target's module runs, so a target that replaces ``time``'s functions (freezegun does)
cannot change a cost verdict or the fuzz phase's budget."""

from __future__ import annotations

import time

__all__ = ["monotonic", "perf_counter", "process_time"]

monotonic, perf_counter, process_time = time.monotonic, time.perf_counter, time.process_time
