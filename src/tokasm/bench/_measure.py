"""Timing and memory of scenario actions: min of N interleaved runs, tracemalloc peaks.

The machine is shared and noisy, and noise only ever adds time: the minimum
of several runs is the best estimate of an action's cost. Running the
contenders in turn within each round (interleaving) spreads any slow period
over all of them instead of penalizing whichever ran during it.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tokasm._clocks import Clocks

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tokasm.bench.scenarios import Action, Scenario
    from tokasm.bench.workload import Workload
    from tokasm.implementations import AssemblerFactory


__all__ = ["MemoryPeak", "interleaved_min", "peak_memory", "time_action"]


def time_action(action: Action, batch: float = 0.0) -> float:
    """Seconds per run of ``action``, run back to back for at least ``batch`` seconds.

    A run shorter than a scheduler time slice is mostly noise; batching short
    runs (as ``timeit`` does) measures their mean instead. The cyclic garbage
    collector is off meanwhile, as in ``timeit``: assemblers make no cycles,
    and a collection would charge one action for everyone's garbage.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        runs = 0
        start = Clocks.perf_counter()
        while True:
            action()
            runs += 1
            elapsed = Clocks.perf_counter() - start
            if elapsed >= batch:
                return elapsed / runs
    finally:
        if was_enabled:
            gc.enable()


def interleaved_min(
    actions: Mapping[str, Action], repeats: int, batch: float = 0.0, *, collect: bool = True
) -> dict[str, float]:
    """Time each action once per round for ``repeats`` rounds; the minimum seconds of each.
    ``collect``: run the garbage collector first (a full collection of a large heap costs
    tens of milliseconds: a caller timing several sets in a row collects once)."""
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
    #: Wall time of the traced set-up and run: tracemalloc makes it several
    #: times slower than an untraced one, so the sweep predicts it on its own.
    seconds: float = 0.0

    @property
    def ratio(self) -> float:
        """Peak as a multiple of the final text size (``sys.getsizeof`` of the texts)."""
        return self.peak_bytes / self.text_bytes if self.text_bytes else float("nan")


def peak_memory(scenario: Scenario, factory: AssemblerFactory, workload: Workload) -> MemoryPeak:
    """Trace ``prepare`` and one run: everything the assembler held along the way.

    The workload already exists and is not counted; the deltas sliced from it
    while streaming are, for as long as the assembler keeps them.
    """
    gc.collect()
    start = Clocks.perf_counter()
    tracemalloc.start()
    try:
        texts = scenario.prepare(factory, workload)()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    seconds = Clocks.perf_counter() - start
    return MemoryPeak(peak, sum(sys.getsizeof(text) for text in texts), seconds)
