"""The pytest face of the corpus: one test per case, for your own test file or ``--pyargs``.

The one-liner, for a project that keeps its own tests (``tests/test_tokasm.py``)::

    from tokasm.conformance import suite
    from mypkg.stream import MyAssembler

    test_tokasm = suite(MyAssembler)

``pytest`` then runs ``test_tokasm[<case id>]`` once per corpus case; a
nonconforming case fails with the runner's message (step, event sent,
expected and actual by repr), without a traceback into tokasm.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..errors import TargetError
from ._xfail import XfailError, load_xfail
from .corpus import load_corpus, profile_gap
from .runner import DEFAULT_PROFILES, run_case, skip_reason
from .subjects import PythonSubject

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable

    from ..implementations import AssemblerFactory
    from ._xfail import XfailList
    from .corpus import Case
    from .subjects import Subject

__all__ = ["check_case", "suite", "xfail_marks"]


def check_case(subject: Subject, case: Case, profiles: Collection[str]) -> None:
    """Run one case as a pytest test: skip it, pass, or fail with the runner's message."""
    reason = skip_reason(case, profiles, subject.features)
    if reason:
        pytest.skip(reason)
    result = run_case(subject, case)
    if result.outcome != "passed":
        pytest.fail(
            f"{case.id} - {case.description} [{result.outcome}]\n{result.message}",
            pytrace=False,
        )


def xfail_marks(case: Case, listed: XfailList | None) -> list[pytest.MarkDecorator]:
    """A strict xfail mark (a pass fails the run) if the expected-failure list names ``case``."""
    entry = None if listed is None else listed.entry_for(case.id)
    if listed is None or entry is None:
        return []
    return [pytest.mark.xfail(strict=True, reason=listed.why(entry))]


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

    @pytest.mark.parametrize(
        "case", [pytest.param(case, id=case.id, marks=xfail_marks(case, listed)) for case in chosen]
    )
    def test_case(case: Case) -> None:
        check_case(subject, case, selected)

    test_case.__doc__ = f"tokasm corpus {corpus.version} against {label}"
    return test_case
