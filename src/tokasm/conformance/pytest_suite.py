"""The pytest face of the corpus: one test per case, for your own test file or ``--pyargs``.

The one-liner, for a project that keeps its own tests (``tests/test_tokasm.py``)::

    from tokasm.conformance import suite
    from mypkg.stream import MyAssembler

    test_tokasm = suite(MyAssembler)

``pytest`` then runs ``test_tokasm[<case id>]`` once per corpus case, then
``test_tokasm[cost.cache-final]`` (the cost probe, docs/cost.md) and
``test_tokasm[fuzz]`` (the fuzz phase of ``tokasm check``): the same checks
as ``tokasm check``. A nonconforming case fails with the runner's message
(step, event sent, expected and actual by repr), without a traceback into
tokasm. As ``tokasm check`` fuzzes only a target that passed every case, the
fuzz item is skipped once a case of its target has failed in the same
process (always so in a serial run, the fuzz item coming last). Under
pytest-xdist the failing cases may have run on another worker: the fuzz item
may run then, and report a failing case's bug again, shrunk.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import pytest

from tokasm.corpus._load import Case, load_corpus, profile_gap
from tokasm.errors import TargetError
from tokasm.fuzz._phase import CHECK_EXAMPLES, fuzz_phase
from tokasm.report._xfail import XfailError, expected_failures, load_xfail
from tokasm.run._cost import PROBE_ID, probe_cache_final
from tokasm.run.results import FAILING
from tokasm.run.runner import DEFAULT_PROFILES, run_case, skip_reason
from tokasm.run.subjects import PythonSubject

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable

    from tokasm.implementations import AssemblerFactory
    from tokasm.report._xfail import XfailList
    from tokasm.run.subjects import Subject

__all__ = [
    "CHECKS",
    "FUZZ_ID",
    "Check",
    "check_case",
    "check_id",
    "expected_failures",
    "suite",
    "xfail_marks",
]

#: The item id of the fuzz phase.
FUZZ_ID = "fuzz"
#: The checks run after the corpus cases, in ``tokasm check``'s order.
CHECKS: tuple[str, ...] = (PROBE_ID, FUZZ_ID)

#: What one item checks: a corpus case, or one of ``CHECKS`` by its id.
Check: TypeAlias = "Case | str"

#: The targets of this process that failed a case (expected failures included): their
#: fuzz item is skipped, as ``tokasm check`` skips its fuzz phase.
_FAILED_A_CASE: weakref.WeakSet[Subject] = weakref.WeakSet()


def check_id(check: Check) -> str:
    return check.id if isinstance(check, Case) else check


def check_case(
    subject: Subject,
    case: Check,
    profiles: Collection[str],
    fuzz_examples: int = CHECK_EXAMPLES,
) -> None:
    """Run one case (or the cost probe, or the fuzz phase) as a pytest test: skip it,
    pass, or fail with the runner's message."""
    if case == FUZZ_ID:
        if fuzz_examples <= 0:
            pytest.skip("fuzzing turned off (0 examples)")
        if subject in _FAILED_A_CASE:
            pytest.skip(
                "a case of this target failed: fuzzing looks for what the corpus missed, so, "
                "as in tokasm check, it runs only for a target that passed every case "
                "(tokasm fuzz searches a failing target further)"
            )
        for problem in fuzz_phase(subject, (), fuzz_examples):
            pytest.fail(problem, pytrace=False)
        return
    if isinstance(case, Case):
        reason = skip_reason(case, profiles, subject.features)
        if reason:
            pytest.skip(reason)
        result = run_case(subject, case)
        if result.outcome in FAILING:
            _FAILED_A_CASE.add(subject)
    else:
        result = probe_cache_final(subject)
    rules = ", ".join(result.requirements)
    if result.outcome == "skipped":
        pytest.skip(result.message)
    if result.outcome != "passed":
        pytest.fail(
            f"{result.case_id} [{rules}] - {result.description} [{result.outcome}]\n"
            f"{result.message}",
            pytrace=False,
        )


def xfail_marks(case: Check, *lists: XfailList | None) -> list[pytest.MarkDecorator]:
    """A strict xfail mark (a pass fails the run) if an expected-failure list names ``case``."""
    for listed in lists:
        entry = None if listed is None else listed.entry_for(check_id(case))
        if listed is not None and entry is not None:
            return [pytest.mark.xfail(strict=True, reason=listed.why(entry))]
    return []


def suite(
    factory: AssemblerFactory,
    *,
    profiles: Iterable[str] = (),
    xfail: str | Path | None = None,
    name: str | None = None,
    cases: Iterable[str | Path] = (),
    bundled: bool = True,
) -> Callable[[Case], None]:
    """A parametrized pytest test running every corpus case against ``factory``.

    ``factory`` is a class or zero-argument callable returning a fresh
    assembler. ``profiles`` adds optional profiles (e.g. ``("strict",)``);
    ``incremental`` already runs when the assembler has ``read_since``;
    naming a profile the assembler cannot run (``incremental`` without
    ``read_since``) raises TargetError rather than skipping its cases.
    ``xfail`` is an expected-failure file as for ``tokasm check --xfail``:
    listed cases are strict xfails, and a line matching no case is an error.
    Assign the result to a module-level ``test_*`` name; see the module doc.
    """
    label = name or f"{factory.__module__}:{getattr(factory, '__qualname__', repr(factory))}"
    subject = PythonSubject(factory, label)
    requested = tuple(profiles)
    selected = DEFAULT_PROFILES | set(requested)
    corpus = load_corpus(user_cases=[Path(folder) for folder in cases])
    chosen = [case for case in corpus if bundled or not case.bundled]
    gap = profile_gap(requested, chosen, label, subject.features)
    if gap is not None:
        raise TargetError(gap)
    listed = None if xfail is None else load_xfail(Path(xfail), corpus)
    stale = [] if listed is None else listed.stale(corpus)
    if stale:
        raise XfailError("; ".join(stale))

    checks: list[Check] = [*chosen, *CHECKS]
    lists = expected_failures(label, listed)
    params = [pytest.param(c, id=check_id(c), marks=xfail_marks(c, *lists)) for c in checks]

    @pytest.mark.parametrize("case", params)
    def test_case(case: Check) -> None:
        check_case(subject, case, selected)

    test_case.__doc__ = f"tokasm corpus {corpus.version} against {label}"
    return test_case
