"""What the CLI and the pytest route need of the fuzzer before it runs: its settings, and
``tokasm check``'s short fuzz after the corpus.

Apart from ``_fuzz`` so that a command that does not fuzz (``--help``,
``--fuzz-examples 0``, a failing target) never imports Hypothesis, a tenth of
a second of start-up.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from tokasm._display import error_text
from tokasm.corpus._paths import cache_dir

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tokasm.run.results import CaseResult
    from tokasm.run.subjects import Subject

__all__ = [
    "CHECK_EXAMPLES",
    "HYPOTHESIS_STORAGE_ENV",
    "INSTANCE_NAMES",
    "LEFT_UNABLE",
    "SHRINK_BUDGET",
    "fuzz_phase",
    "hypothesis_files_kept_by_tokasm",
]

#: Hypothesis's own variable for the folder it writes in (``.hypothesis`` in the current
#: folder when unset).
HYPOTHESIS_STORAGE_ENV = "HYPOTHESIS_STORAGE_DIRECTORY"

#: Instance names a fuzzed program may use, as the case schema allows them
#: (``^[a-z][a-z0-9_]*$``).
INSTANCE_NAMES: tuple[str, ...] = ("a", "b", "c", "d")

#: Default seconds Hypothesis may spend shrinking a disagreement.
SHRINK_BUDGET = 5.0

#: ``tokasm check``'s fuzz phase: examples per target, a fixed seed so its
#: verdicts repeat, and a search budget so a slow testee cannot stall the run.
CHECK_EXAMPLES = 50
#: What fuzzing, tokasm's own work after a target ran, raises when the target left the
#: process no descriptor to open files with (imports, a counterexample loaded back) or no
#: room on the stack (a lowered recursion limit).
LEFT_UNABLE = (OSError, ImportError, RecursionError)

_CHECK_SEED = 0
_CHECK_BUDGET = 20.0
_CHECK_SHRINK_BUDGET = 3.0


def fuzz_phase(
    subject: Subject, corpus_results: Iterable[CaseResult], examples: int = CHECK_EXAMPLES
) -> tuple[str, ...]:
    """No problem, or the disagreement the fuzzer found.

    It looks for what the corpus missed, so it runs only when every case
    passed or was skipped: a failing target (or one with an expected-failure
    list) would only have its known failures found again. A disagreement is a
    run-level problem rather than a case, so it never enters an xfail list.
    """
    if examples <= 0 or any(r.outcome not in ("passed", "skipped") for r in corpus_results):
        return ()
    try:
        from tokasm.fuzz._search import fuzz  # Hypothesis, only now that it runs

        report = fuzz(
            subject,
            examples=examples,
            seed=_CHECK_SEED,
            budget=_CHECK_BUDGET,
            shrink_budget=_CHECK_SHRINK_BUDGET,
        )
    except LEFT_UNABLE as error:
        return (f"fuzz phase stopped: {error_text(error)}",)
    problem = report.problem()
    return () if problem is None else (problem,)


def hypothesis_files_kept_by_tokasm() -> Path | None:
    """For the ``tokasm`` program, whose process is its own: Hypothesis writes under tokasm's
    cache folder, not into the user's project as ``.hypothesis/``.

    What it writes there is its cache of the constants it finds in local source files
    (outside site-packages, the target's module included), and the table of Unicode
    categories that the fuzzer's texts no longer need (``any_texts``): together 1.5 s to
    build again in each fresh folder, which a CI job's clean checkout paid on every run.
    A folder the user chose (``HYPOTHESIS_STORAGE_DIRECTORY``) is kept. With tokasm's
    cache turned off, a temporary folder is used, returned for the caller to remove at
    the end (``cli._console.end_process``). The pytest route leaves its session's
    Hypothesis alone.
    """
    if HYPOTHESIS_STORAGE_ENV in os.environ:
        return None
    folder = cache_dir()
    if folder is None:
        try:
            temporary = Path(tempfile.mkdtemp(prefix="tokasm-hypothesis-"))
        except OSError:  # no temporary folder to be had: Hypothesis is left as it is
            return None
        os.environ[HYPOTHESIS_STORAGE_ENV] = str(temporary)
        return temporary
    os.environ[HYPOTHESIS_STORAGE_ENV] = str(folder / "hypothesis")
    return None
