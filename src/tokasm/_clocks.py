"""The clocks tokasm measures by, taken before a worker imports the target, so one that
replaces ``time``'s functions (freezegun does) cannot change a cost verdict or a budget.

Each is tokasm's own function calling the real clock, which it holds in a closure: what
freezegun replaces is every module's attribute that *is* a real clock, wherever it is."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["monotonic", "perf_counter", "process_time", "thread_time"]


def _held(clock: Callable[[], float]) -> Callable[[], float]:
    def read() -> float:
        return clock()

    return read


monotonic, perf_counter, process_time, thread_time = map(
    _held, (time.monotonic, time.perf_counter, time.process_time, time.thread_time)
)
