"""Run corpus cases against a ``Subject`` and explain every mismatch precisely.

A failure message names the step, the request sent, the expected and the
actual value (by ``repr``, so whitespace shows), and for long texts where they
first differ. A testee fault (``SubjectFault``) errors that case only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .corpus import Apply, Get, Raises
from .results import CaseResult
from .subjects import READ_SINCE, ImplementationError, SubjectFault

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator

    from .corpus import Case, Step
    from .subjects import Subject

__all__ = ["DEFAULT_PROFILES", "run_case", "run_cases", "show", "skip_reason"]

#: Profiles run unless the user asks otherwise; ``incremental`` runs where the target has it.
DEFAULT_PROFILES: frozenset[str] = frozenset({"required", "incremental"})

_SHOW_LIMIT = 120  # characters of repr before a long value is abbreviated
_CONTEXT = 24  # characters either side of the first difference


def show(value: object) -> str:
    """``repr`` of a value, abbreviated in the middle when long, with its length."""
    text = repr(value)
    if len(text) <= _SHOW_LIMIT:
        return text
    half = _SHOW_LIMIT // 2
    length = f" (len {len(value)})" if isinstance(value, str) else ""
    return f"{text[:half]}...{text[-half:]}{length}"


def _abbreviated(*values: str) -> bool:
    """Whether ``show`` cut any of these, so the difference itself may be hidden."""
    return any(len(repr(value)) > _SHOW_LIMIT for value in values)


def _first_difference(expected: str, actual: str) -> str:
    index = next(
        (i for i, (e, a) in enumerate(zip(expected, actual, strict=False)) if e != a),
        min(len(expected), len(actual)),
    )
    start = max(0, index - _CONTEXT)
    return (
        f"\n  first difference at index {index} "
        f"(expected len {len(expected)}, actual len {len(actual)}):"
        f"\n    expected ...{expected[start : index + _CONTEXT]!r}"
        f"\n    actual   ...{actual[start : index + _CONTEXT]!r}"
    )


def _request(step: Step) -> str:
    if isinstance(step, Apply):
        return f"apply({show(step.event)})"
    if isinstance(step, Get):
        return f"get({step.message_id!r})"
    return f"read_since({step.message_id!r}, {step.offset})"


def _perform(subject: Subject, step: Step) -> str | None:
    if isinstance(step, Apply):
        return subject.apply(step.instance, step.event)
    if isinstance(step, Get):
        return subject.get(step.instance, step.message_id)
    return subject.read_since(step.instance, step.message_id, step.offset)


def _check_step(subject: Subject, step: Step, case: Case) -> CaseResult | None:
    """None if the step behaved as expected, else the case's failing result."""
    where = f"step {step.where} on {step.instance!r}: {_request(step)}"
    expect = step.expect
    try:
        actual = _perform(subject, step)
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
    if actual == expect.value and type(actual) is type(expect.value):
        return None
    message = f"{where}\n  expected: {show(expect.value)}\n  actual:   {show(actual)}"
    if (
        isinstance(actual, str)
        and isinstance(expect.value, str)
        and _abbreviated(expect.value, actual)
    ):
        message += _first_difference(expect.value, actual)
    return CaseResult.of(case, "failed", message)


def skip_reason(case: Case, profiles: Collection[str], features: Collection[str]) -> str | None:
    """Why ``case`` does not run for this selection, or None if it does."""
    if case.profile not in profiles:
        return f"profile {case.profile!r} not selected (use --profile {case.profile})"
    if case.profile == "incremental" and READ_SINCE not in features:
        return "target has no read_since (incremental profile)"
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
