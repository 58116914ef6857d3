"""Benchmarks shared by ``benchmarks/`` (pytest-benchmark) and ``tokasm bench``.

One definition of each scenario (``scenarios``) and of the text stream
(``workload``); ``measure`` times and traces them, ``fit`` turns a sweep into
a scaling exponent and a verdict, ``sweep`` runs the grid within a time
budget, and ``report`` and ``plot`` render it.
"""

from __future__ import annotations

from .fit import scaling_exponent, verdict
from .measure import MemoryPeak, interleaved_min, peak_memory, time_action
from .scenarios import SCENARIOS, Scenario
from .sweep import Contender, Series, SweepSettings, run_sweep
from .workload import Workload, make_workload

__all__ = [
    "SCENARIOS",
    "Contender",
    "MemoryPeak",
    "Scenario",
    "Series",
    "SweepSettings",
    "Workload",
    "interleaved_min",
    "make_workload",
    "peak_memory",
    "run_sweep",
    "scaling_exponent",
    "time_action",
    "verdict",
]
