"""Run corpus cases against a ``Subject`` and explain every mismatch precisely.

A failure message names the step, the request sent, the expected and the
actual value (by ``repr``, so whitespace shows), and for long texts where they
first differ. A testee fault (``SubjectFault``) errors that case only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ImplementationError, SubjectFault
from ._display import abbreviated, first_difference, show
from .results import CaseResult
from .steps import Raises

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator

    from .corpus import Case
    from .steps import Step
    from .subjects import Subject

__all__ = ["DEFAULT_PROFILES", "run_case", "run_cases", "skip_reason"]

#: Profiles run unless the user asks otherwise; ``incremental`` runs where the target has it.
DEFAULT_PROFILES: frozenset[str] = frozenset({"required", "incremental"})


def _same_text(actual: object, expected: str | None) -> bool:
    """Equal as text, compared by ``str``'s own equality so an odd ``__eq__`` cannot lie."""
    return isinstance(actual, str) and isinstance(expected, str) and str.__eq__(actual, expected)


def _matches(actual: object, expected: str | None) -> bool:
    """Any ``str`` instance with the right text, or exactly None for None (never "" for it)."""
    return actual is None if expected is None else _same_text(actual, expected)


def _check_step(subject: Subject, step: Step, case: Case) -> CaseResult | None:
    """None if the step behaved as expected, else the case's failing result."""
    where = f"step {step.where} on {step.instance!r}: {step.describe()}"
    expect = step.expect
    assert expect is not None  # a corpus case always says what a step must do
    try:
        actual = subject.perform(step)
    except ImplementationError as error:
        if isinstance(expect, Raises):
            if error.kind in (None, expect.kind):
                return None
            return CaseResult.of(
                case,
                "failed",
                f"{where}\n  expected: raises {expect.kind}\n  actual:   raised {error}",
            )
        return CaseResult.of(
            case,
            "errored",
            f"{where}\n  expected: {show(expect.value)}\n  actual:   raised {error}",
        )
    if isinstance(expect, Raises):
        return CaseResult.of(
            case,
            "failed",
            f"{where}\n  expected: raises {expect.kind}\n  actual:   returned {show(actual)}",
        )
    if _matches(actual, expect.value):
        return None
    message = f"{where}\n  expected: {show(expect.value)}\n  actual:   {show(actual)}"
    if show(actual) == show(expect.value):  # only the type differs: name both
        message += (
            f"\n  types:    expected {type(expect.value).__name__}, "
            f"actual {type(actual).__module__}.{type(actual).__qualname__}"
        )
    if (
        isinstance(actual, str)
        and isinstance(expect.value, str)
        and abbreviated(expect.value, actual)
    ):
        message += first_difference(expect.value, actual)
    return CaseResult.of(case, "failed", message)


def skip_reason(case: Case, profiles: Collection[str], features: Collection[str]) -> str | None:
    """Why ``case`` does not run for this selection, or None if it does."""
    if case.profile not in profiles:
        return f"profile {case.profile!r} not selected (use --profile {case.profile})"
    missing = sorted({s.feature for s in case.steps if s.feature} - set(features))
    if missing:
        return f"target has no {', '.join(missing)} ({case.profile} profile)"
    return None


def run_case(subject: Subject, case: Case) -> CaseResult:
    """Run one case on fresh instances; a testee fault errors this case only."""
    doing = "creating the case's instances"
    try:
        for instance in case.instances:
            subject.new(instance)
        for step in case.steps:
            doing = f"step {step.where} on {step.instance!r}"
            failure = _check_step(subject, step, case)
            if failure is not None:
                return failure
    except SubjectFault as fault:
        return CaseResult.of(case, "errored", f"testee fault at {doing}: {fault}")
    except ImplementationError as error:  # raised by new(): the factory itself failed
        return CaseResult.of(case, "errored", f"creating an instance failed: {error}")
    return CaseResult.of(case, "passed")


def run_cases(
    subject: Subject,
    cases: Iterable[Case],
    profiles: Collection[str] = DEFAULT_PROFILES,
) -> Iterator[CaseResult]:
    """Run or skip each case in order, yielding each result as it lands."""
    for case in cases:
        reason = skip_reason(case, profiles, subject.features)
        yield CaseResult.of(case, "skipped", reason) if reason else run_case(subject, case)
