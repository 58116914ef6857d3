"""Outcomes of running cases: the vocabulary shared by runners, reports and exit codes."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, TypeAlias

from tokasm._clocks import Clocks

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from tokasm.corpus._load import Case

__all__ = [
    "FAILING",
    "NOT_TEXT",
    "OUTCOMES",
    "CaseResult",
    "Outcome",
    "TargetRun",
    "summarize",
    "timed",
]

#: The error kind of an answer for a result that is neither text nor null, which the
#: protocol cannot carry (the Python testee's ``--isolate``): the step failed, as it would
#: have in process, and the testee is not at fault.
NOT_TEXT = "ReturnedNotText"

Outcome: TypeAlias = Literal["passed", "failed", "errored", "skipped", "xfailed", "xpassed"]
OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "errored", "skipped", "xfailed", "xpassed")

#: Outcomes that make a run non-conforming (exit code 1).
FAILING: frozenset[Outcome] = frozenset({"failed", "errored", "xpassed"})


@dataclass(frozen=True)
class CaseResult:
    """One case's verdict; ``message`` says why for anything but a pass."""

    case_id: str
    description: str
    outcome: Outcome
    message: str = ""
    requirements: tuple[str, ...] = ()
    #: The case file, for a case from a user folder (``--cases``); None for the bundled corpus.
    source: str | None = None
    duration: float = 0.0  # seconds the case took (JUnit ``time``); 0 where not measured
    #: What a passed check measured, for reports to show (a cost probe's figure or finding).
    note: str = ""

    @classmethod
    def of(cls, case: Case, outcome: Outcome, message: str = "") -> CaseResult:
        source = None if case.bundled else case.source.as_posix()
        return cls(case.id, case.description, outcome, message, case.requirements, source)


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
    """``results`` with each one's ``duration``: the time it took to produce it.

    Wraps a lazy run (``run_cases``), so each case is timed where it runs, on a
    monotonic clock, without the runner knowing.
    """
    start = Clocks.perf_counter()
    for result in results:
        now = Clocks.perf_counter()
        yield replace(result, duration=now - start)
        start = Clocks.perf_counter()
