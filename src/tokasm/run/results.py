"""Outcomes of running cases, shared by runners, reports and exit codes; a failure is data
(``Failure``), ``message`` only its rendering, and ``to_data``/``from_data`` cross processes."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, get_args

from tokasm.errors import ProtocolError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from tokasm.corpus._load import Case

__all__ = [
    "FAILING", "FAILURE_KINDS", "NOT_TEXT", "OUTCOMES", "CaseResult", "Failure", "Outcome",
    "TargetRun", "summarize", "timed",
]  # fmt: skip

#: The error kind a testee answers for a result neither text nor null (the step fails).
NOT_TEXT = "ReturnedNotText"

Outcome: TypeAlias = Literal["passed", "failed", "errored", "skipped", "xfailed", "xpassed"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)

#: Outcomes that make a run non-conforming (exit code 1).
FAILING: frozenset[Outcome] = frozenset({"failed", "errored", "xpassed"})

#: What went wrong; "event-owned" and "event-shape": a caller's habits (EVENT-OWNED) or another
#: caller's events (MAP-ANY) alone fail the case; the last three: the worker's fate.
FailureKind: TypeAlias = Literal[
    "mismatch", "raised", "wrong-error", "not-text", "testee-fault", "factory-error",
    "event-owned", "event-shape", "hung", "exited", "crashed",
]  # fmt: skip
FAILURE_KINDS: tuple[FailureKind, ...] = get_args(FailureKind)


@dataclass(frozen=True)
class Failure:
    """Why a case failed, as data (``_ANSWERS``); one outside any step has no ``request``."""

    kind: FailureKind
    where: str = ""
    instance: str = ""
    request: dict[str, Any] | None = None
    expected: dict[str, Any] | None = None
    actual: dict[str, Any] | None = None


#: The longest text of a failure record sent: far under the protocol's line limit, escaped.
RECORD_TEXT = 1 << 19


def _cut(value: Any) -> Any:
    """``value`` with every text longer than ``RECORD_TEXT`` cut to that, saying so."""
    if isinstance(value, str) and len(value) > RECORD_TEXT:
        return f"{value[:RECORD_TEXT]}... ({len(value)} characters)"
    if isinstance(value, dict):
        return {key: _cut(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut(item) for item in value]
    return value


_TEXT, _OR_NULL, _OBJECT = (str,), (str, type(None)), (dict, type(None))
#: The fields of a result's data and of its failure's, each with its types.
_RESULT_FIELDS: dict[str, tuple[type, ...]] = {
    "case_id": _TEXT, "description": _TEXT, "outcome": _TEXT, "message": _TEXT,
    "requirements": (list,), "source": _OR_NULL, "duration": (float, int), "failure": _OBJECT,
    "note": _TEXT,
}  # fmt: skip
_FAILURE_FIELDS = {"kind": _TEXT, "where": _TEXT, "instance": _TEXT, "request": _OBJECT,
                   "expected": _OBJECT, "actual": _OBJECT}  # fmt: skip
#: The shapes ``expected`` and ``actual`` may have, by their keys.
_ANSWERS: dict[str, list[dict[str, tuple[type, ...]]]] = {
    "expected": [{"returns": _OR_NULL}, {"raises": _TEXT}],
    "actual": [{"returns": _OR_NULL}, {"foreign": _TEXT, "type": _TEXT},
               {"raises": _TEXT, "message": _TEXT}],
}  # fmt: skip


def _checked(data: object, fields: dict[str, tuple[type, ...]], what: str) -> dict[str, Any]:
    """``data``, an object with exactly ``fields``, each of its types; else ProtocolError."""
    if type(data) is not dict:
        raise ProtocolError(f"{what} must be an object, got {type(data).__name__}")
    if set(data) != set(fields):
        keys = set(fields)
        unknown, missing = sorted(map(str, set(data) - keys)), sorted(keys - set(data))
        raise ProtocolError(f"{what}: unknown keys {unknown}, missing keys {missing}")
    for key, types in fields.items():
        if type(data[key]) not in types:
            names = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise ProtocolError(f"{what}: {key!r} must be {names}, got {type(data[key]).__name__}")
    return data


def _failure_from(data: dict[str, Any] | None) -> Failure | None:
    if data is None:
        return None
    fields = _checked(data, _FAILURE_FIELDS, "failure")
    if fields["kind"] not in FAILURE_KINDS:
        raise ProtocolError(f"failure: unknown kind {fields['kind']!r}")
    for key, shapes in _ANSWERS.items():
        if fields[key] is not None:
            shape = [shape for shape in shapes if set(fields[key]) == set(shape)]
            _checked(fields[key], shape[0] if shape else {}, f"failure {key}")
    return Failure(**fields)


@dataclass(frozen=True)
class CaseResult:
    """One case's verdict; ``message`` says why for anything but a pass, ``failure`` as data."""

    case_id: str
    description: str
    outcome: Outcome
    message: str = ""
    requirements: tuple[str, ...] = ()
    #: The case file, for a case from a user folder (``--cases``); None for the bundled corpus.
    source: str | None = None
    duration: float = 0.0  # seconds the case took (JUnit ``time``); 0 where not measured
    failure: Failure | None = None
    #: What a passed check measured, for reports to show (a cost probe's figure or finding).
    note: str = ""

    @classmethod
    def of(
        cls, case: Case, outcome: Outcome, message: str = "", failure: Failure | None = None
    ) -> CaseResult:
        source = None if case.bundled else case.source.as_posix()
        given = (case.id, case.description, outcome, message, case.requirements, source)
        return cls(*given, failure=failure)

    def to_data(self) -> dict[str, Any]:
        """The result as plain JSON data (``from_data`` reads it back)."""
        failure = None if self.failure is None else _cut(vars(self.failure))
        return {**vars(self), "requirements": list(self.requirements), "failure": failure}

    @classmethod
    def from_data(cls, data: object) -> CaseResult:
        """The result ``to_data`` gave; ProtocolError for any other shape."""
        fields = _checked(data, _RESULT_FIELDS, "result")
        if fields["outcome"] not in OUTCOMES:
            raise ProtocolError(f"result: unknown outcome {fields['outcome']!r}")
        if any(type(rid) is not str for rid in fields["requirements"]):
            raise ProtocolError("result: 'requirements' must hold strings only")
        return cls(**{**fields, "requirements": tuple(fields["requirements"]),
                      "duration": float(fields["duration"]),
                      "failure": _failure_from(fields["failure"])})  # fmt: skip


@dataclass(frozen=True)
class TargetRun:
    """Everything known about one target's run, as reports need it."""

    target: str
    implementation: str
    results: tuple[CaseResult, ...]
    corpus_version: str
    problems: tuple[str, ...] = ()  # run-level failures, e.g. stale expected-failure lines
    duration: float = 0.0  # seconds for the whole target, fuzzing included

    @property
    def summary(self) -> dict[str, int]:
        return summarize(self.results)

    @property
    def conforms(self) -> bool:
        return not self.problems and not any(r.outcome in FAILING for r in self.results)


def summarize(results: Iterable[CaseResult]) -> dict[str, int]:
    """Count per outcome, every outcome present (zeros included)."""
    counts = Counter(result.outcome for result in results)
    return {outcome: counts[outcome] for outcome in OUTCOMES}


def timed(results: Iterable[CaseResult]) -> Iterator[CaseResult]:
    """``results`` (a lazy run) with each one's ``duration``: the time it took to produce."""
    start = time.perf_counter()
    for result in results:
        yield replace(result, duration=time.perf_counter() - start)
        start = time.perf_counter()
