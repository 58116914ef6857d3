"""Run corpus cases against a ``Target``; a mismatch becomes a ``Failure`` record and a message.

In process every case runs with a caller's habits (``_caller``); a case failing only
because of them breaks EVENT-OWNED. A testee fault (``TargetFault``) errors one case.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import TYPE_CHECKING, Any

from tokasm._display import abbreviated, first_difference, safe_text, show, type_name
from tokasm.corpus.steps import Raises, Returns
from tokasm.errors import EventNotOwned, ImplementationError, TargetFault
from tokasm.run._caller import EVENT_OWNED, OTHER_MAPPINGS
from tokasm.run.results import FAILING, NOT_TEXT, CaseResult, Failure
from tokasm.run.targets import Foreign, PythonTarget, Worker

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator

    from tokasm.corpus._load import Case
    from tokasm.corpus.steps import Step
    from tokasm.run.results import FailureKind, Outcome
    from tokasm.run.targets import StepOutcome, Target

__all__ = ["DEFAULT_PROFILES", "EVENT_OWNED", "run_case", "run_cases", "skip_reason"]

#: Profiles run unless the user asks for more: the seed's contract, no more.
DEFAULT_PROFILES: frozenset[str] = frozenset({"required"})
MAP_ANY = "MAP-ANY"  # refusing a valid event of another mapping type or str subclass
_FAULT_LINES = 60  # lines of a testee fault's message kept (it may quote the testee's stderr)
#: Why a case that fails only with the caller's habits, or with other mappings, breaks a rule.
_HABITS = (
    f"breaks {EVENT_OWNED}: this case passes when every event is a new dict kept alive, but "
    "fails when the caller reuses one dict, refilling it for each event and overwriting it "
    "after apply() returned, as ordinary Python loops do: the implementation keeps or "
    "identifies events by object. With the caller's habits:\n"
)
_MAPPINGS = (
    f"breaks {MAP_ANY}: this case passes when every event is a plain dict of plain strings, but "
    "fails when each is a read-only mapping that is not a dict, its strings of a str subclass: "
    "events as valid, as another caller hands them over. With those events:\n"
)


def _raised(error: ImplementationError, debug: bool) -> str:
    """``raised Kind(...)``, then where in the user's code (all of its traceback with debug)."""
    text = f"raised {safe_text(error)}"  # a testee's kind and message are its own text
    if debug and error.traceback:
        return f"{text}\n  traceback of your code (innermost last):\n{error.traceback.rstrip()}"
    return text + "".join(f"\n    at {frame}" for frame in error.frames)


def _error(error: ImplementationError) -> dict[str, Any]:
    return {"raises": error.kind or "", "message": error.message}


def _failure(kind: FailureKind, step: Step, actual: dict[str, Any] | None = None) -> Failure:
    expected = None if step.expect is None else step.expect.document()
    return Failure(kind, step.where, step.instance, step.request(), expected, actual)


def _where(step: Step) -> str:
    return f"step {step.where} on {step.instance!r}: {step.describe()}"


def _with_rule_first(result: CaseResult, rule: str, kind: FailureKind, message: str) -> CaseResult:
    """``result`` as a failure of ``rule``, listed first, beside the rules the case lists."""
    failure = None if result.failure is None else dataclasses.replace(result.failure, kind=kind)
    others = tuple(rid for rid in result.requirements if rid != rule)
    return dataclasses.replace(
        result, outcome="failed", message=message, requirements=(rule, *others), failure=failure
    )


def _check_step(step: Step, outcome: StepOutcome, case: Case, debug: bool) -> CaseResult | None:
    """None if the step behaved as expected, else the case's failing result."""
    expect = step.expect
    assert expect is not None  # a corpus case always says what a step must do
    if isinstance(outcome, EventNotOwned):  # its kind is the rule it broke
        owned = CaseResult.of(case, "failed", "", _failure("event-owned", step))
        rule = outcome.kind or EVENT_OWNED
        message = f"breaks {rule}: {_where(step)}\n  {outcome.message}"
        return _with_rule_first(owned, rule, "event-owned", message)
    if (  # a raise of the kind expected (never ReturnedNotText: cases expect TypeError, ValueError)
        isinstance(outcome, ImplementationError)
        and isinstance(expect, Raises)
        and outcome.kind in (None, expect.kind)
    ):
        return None
    expected = f"raises {expect.kind}" if isinstance(expect, Raises) else show(expect.value)
    returned = "returned " if isinstance(expect, Raises) else ""
    verdict: Outcome = "failed"
    if isinstance(outcome, ImplementationError) and outcome.kind == NOT_TEXT:
        # a result the protocol cannot carry: shown as in process
        failure = _failure("not-text", step, {"foreign": outcome.message, "type": ""})
        actual = returned + safe_text(outcome.message)
    elif isinstance(outcome, ImplementationError):  # the kit's own object, as is ``Foreign``
        kind: FailureKind = "wrong-error" if isinstance(expect, Raises) else "raised"
        failure = _failure(kind, step, _error(outcome))
        verdict = "failed" if isinstance(expect, Raises) else "errored"
        actual = _raised(outcome, debug)
    else:
        if isinstance(outcome, Foreign):
            foreign = {"foreign": outcome.shown, "type": outcome.type_name}
            failure = _failure("not-text", step, foreign)
        else:
            failure = _failure("mismatch", step, {"returns": outcome})
        actual = returned + show(outcome)
        if isinstance(expect, Returns) and actual == expected:  # only the types differ
            actual += (
                f"\n  types:    expected {type(expect.value).__name__}, actual "
                f"{outcome.type_name if isinstance(outcome, Foreign) else type_name(outcome)}"
            )
        wanted = expect.value if isinstance(expect, Returns) else None
        if isinstance(outcome, str) and wanted is not None and abbreviated(wanted, outcome):
            actual += first_difference(wanted, outcome)
    message = f"{_where(step)}\n  expected: {expected}\n  actual:   {actual}"
    return CaseResult.of(case, verdict, message, failure)


