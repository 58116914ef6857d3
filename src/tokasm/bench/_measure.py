"""Timing and memory of scenario actions: min of batches, tracemalloc peaks.

The minimum of several short batches is the best estimate of an action's cost
(noise only ever adds time). ``tokasm bench`` times with ``time.thread_time``,
this thread's CPU time, which the scheduler does not move when other processes
take the CPU; ``interleaved_min`` (used by the cost probe) keeps wall time.
"""

from __future__ import annotations

import gc
import sys
import time
import tracemalloc
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from tokasm.bench.scenarios import Action, Scenario
    from tokasm.bench.workload import Workload
    from tokasm.implementations import AssemblerFactory


__all__ = ["MemoryPeak", "interleaved_min", "peak_memory", "time_action"]


def time_action(
    action: Action, batch: float = 0.0, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Seconds of ``clock`` per run of ``action``, run back to back for at least ``batch``
    seconds (a run shorter than a time slice is mostly noise). The cyclic garbage collector
    is off meanwhile, as in ``timeit``: a collection would charge one action for everyone's
    garbage."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        runs = 0
        start = clock()
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
    actions: Mapping[str, Action], repeats: int, batch: float = 0.0, *, collect: bool = True
) -> dict[str, float]:
    """Time each action once per round for ``repeats`` rounds (wall time); the minimum of
    each. ``collect``: run the garbage collector first."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    best = dict.fromkeys(actions, float("inf"))
    if collect:
        gc.collect()
    for _ in range(repeats):
        for name, action in actions.items():
            best[name] = min(best[name], time_action(action, batch))
    return best


@dataclass(frozen=True)
class MemoryPeak:
    """Peak traced memory of one scenario run against the final texts it produced."""

    peak_bytes: int
    text_bytes: int
    #: Wall time of the traced set-up and run (tracemalloc slows it several times).
    seconds: float = 0.0

    @property
    def ratio(self) -> float:
        """Peak as a multiple of the final text size (``sys.getsizeof`` of the texts)."""
        return self.peak_bytes / self.text_bytes if self.text_bytes else float("nan")


def peak_memory(scenario: Scenario, factory: AssemblerFactory, workload: Workload) -> MemoryPeak:
    """Trace ``prepare`` and one run: everything the assembler held along the way (the
    workload is not counted; the deltas sliced from it while streaming are)."""
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
