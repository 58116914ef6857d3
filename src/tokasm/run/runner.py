"""Run corpus cases against a ``Subject`` and explain every mismatch precisely.

A failure message names the step, the request sent, the expected and the
actual value (by ``repr``, so whitespace shows), and for long texts where they
first differ; for an exception from the target, the user's own frames. A
testee fault (``SubjectFault``) errors that case only. Everything shown of a
target's values goes through ``_display``, so no value can raise out of here.

In process, every case runs with an ordinary caller's habits (``_caller``); a
case that fails only because of them is reported as breaking EVENT-OWNED.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import TYPE_CHECKING, cast

from tokasm._display import abbreviated, first_difference, safe_text, show, type_name
from tokasm.corpus.steps import Raises, Returns
from tokasm.errors import EventNotOwned, ImplementationError, SubjectFault
from tokasm.run._caller import OTHER_MAPPINGS
from tokasm.run.results import FAILING, NOT_TEXT, CaseResult
from tokasm.run.subjects import Foreign, PythonSubject

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator

    from tokasm.corpus._load import Case
    from tokasm.corpus.steps import Step
    from tokasm.run.subjects import StepOutcome, Subject

__all__ = ["DEFAULT_PROFILES", "EVENT_OWNED", "run_case", "run_cases", "skip_reason"]

#: Profiles run unless the user asks otherwise; ``incremental`` runs where the target has it.
DEFAULT_PROFILES: frozenset[str] = frozenset({"required", "incremental"})


#: The rule a target breaks when it modifies an event or depends on it after apply returned.
EVENT_OWNED = "EVENT-OWNED"

#: The rule a target breaks when it refuses or mishandles a valid event of another mapping
#: type or with strings of a str subclass (the optional mappings profile).
MAP_ANY = "MAP-ANY"


def _is_text(value: object) -> bool:
    """A ``str`` instance, by its real type (``isinstance`` believes a faked ``__class__``)."""
    return issubclass(type(value), str)


def _same_text(actual: object, expected: str | None) -> bool:
    """Equal as text, compared by ``str``'s own equality so an odd ``__eq__`` cannot lie."""
    return _is_text(actual) and expected is not None and str.__eq__(cast("str", actual), expected)


def _matches(actual: object, expected: str | None) -> bool:
    """Any ``str`` instance with the right text, or exactly None for None (never "" for it)."""
    return actual is None if expected is None else _same_text(actual, expected)


def _raised(error: ImplementationError, debug: bool) -> str:
    """``raised Kind(...)``, then where in the user's code (all of its traceback with debug)."""
    text = f"raised {safe_text(error)}"  # a testee's kind and message are its own text
    if debug and error.traceback:
        return f"{text}\n  traceback of your code (innermost last):\n{error.traceback.rstrip()}"
    return text + "".join(f"\n    at {frame}" for frame in error.frames)


_OWNED = f"breaks {EVENT_OWNED}: "
_FAULT_LINES = 60  # lines of a testee fault's message kept (it may quote the testee's stderr)


def _owned(case: Case, message: str) -> CaseResult:
    """A failure of EVENT-OWNED, listed first, beside the rules the case was written for."""
    result = CaseResult.of(case, "failed", _OWNED + message)
    others = tuple(rid for rid in case.requirements if rid != EVENT_OWNED)
    return dataclasses.replace(result, requirements=(EVENT_OWNED, *others))


def _where(step: Step) -> str:
    return f"step {step.where} on {step.instance!r}: {step.describe()}"


def _on_raise(step: Step, case: Case, error: ImplementationError, debug: bool) -> CaseResult | None:
    """None if the step was to raise an error of this kind, else the case's failing result."""
    expect = step.expect
    if isinstance(error, EventNotOwned):
        return _owned(case, f"{_where(step)}\n  {error.message}")
    if error.kind == NOT_TEXT:  # a result the protocol cannot carry: shown as in process
        assert expect is not None  # a corpus case always says what a step must do
        shown = safe_text(error.message)
        if isinstance(expect, Raises):
            expected, shown = f"raises {expect.kind}", f"returned {shown}"
        else:
            expected = show(expect.value)
        return CaseResult.of(
            case, "failed", f"{_where(step)}\n  expected: {expected}\n  actual:   {shown}"
        )
    raised = _raised(error, debug)
    if not isinstance(expect, Raises):
        assert expect is not None  # a corpus case always says what a step must do
        expected = show(expect.value)
        return CaseResult.of(
            case, "errored", f"{_where(step)}\n  expected: {expected}\n  actual:   {raised}"
        )
    if error.kind in (None, expect.kind):
        return None
    return CaseResult.of(
        case, "failed", f"{_where(step)}\n  expected: raises {expect.kind}\n  actual:   {raised}"
    )


def _check_step(step: Step, outcome: StepOutcome, case: Case, debug: bool) -> CaseResult | None:
    """None if the step behaved as expected, else the case's failing result (``_run_steps``
    has passed the usual answer, exactly None or a ``str`` as expected, already)."""
    expect = step.expect
    assert expect is not None  # a corpus case always says what a step must do
    if isinstance(outcome, ImplementationError):  # the kit's own object, as is ``Foreign``
        return _on_raise(step, case, outcome, debug)
    actual = outcome
    if isinstance(expect, Raises):
        return CaseResult.of(
            case,
            "failed",
            f"{_where(step)}\n  expected: raises {expect.kind}\n"
            f"  actual:   returned {show(actual)}",
        )
    if _matches(actual, expect.value):
        return None
    message = f"{_where(step)}\n  expected: {show(expect.value)}\n  actual:   {show(actual)}"
    if show(actual) == show(expect.value):  # only the type differs: name both
        message += (
            f"\n  types:    expected {type(expect.value).__name__}, actual "
            f"{actual.type_name if isinstance(actual, Foreign) else type_name(actual)}"
        )
    if _is_text(actual) and expect.value is not None:
        text = cast("str", actual)
        if abbreviated(expect.value, text):
            message += first_difference(expect.value, text)
    return CaseResult.of(case, "failed", message)


