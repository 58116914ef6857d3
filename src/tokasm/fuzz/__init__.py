"""Differential fuzzing against the model: ``tokasm check``'s fuzz phase and ``tokasm fuzz``
(``fuzz``, ``planned``, ``FuzzReport`` and ``Counterexample`` import Hypothesis, so load on
first use)."""

from __future__ import annotations

import os
import tempfile
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from tokasm import _clocks
from tokasm.corpus import Case
from tokasm.corpus._paths import cache_dir

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from tokasm.fuzz._search import Counterexample, FuzzReport, fuzz, planned
    from tokasm.run.results import CaseResult
    from tokasm.run.targets import Target

__all__ = ["CHECK_EXAMPLES", "FUZZ_BUDGET", "HYPOTHESIS_STORAGE_ENV", "INSTANCE_NAMES",
           "SHRINK_BUDGET", "Counterexample", "FuzzReport", "first_disagreement", "fuzz",
           "fuzz_phase", "hypothesis_files_kept_by_tokasm", "planned", "shrunk"]  # fmt: skip

#: Instance names a fuzzed program may use, as the case schema allows them.
INSTANCE_NAMES: tuple[str, ...] = ("a", "b", "c", "d")
#: Default seconds Hypothesis may spend shrinking a disagreement.
SHRINK_BUDGET = 5.0
#: Examples of ``tokasm check``'s fuzz phase per target (fixed seed 0, so verdicts repeat).
CHECK_EXAMPLES = 50
#: Seconds ``tokasm check``'s fuzz phase starts examples for, then as long again to search
#: a disagreement with Hypothesis (a slow target cannot stall the run).
FUZZ_BUDGET = 20.0
#: The source of a generated case.
GENERATED = Path("<tokasm fuzz>")
#: Hypothesis's own variable for the folder it writes in (``.hypothesis`` when unset).
HYPOTHESIS_STORAGE_ENV = "HYPOTHESIS_STORAGE_DIRECTORY"


def fuzz_phase(
    target: Target,
    corpus_results: Iterable[CaseResult],
    examples: int = CHECK_EXAMPLES,
    *,
    incremental: bool = False,
) -> tuple[str, ...]:
    """A disagreement is a run-level problem, never an xfail-able case; it looks for what the
    corpus missed, so it runs only when every case passed or skipped. ``read_since`` is
    called only for the ``incremental`` profile, when asked for."""
    if examples <= 0 or any(r.outcome not in ("passed", "skipped") for r in corpus_results):
        return ()
    from tokasm.fuzz import _search  # Hypothesis
    from tokasm.run import Worker

    documents = _search.planned(examples, incremental)
    if isinstance(target, Worker):  # run in the worker's process
        return target.fuzz(examples, documents, incremental)
    failed = first_disagreement(target, documents)
    return () if failed is None else shrunk(target, examples, *failed, incremental)


def first_disagreement(
    target: Target, documents: Iterable[dict[str, Any]]
) -> tuple[dict[str, Any], CaseResult] | None:
    """The first of ``documents`` that ``target`` does not pass, and its result; None if it
    passes each one that starts within ``FUZZ_BUDGET`` s."""
    from tokasm.run import run_case

    deadline = _clocks.monotonic() + FUZZ_BUDGET
    for document in documents:
        if _clocks.monotonic() > deadline:
            break
        if (result := run_case(target, Case(document, GENERATED))).outcome != "passed":
            return document, result
    return None


def shrunk(
    target: Target, examples: int, document: dict[str, Any], failed: CaseResult, incremental: bool
) -> tuple[str, ...]:
    """Found again by a fuzz run and shrunk; the case as drawn if that run draws otherwise
    (Hypothesis also draws constants of the modules loaded where it runs, the target's)."""
    from tokasm.fuzz._cases import dump_case_file
    from tokasm.fuzz._search import fuzz

    report = fuzz(
        target, examples=examples, seed=0, budget=FUZZ_BUDGET, shrink_budget=3.0,
        incremental=incremental,
    )  # fmt: skip
    verdict, message, kind = report.verdict(), failed.message, "shrunk "
    if (found := report.counterexample) is None:
        case = {**document, "description": "A case drawn by tokasm check's fuzz phase"}
        drawn = {"description": "Drawn by tokasm check's fuzz phase", "cases": [case]}
        text = dump_case_file(drawn)
        verdict, kind = "disagrees with the model (a case drawn ahead, not shrunk)", ""
    else:
        message, text = found.result.message, found.yaml
    return (f"fuzz {verdict}\n{message}\n{kind}counterexample (save it as a corpus case):\n{text}",)


@contextmanager
def hypothesis_files_kept_by_tokasm() -> Iterator[None]:
    """Hypothesis writes under tokasm's cache folder (with the cache off, a temporary one),
    not into the user's project; a ``HYPOTHESIS_STORAGE_DIRECTORY`` the user set is kept."""
    folder = cache_dir()
    with ExitStack() as stack:
        if HYPOTHESIS_STORAGE_ENV not in os.environ:
            os.environ[HYPOTHESIS_STORAGE_ENV] = str(folder / "hypothesis") if folder else (
                stack.enter_context(tempfile.TemporaryDirectory(prefix="tokasm-hypothesis-"))
            )  # fmt: skip
        yield


def __getattr__(name: str) -> object:
    if name in ("Counterexample", "FuzzReport", "fuzz", "planned"):
        from tokasm.fuzz import _search

        return getattr(_search, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