def skip_reason(case: Case, profiles: Collection[str], features: Collection[str]) -> str | None:
    """Why ``case`` does not run for this selection, or None if it does."""
    if case.profile not in profiles:
        return f"profile {case.profile!r} not selected (use --profile {case.profile})"
    if missing := sorted(case.features.difference(features)):
        return f"target has no {', '.join(missing)} ({case.profile} profile)"
    return None


def _run_steps(target: Target, case: Case, debug: bool) -> CaseResult:
    doing: Step | str = "creating the case's instances"  # the step sent, for a fault
    instance = ""
    try:
        for instance in case.instances:
            target.new(instance)
        with contextlib.closing(target.perform_steps(case.steps)) as outcomes:
            for step in case.steps:
                doing = step
                outcome, expect = next(outcomes), step.expect
                if (
                    type(expect) is Returns
                    and type(outcome) is type(expect.value)
                    and outcome == expect.value
                ):
                    continue
                if (failed := _check_step(step, outcome, case, debug)) is not None:
                    return failed
            doing = "the end of the case"
            next(outcomes, None)  # lets the target finish, e.g. check for unasked output
    except TargetFault as fault:
        said = "\n".join(safe_text(line) for line in str(fault).splitlines()[:_FAULT_LINES])
        if isinstance(doing, str):
            at, failure = doing, Failure("testee-fault")
        else:
            at = f"step {doing.where} on {doing.instance!r}"
            failure = _failure("testee-fault", doing)
        return CaseResult.of(case, "errored", f"testee fault at {at}: {said}", failure)
    except ImplementationError as error:  # raised by new(): the factory itself failed
        message = f"creating an instance failed: {_raised(error, debug)}"
        failure = Failure("factory-error", instance=instance, actual=_error(error))
        return CaseResult.of(case, "errored", message, failure)
    return CaseResult.of(case, "passed")


def run_case(target: Target, case: Case, *, debug: bool = False) -> CaseResult:
    """Run one case on fresh instances. In process, failing only with the caller's habits
    breaks EVENT-OWNED; failing only with other mappings, MAP-ANY. A worker runs it whole."""
    if not isinstance(target, PythonTarget):
        if isinstance(target, Worker):
            return target.run_case(case, debug=debug)
        try:
            return _run_steps(target, case, debug)
        finally:
            case.drop_steps()

    target.check_whole_events(case.profile == "strict")  # EVENT-OWNED past the seed's words

    def fresh(other_mappings: bool = False) -> CaseResult:
        with contextlib.closing(target.with_fresh_events(other_mappings=other_mappings)) as twin:
            return _run_steps(twin, case, debug)

    mapped = fresh(other_mappings=True) if case.events_in_process == OTHER_MAPPINGS else None
    if mapped is not None and mapped.outcome not in FAILING:
        return mapped
    result = _run_steps(target, case, debug)
    if (
        result.outcome == "failed"
        and (result.failure is None or result.failure.kind != "event-owned")
        and fresh().outcome == "passed"
    ):
        result = _with_rule_first(result, EVENT_OWNED, "event-owned", _HABITS + result.message)
    if mapped is None or result.outcome in FAILING:
        return result
    return _with_rule_first(mapped, MAP_ANY, "event-shape", _MAPPINGS + mapped.message)


def run_cases(
    target: Target,
    cases: Iterable[Case],
    profiles: Collection[str] = DEFAULT_PROFILES,
    *,
    debug: bool = False,
) -> Iterator[CaseResult]:
    """Run or skip each case in order, yielding each result as it lands."""
    for case in cases:
        if reason := skip_reason(case, profiles, target.features):
            yield CaseResult.of(case, "skipped", reason)
        else:
            yield run_case(target, case, debug=debug)
