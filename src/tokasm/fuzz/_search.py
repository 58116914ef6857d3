"""Differential fuzzing: Hypothesis programs run on any ``Subject`` and checked against the model.

Each program becomes a one-case corpus document whose ``returns`` are the model's
answers (``case_document``), run by the ordinary ``run_case``: a disagreement is a case
that does not pass (a testee fault included). Hypothesis shrinks it; the shrunk case is
written as YAML, loaded back through the corpus loader and run again, to prove it
reproduces. Budgets are seconds of ``time.monotonic``; a shrink budget of None lets
Hypothesis shrink to its own end, so the counterexample depends on the seed alone.
"""

from __future__ import annotations

import dataclasses
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Flaky

from tokasm.corpus._load import load_file, parse_case
from tokasm.corpus.steps import READ_SINCE, Apply
from tokasm.fuzz._cases import case_document, dump_case_file
from tokasm.fuzz._limits import SHRINK_BUDGET
from tokasm.fuzz._strategies import Program, programs
from tokasm.run.runner import run_case

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from hypothesis.strategies import SearchStrategy

    from tokasm.corpus._load import Case
    from tokasm.corpus.steps import Step
    from tokasm.run.results import CaseResult
    from tokasm.run.subjects import Subject

__all__ = [
    "Counterexample",
    "FuzzReport",
    "fuzz",
]

_SOURCE = Path("<tokasm fuzz>")
_PLAIN_ID = "m"  # what simplification renames ids to, where that keeps the failure


class _Disagreement(Exception):
    """Tells Hypothesis the program failed, so that it shrinks it."""


class _OutOfTime(BaseException):
    """Ends the Hypothesis run when the time budget is spent (a BaseException: Hypothesis
    stops at once instead of shrinking it)."""


@dataclass(frozen=True)
class Counterexample:
    """The shrunk failing case, the target's failure on it, and whether it reproduces."""

    document: dict[str, Any]
    result: CaseResult
    reproduced: bool

    @property
    def yaml(self) -> str:
        return dump_case_file(self.document)


@dataclass(frozen=True)
class FuzzReport:
    """What one fuzz run did; ``counterexample`` is None when the target agreed throughout."""

    target: str
    seed: int
    examples: int
    seconds: float
    out_of_time: bool
    counterexample: Counterexample | None

    def verdict(self) -> str:
        """The verdict, how much was tried, and the seed that repeats it."""
        examples = f"{self.examples} example{'' if self.examples == 1 else 's'}"
        spent = f"{examples} in {self.seconds:.1f} s, seed {self.seed}"
        if self.counterexample is not None:
            return f"disagrees with the model ({spent})"
        budget = "; stopped by the time budget" if self.out_of_time else ""
        return f"no disagreement with the model ({spent}{budget})"

    def summary(self) -> str:
        """One line: the target and its verdict."""
        return f"{self.target}: {self.verdict()}"

    def problem(self) -> str | None:
        """The disagreement as a run-level problem for ``tokasm check``, or None."""
        found = self.counterexample
        if found is None:
            return None
        return (
            f"fuzz {self.verdict()}\n{found.result.message}\n"
            f"shrunk counterexample (save it as a corpus case):\n{found.yaml}"
        )


def _run(subject: Subject, case: Case) -> CaseResult:
    """``case`` run on ``subject``: whole, by a subject that runs cases itself (a worker
    process, which lends events with a caller's habits as ``run_case`` does here)."""
    whole = getattr(subject, "run_case", None)
    return whole(case) if callable(whole) else run_case(subject, case)


def _reproduces(subject: Subject, yaml_text: str) -> bool:
    """Save the case as a corpus file, load it through the loader, and run it again."""
    with tempfile.TemporaryDirectory(prefix="tokasm-fuzz-") as folder:
        path = Path(folder) / "counterexample.yaml"
        path.write_text(yaml_text, encoding="utf-8")
        (case,) = load_file(path)
    return _run(subject, case).outcome != "passed"


def _with_steps(program: Program, steps: tuple[Step, ...]) -> Program:
    used = {step.instance for step in steps}
    return Program(tuple(name for name in program.instances if name in used), steps)


def _renamed(step: Step, old: str, new: str) -> Step:
    return step.with_message_id(new) if step.message_id == old else step