def skip_reason(case: Case, profiles: Collection[str], features: Collection[str]) -> str | None:
    """Why ``case`` does not run for this selection, or None if it does."""
    if case.profile not in profiles:
        return f"profile {case.profile!r} not selected (use --profile {case.profile})"
    missing = sorted(case.features.difference(features))
    if missing:
        return f"target has no {', '.join(missing)} ({case.profile} profile)"
    return None


def _run_steps(subject: Subject, case: Case, debug: bool) -> CaseResult:
    doing: Step | str = "creating the case's instances"  # a step: formatted only for a fault
    try:
        for instance in case.instances:
            subject.new(instance)
        with contextlib.closing(subject.perform_steps(case.steps)) as outcomes:
            for step in case.steps:
                doing, outcome, expect = step, next(outcomes), step.expect
                if type(expect) is Returns and (  # the usual answer, quickly
                    outcome is None
                    if expect.value is None
                    else type(outcome) is str and outcome == expect.value
                ):
                    continue
                failure = _check_step(step, outcome, case, debug)
                if failure is not None:
                    return failure
            doing = "the end of the case"
            next(outcomes, None)  # lets the subject finish, e.g. check for unasked output
    except SubjectFault as fault:
        said = "\n".join(safe_text(line) for line in str(fault).splitlines()[:_FAULT_LINES])
        at = doing if isinstance(doing, str) else f"step {doing.where} on {doing.instance!r}"
        return CaseResult.of(case, "errored", f"testee fault at {at}: {said}")
    except ImplementationError as error:  # raised by new(): the factory itself failed
        return CaseResult.of(
            case, "errored", f"creating an instance failed: {_raised(error, debug)}"
        )
    return CaseResult.of(case, "passed")


def _with_fresh_events(
    subject: PythonSubject, case: Case, debug: bool, *, other_mappings: bool = False
) -> CaseResult:
    """``case`` run with every event a new object kept alive; the twin is closed at once,
    under the watchdog, not left to be freed wherever it happens to be."""
    twin = subject.with_fresh_events(other_mappings=other_mappings)
    try:
        return _run_steps(twin, case, debug)
    finally:
        twin.close()


def _passes_with_fresh_events(subject: PythonSubject, case: Case, debug: bool) -> bool:
    return _with_fresh_events(subject, case, debug).outcome == "passed"


def _in_other_mappings(subject: PythonSubject, case: Case, debug: bool) -> CaseResult:
    """A case whose events are lent as other mappings (``_caller``). If it fails so, it is
    run as any other case, with a caller's habits: a failure there is its verdict (a target
    that changes the event fails on a read-only one too: EVENT-OWNED); a pass means only
    the events' shape fails it, and the result says so, naming MAP-ANY first."""
    result = _with_fresh_events(subject, case, debug, other_mappings=True)
    if result.outcome not in FAILING:
        return result
    usual = _run_with_habits(subject, case, debug)
    if usual.outcome in FAILING:
        return usual
    shaped = CaseResult.of(
        case,
        "failed",
        f"breaks {MAP_ANY}: this case passes when every event is a plain dict of plain "
        "strings, but fails when each is a read-only mapping that is not a dict, its "
        "strings of a str subclass: events as valid, as another caller hands them over. "
        "With those events:\n" + result.message,
    )
    others = tuple(rid for rid in case.requirements if rid != MAP_ANY)
    return dataclasses.replace(shaped, requirements=(MAP_ANY, *others))


def run_case(subject: Subject, case: Case, *, debug: bool = False) -> CaseResult:
    """Run one case on fresh instances; a testee fault errors this case only.

    In process, a case that fails with a caller's habits but passes when every
    event is a fresh object kept alive is reported as breaking EVENT-OWNED; a case
    marked ``events_in_process: other-mappings`` is run with such events (MAP-ANY).
    """
    if case.events_in_process == OTHER_MAPPINGS and isinstance(subject, PythonSubject):
        return _in_other_mappings(subject, case, debug)
    return _run_with_habits(subject, case, debug)


def _run_with_habits(subject: Subject, case: Case, debug: bool) -> CaseResult:
    """The case run as ``run_case`` says, events lent with a caller's habits in process."""
    result = _run_steps(subject, case, debug)
    if (
        result.outcome in FAILING
        and not result.message.startswith(_OWNED)
        and isinstance(subject, PythonSubject)
        and _passes_with_fresh_events(subject, case, debug)
    ):
        return _owned(
            case,
            "this case passes when every event is a new dict kept alive, but fails when the "
            "caller reuses one dict, refilling it for each event and overwriting it after "
            "apply() returned, as ordinary Python loops do: the implementation keeps or "
            "identifies events by object. With the caller's habits:\n" + result.message,
        )
    return result


def run_cases(
    subject: Subject,
    cases: Iterable[Case],
    profiles: Collection[str] = DEFAULT_PROFILES,
    *,
    debug: bool = False,
) -> Iterator[CaseResult]:
    """Run or skip each case in order, yielding each result as it lands."""
    for case in cases:
        reason = skip_reason(case, profiles, subject.features)
        yield (
            CaseResult.of(case, "skipped", reason)
            if reason
            else run_case(subject, case, debug=debug)
        )
