"""Differential fuzzing against the model: ``tokasm check``'s fuzz phase and ``tokasm fuzz``
(``fuzz``, ``FuzzReport`` and ``Counterexample`` import Hypothesis, so load on first use)."""

from __future__ import annotations

import os
import tempfile
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

from tokasm.corpus._paths import cache_dir

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from tokasm.fuzz._search import Counterexample, FuzzReport, fuzz
    from tokasm.run.results import CaseResult
    from tokasm.run.targets import Target

__all__ = ["CHECK_EXAMPLES", "HYPOTHESIS_STORAGE_ENV", "INSTANCE_NAMES", "SHRINK_BUDGET",
           "Counterexample", "FuzzReport", "fuzz", "fuzz_phase",
           "hypothesis_files_kept_by_tokasm"]  # fmt: skip

#: Instance names a fuzzed program may use, as the case schema allows them.
INSTANCE_NAMES: tuple[str, ...] = ("a", "b", "c", "d")
#: Default seconds Hypothesis may spend shrinking a disagreement.
SHRINK_BUDGET = 5.0
#: Examples of ``tokasm check``'s fuzz phase per target (fixed seed 0, so verdicts repeat).
CHECK_EXAMPLES = 50
#: Hypothesis's own variable for the folder it writes in (``.hypothesis`` when unset).
HYPOTHESIS_STORAGE_ENV = "HYPOTHESIS_STORAGE_DIRECTORY"


def fuzz_phase(
    target: Target, corpus_results: Iterable[CaseResult], examples: int = CHECK_EXAMPLES
) -> tuple[str, ...]:
    """The disagreement found, if any: a run-level problem, never an xfail-able case. It
    looks for what the corpus missed, so it runs only when every case passed or skipped."""
    if examples <= 0 or any(r.outcome not in ("passed", "skipped") for r in corpus_results):
        return ()
    from tokasm.run import Worker

    if isinstance(target, Worker):  # run in the worker's process
        return target.fuzz(examples)
    from tokasm.fuzz._search import fuzz

    # 20 s: a slow target cannot stall the run.
    report = fuzz(target, examples=examples, seed=0, budget=20.0, shrink_budget=3.0)
    if (found := report.counterexample) is None:
        return ()
    return (f"fuzz {report.verdict()}\n{found.result.message}\nshrunk counterexample (save it "
            f"as a corpus case):\n{found.yaml}",)  # fmt: skip


@contextmanager
def hypothesis_files_kept_by_tokasm() -> Iterator[None]:
    """Hypothesis writes under tokasm's cache folder (with the cache off, a temporary one),
    not into the user's project; a ``HYPOTHESIS_STORAGE_DIRECTORY`` the user set is kept."""
    folder = cache_dir()
    with ExitStack() as stack:
        if HYPOTHESIS_STORAGE_ENV not in os.environ:
            os.environ[HYPOTHESIS_STORAGE_ENV] = (
                str(folder / "hypothesis") if folder is not None
                else stack.enter_context(tempfile.TemporaryDirectory(prefix="tokasm-hypothesis-"))
            )  # fmt: skip
        yield


def __getattr__(name: str) -> object:
    if name in ("Counterexample", "FuzzReport", "fuzz"):
        from tokasm.fuzz import _search

        return getattr(_search, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
