"""The pytest face of the corpus: ``test_tokasm = suite(MyAssembler)`` in your own test file
(or ``--pyargs``) runs ``test_tokasm[<case id>]`` per case, then ``[cost.cache-final]`` and
``[fuzz]``, in pytest's process (the target is trusted)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import pytest

from tokasm.corpus import Case, load_corpus, profile_gap
from tokasm.errors import TargetError
from tokasm.fuzz import CHECK_EXAMPLES, fuzz_phase
from tokasm.protocol.worker import WorkerTarget
from tokasm.report._xfail import XfailError, expected_failures, load_xfail
from tokasm.run._cost import PROBE_ID, probe_cache_final
from tokasm.run.results import FAILING
from tokasm.run.runner import DEFAULT_PROFILES, run_case, skip_reason
from tokasm.run.targets import PythonTarget

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from _pytest.mark import ParameterSet

    from tokasm.implementations import AssemblerFactory
    from tokasm.report._xfail import XfailList
    from tokasm.run.results import CaseResult
    from tokasm.run.targets import Target

FUZZ_ID = "fuzz"
#: What one item checks: a corpus case, or the cost probe or the fuzz phase by its id.
Check: TypeAlias = "Case | str"
#: The targets of this process that failed a case: as in ``tokasm check``, no fuzz item.
_FAILED_A_CASE: weakref.WeakSet[Target] = weakref.WeakSet()


def _result(subject: Target, check: Check) -> CaseResult:
    if isinstance(subject, WorkerTarget):
        return subject.run_case(check) if isinstance(check, Case) else subject.probe(PROBE_ID)
    return run_case(subject, check) if isinstance(check, Case) else probe_cache_final(subject)


def _id(check: Check) -> str:
    return check.id if isinstance(check, Case) else check


@dataclass(frozen=True)
class Selection:
    """What a session checks: the cases, then the cost probe and the fuzz phase in ``tokasm
    check``'s order; the profiles; the expected failures."""

    checks: tuple[Check, ...]
    profiles: frozenset[str]
    listed: XfailList | None
    version: str
    fuzz_examples: int = CHECK_EXAMPLES

    @classmethod
    def load(
        cls,
        profiles: Iterable[str],
        cases: Iterable[Path],
        bundled: bool,
        xfail: Path | None,
        fuzz_examples: int = CHECK_EXAMPLES,
    ) -> Selection:
        """CorpusError for a bad case file; XfailError for a bad or stale xfail line."""
        corpus = load_corpus(user_cases=list(cases))
        listed = None if xfail is None else load_xfail(xfail, corpus)
        if stale := [] if listed is None else listed.stale(corpus):
            raise XfailError("; ".join(stale))
        chosen = [case for case in corpus if bundled or not case.bundled]
        selected = frozenset(DEFAULT_PROFILES | set(profiles))
        return cls((*chosen, PROBE_ID, FUZZ_ID), selected, listed, corpus.version, fuzz_examples)

    def refuse_gap(self, requested: Iterable[str], target: str, subject: Target) -> None:
        """TargetError if a profile asked for by name cannot run on the target."""
        cases = [check for check in self.checks if isinstance(check, Case)]
        if (gap := profile_gap(requested, cases, target, subject.features)) is not None:
            raise TargetError(gap)

    def params(self, subjects: Mapping[str, Target]) -> list[ParameterSet]:
        """One (subject, check) per target and check, named ``id`` (``target/id`` for several
        targets), a strict xfail where an expected-failure list names it."""
        params = []
        for target, subject in subjects.items():
            lists = expected_failures(target, self.listed)
            for check in self.checks:
                found = [(ls, e) for ls in lists if (e := ls.entry_for(_id(check))) is not None]
                marks = [pytest.mark.xfail(strict=True, reason=ls.why(e)) for ls, e in found[:1]]
                name = f"{target}/{_id(check)}" if len(subjects) > 1 else _id(check)
                params.append(pytest.param(subject, check, id=name, marks=marks))
        return params

    def check(self, subject: Target, check: Check) -> None:
        """Run one case, the cost probe or the fuzz phase as a pytest test."""
        if check == FUZZ_ID:
            if self.fuzz_examples <= 0:
                pytest.skip("fuzzing turned off (0 examples)")
            if subject in _FAILED_A_CASE:
                pytest.skip(
                    "a case of this target failed: fuzzing looks for what the corpus missed, "
                    "so, as in tokasm check, it runs only for a target that passed every case "
                    "(tokasm fuzz searches a failing target further)"
                )
            for problem in fuzz_phase(subject, (), self.fuzz_examples):
                pytest.fail(problem, pytrace=False)
            return
        if isinstance(check, Case) and (
            reason := skip_reason(check, self.profiles, subject.features)
        ):
            pytest.skip(reason)
        result = _result(subject, check)
        if result.outcome in FAILING:
            _FAILED_A_CASE.add(subject)
        if result.outcome == "skipped":
            pytest.skip(result.message)
        if result.outcome != "passed":
            rules = ", ".join(result.requirements)
            pytest.fail(
                f"{result.case_id} [{rules}] - {result.description} [{result.outcome}]\n"
                f"{result.message}",
                pytrace=False,
            )


def suite(
    factory: AssemblerFactory,
    *,
    profiles: Iterable[str] = (),
    xfail: str | Path | None = None,
    name: str | None = None,
    cases: Iterable[str | Path] = (),
    bundled: bool = True,
) -> Callable[[Target, Check], None]:
    """A parametrized pytest test of every corpus case against ``factory`` (a class or a
    zero-argument callable), for a ``test_*`` name. The keywords are ``tokasm check``'s
    ``--profile``, ``--xfail``, ``--cases``, ``--no-bundled``; a profile the assembler cannot
    run raises TargetError."""
    label = name or f"{factory.__module__}:{getattr(factory, '__qualname__', repr(factory))}"
    subject, requested = PythonTarget(factory, label), tuple(profiles)
    folders = [Path(folder) for folder in cases]
    selection = Selection.load(requested, folders, bundled, None if xfail is None else Path(xfail))
    selection.refuse_gap(requested, label, subject)

    @pytest.mark.parametrize(("subject", "case"), selection.params({label: subject}))
    def test_case(subject: Target, case: Check) -> None:
        selection.check(subject, case)

    test_case.__doc__ = f"tokasm corpus {selection.version} against {label}"
    return test_case
