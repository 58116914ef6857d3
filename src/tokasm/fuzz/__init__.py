"""Differential fuzzing against the model: ``tokasm check``'s short fuzz after the corpus,
``tokasm fuzz``'s fixed numbers, and where Hypothesis writes its files.

``fuzz``, ``FuzzReport`` and ``Counterexample`` import Hypothesis, so they load on first use:
a command that does not fuzz (``--help``, ``--fuzz-examples 0``) does not pay for it.
"""

from __future__ import annotations

import importlib
import os
import tempfile
from contextlib import contextmanager
from typing import TYPE_CHECKING

from tokasm.corpus._paths import cache_dir

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from tokasm.fuzz._search import Counterexample, FuzzReport, fuzz
    from tokasm.run.results import CaseResult
    from tokasm.run.targets import Target

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

#: Instance names a fuzzed program may use, as the case schema allows them.
INSTANCE_NAMES: tuple[str, ...] = ("a", "b", "c", "d")
#: Default seconds Hypothesis may spend shrinking a disagreement.
SHRINK_BUDGET = 5.0
#: Examples of ``tokasm check``'s fuzz phase per target (fixed seed 0, so verdicts repeat).
CHECK_EXAMPLES = 50
#: Hypothesis's own variable for the folder it writes in (``.hypothesis`` when unset).
HYPOTHESIS_STORAGE_ENV = "HYPOTHESIS_STORAGE_DIRECTORY"


def fuzz_phase(
    subject: Target, corpus_results: Iterable[CaseResult], examples: int = CHECK_EXAMPLES
) -> tuple[str, ...]:
    """No problem, or the disagreement the fuzzer found, for any ``Target``.

    It looks for what the corpus missed, so it runs only when every case passed or
    was skipped. A disagreement is a run-level problem, never an xfail-able case.
    """
    if examples <= 0 or any(r.outcome not in ("passed", "skipped") for r in corpus_results):
        return ()
    from tokasm.fuzz._search import fuzz

    # 20 s: a slow target cannot stall the run.
    problem = fuzz(subject, examples=examples, seed=0, budget=20.0, shrink_budget=3.0).problem()
    return () if problem is None else (problem,)


@contextmanager
def hypothesis_files_kept_by_tokasm() -> Iterator[None]:
    """For the ``tokasm`` program: Hypothesis writes under tokasm's cache folder, not into
    the user's project as ``.hypothesis/``. A folder the user chose
    (``HYPOTHESIS_STORAGE_DIRECTORY``) is kept; with tokasm's cache off, a temporary one is
    used and removed at the end. Hypothesis reads the variable once, at its first write."""
    folder = cache_dir()
    if HYPOTHESIS_STORAGE_ENV in os.environ:
        yield
    elif folder is None:
        with tempfile.TemporaryDirectory(prefix="tokasm-hypothesis-") as temporary:
            os.environ[HYPOTHESIS_STORAGE_ENV] = temporary
            yield
    else:
        os.environ[HYPOTHESIS_STORAGE_ENV] = str(folder / "hypothesis")
        yield


def __getattr__(name: str) -> object:
    if name in ("Counterexample", "FuzzReport", "fuzz"):
        return getattr(importlib.import_module("tokasm.fuzz._search"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
