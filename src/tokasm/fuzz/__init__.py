"""Differential fuzzing against the model: what the CLI and the pytest route use.

``fuzz``, ``FuzzReport`` and ``Counterexample`` import Hypothesis, so they load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from tokasm.fuzz._phase import (
    CHECK_EXAMPLES,
    HYPOTHESIS_STORAGE_ENV,
    INSTANCE_NAMES,
    SHRINK_BUDGET,
    fuzz_phase,
    hypothesis_files_kept_by_tokasm,
)

if TYPE_CHECKING:
    from tokasm.fuzz._search import Counterexample, FuzzReport, fuzz

__all__ = [
    "CHECK_EXAMPLES",
    "HYPOTHESIS_STORAGE_ENV",
    "INSTANCE_NAMES",
    "SHRINK_BUDGET",
    "Counterexample",
    "FuzzReport",
    "fuzz",
    "fuzz_phase",
    "hypothesis_files_kept_by_tokasm",
]


def __getattr__(name: str) -> object:
    if name in ("Counterexample", "FuzzReport", "fuzz"):
        return getattr(importlib.import_module("tokasm.fuzz._search"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
