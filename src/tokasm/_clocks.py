"""The clocks tokasm measures by, taken before a worker imports the target, so one that
replaces ``time``'s functions (freezegun does) cannot change a cost verdict or a budget."""

from __future__ import annotations

import time

__all__ = ["monotonic", "perf_counter", "process_time"]

monotonic, perf_counter, process_time = time.monotonic, time.perf_counter, time.process_time