def _simpler(program: Program) -> Iterator[Program]:
    """Programs one edit simpler: a step removed, an event key dropped, a delta
    halved, or an id renamed to the plain ``m`` (if no other message is called that)."""
    steps = program.steps
    if len(steps) > 1:
        for index in reversed(range(len(steps))):
            yield _with_steps(program, steps[:index] + steps[index + 1 :])
    for index, step in enumerate(steps):
        if not (isinstance(step, Apply) and isinstance(step.event, dict)):
            continue
        event = step.event
        edits = [{k: v for k, v in event.items() if k != key} for key in event if key != "id"]
        delta = event.get("delta")
        if isinstance(delta, str) and len(delta) > 1:
            edits.append({**event, "delta": delta[: len(delta) // 2]})
        for edit in edits:
            simpler = dataclasses.replace(step, event=edit)
            yield _with_steps(program, (*steps[:index], simpler, *steps[index + 1 :]))
    ids = dict.fromkeys(str(step.message_id) for step in steps)
    if _PLAIN_ID not in ids:
        for old in ids:
            yield _with_steps(program, tuple(_renamed(step, old, _PLAIN_ID) for step in steps))


def _simplify(
    found: tuple[Program, CaseResult], run: Callable[[Program], CaseResult], deadline: float
) -> tuple[Program, CaseResult]:
    """Greedy one-edit simplification after Hypothesis, which rarely deletes a step when
    steps of other kinds surround it. Returns the simplest failing program and its failure."""
    improved = True
    while improved and time.monotonic() < deadline:
        improved = False
        for candidate in _simpler(found[0]):
            result = run(candidate)
            if result.outcome != "passed":
                found, improved = (candidate, result), True
                break
    return found


def _deadline(seconds: float | None) -> float:
    return float("inf") if seconds is None else time.monotonic() + seconds


class _Search:
    """One fuzz run's state: the examples tried, the failures seen and the time left."""

    def __init__(self, subject: Subject, description: str, deadline: float) -> None:
        self.subject = subject
        self.description = description
        self.deadline = deadline
        self.failures: list[tuple[Program, CaseResult]] = []
        self.searched = 0

    def run(self, program: Program) -> CaseResult:
        """Run ``program`` as the one-case corpus document it prints as."""
        document = case_document(program, self.description)
        return _run(self.subject, parse_case(document["cases"][0], _SOURCE))

    def check(self, program: Program, shrink_budget: float | None) -> None:
        """Hypothesis's test: raise on a disagreement (so it shrinks) or when time is up."""
        if time.monotonic() >= self.deadline:
            raise _OutOfTime
        if not self.failures:
            self.searched += 1
        result = self.run(program)
        if result.outcome == "passed":
            return
        if not self.failures:
            self.deadline = _deadline(shrink_budget)
        self.failures.append((program, result))
        raise _Disagreement(result.message)

    def explore(
        self,
        strategy: SearchStrategy[Program],
        examples: int,
        seed: int,
        shrink_budget: float | None,
    ) -> bool:
        """Let Hypothesis generate and shrink; True if the time budget ended it."""

        def test(program: Program) -> None:
            self.check(program, shrink_budget)

        hypothesis_test = settings(
            max_examples=examples,
            derandomize=False,
            database=None,
            deadline=None,
            phases=(Phase.generate, Phase.shrink),
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet,
            print_blob=False,
        )(given(strategy)(test))
        try:
            hypothesis_seed(seed)(hypothesis_test)()
        except _OutOfTime:
            return True
        except (_Disagreement, Flaky):
            pass  # the last failure recorded is the shrunk one (or, if flaky, the smallest seen)
        return False

    def counterexample(self, shrink_budget: float | None) -> Counterexample | None:
        """The last failure, simplified further and proven to reproduce from its YAML."""
        if not self.failures:
            return None
        program, result = _simplify(self.failures[-1], self.run, _deadline(shrink_budget))
        document = case_document(program, self.description)
        reproduced = _reproduces(self.subject, dump_case_file(document))
        return Counterexample(document, result, reproduced)


def fuzz(
    subject: Subject,
    *,
    examples: int = 500,
    seed: int | None = None,
    budget: float | None = None,
    shrink_budget: float | None = SHRINK_BUDGET,
    instances: int = 2,
) -> FuzzReport:
    """Run up to ``examples`` programs on ``subject`` and shrink the first disagreement.

    ``seed`` repeats a run (a random one is chosen and reported otherwise). Budgets are
    seconds (None: no limit): no new example starts after ``budget``; Hypothesis shrinks
    for at most ``shrink_budget``, and the final one-edit simplification as long again.
    """
    chosen_seed = random.randrange(2**32) if seed is None else seed
    strategy = programs(instances=instances, read_since=READ_SINCE in subject.features)
    description = f"Counterexample from tokasm fuzz against {subject.name} (seed {chosen_seed})"
    started = time.monotonic()
    search = _Search(subject, description, _deadline(budget))
    out_of_time = search.explore(strategy, examples, chosen_seed, shrink_budget)
    counterexample = search.counterexample(shrink_budget)
    return FuzzReport(
        subject.name,
        chosen_seed,
        search.searched,
        time.monotonic() - started,
        out_of_time,
        counterexample,
    )
