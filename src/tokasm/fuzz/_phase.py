"""``tokasm check``'s short fuzz after the corpus, and where Hypothesis writes its files.

Hypothesis is imported only when fuzzing starts, so a command that does not fuzz
(``--help``, ``--fuzz-examples 0``, a failing target) does not pay for it.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from typing import TYPE_CHECKING

from tokasm.corpus._paths import cache_dir
from tokasm.fuzz._limits import CHECK_EXAMPLES

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from tokasm.run.results import CaseResult
    from tokasm.run.subjects import Subject

__all__ = [
    "CHECK_EXAMPLES",
    "HYPOTHESIS_STORAGE_ENV",
    "fuzz_phase",
    "hypothesis_files_kept_by_tokasm",
]

#: Hypothesis's own variable for the folder it writes in (``.hypothesis`` when unset).
HYPOTHESIS_STORAGE_ENV = "HYPOTHESIS_STORAGE_DIRECTORY"

_CHECK_SEED = 0  # fixed, so check's verdicts repeat
_CHECK_BUDGET = 20.0  # seconds: a slow target cannot stall the run
_CHECK_SHRINK_BUDGET = 3.0


def fuzz_phase(
    subject: Subject, corpus_results: Iterable[CaseResult], examples: int = CHECK_EXAMPLES
) -> tuple[str, ...]:
    """No problem, or the disagreement the fuzzer found, for any ``Subject``.

    It looks for what the corpus missed, so it runs only when every case passed or
    was skipped. A disagreement is a run-level problem, never an xfail-able case.
    """
    if examples <= 0 or any(r.outcome not in ("passed", "skipped") for r in corpus_results):
        return ()
    from tokasm.fuzz._search import fuzz

    report = fuzz(
        subject,
        examples=examples,
        seed=_CHECK_SEED,
        budget=_CHECK_BUDGET,
        shrink_budget=_CHECK_SHRINK_BUDGET,
    )
    problem = report.problem()
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
