"""Differential fuzzing: each Hypothesis program is run as a one-case corpus document whose
``returns`` are the model's answers; a case that does not pass is a disagreement, shrunk, then
saved as YAML, loaded back and run again to prove it reproduces."""

from __future__ import annotations

import random
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Flaky

from tokasm import _clocks
from tokasm.corpus import Case, load_file
from tokasm.fuzz import GENERATED, SHRINK_BUDGET
from tokasm.fuzz._cases import case_document, dump_case_file
from tokasm.fuzz._strategies import programs
from tokasm.run import CaseResult, Target, run_case

if TYPE_CHECKING:
    from tokasm.corpus.steps import Step


class _Disagreement(Exception):
    """Tells Hypothesis the program failed, so that it shrinks it."""


class _OutOfTime(BaseException):
    """The time budget is spent (a BaseException: Hypothesis stops at once, not shrinking it)."""


@dataclass(frozen=True)
class Counterexample:
    """The shrunk failing case; ``reproduced``: it failed again once saved and loaded back."""

    document: dict[str, Any]
    yaml: str
    result: CaseResult
    reproduced: bool


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
        examples = f"{self.examples} example{'' if self.examples == 1 else 's'}"
        spent = f"{examples} in {self.seconds:.1f} s, seed {self.seed}"
        if self.counterexample is not None:
            return f"disagrees with the model ({spent})"
        budget = "; stopped by the time budget" if self.out_of_time else ""
        return f"no disagreement with the model ({spent}{budget})"

    def summary(self) -> str:
        return f"{self.target}: {self.verdict()}"


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples, derandomize=False, database=None, deadline=None,
        phases=(Phase.generate, Phase.shrink), report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False,
    )  # fmt: skip


@cache
def planned(examples: int, read_since: bool) -> tuple[dict[str, Any], ...]:
    """The cases ``fuzz`` with seed 0 tries on a target that agrees throughout, in its order:
    Hypothesis draws the same programs whatever a target answers, until one disagrees. Drawn
    once per process, for every target of a ``tokasm check``."""
    drawn: list[tuple[Step, ...]] = []

    def draw(program: tuple[Step, ...]) -> None:
        drawn.append(program)

    hypothesis_seed(0)(_settings(examples)(given(programs(2, read_since))(draw)))()
    description = "Drawn for tokasm check's fuzz phase (seed 0)"
    return tuple(case_document(program, description)["cases"][0] for program in drawn)


def _reproduces(target: Target, yaml_text: str) -> bool:
    """Save the case as a corpus file, load it through the loader, and run it again."""
    with tempfile.TemporaryDirectory(prefix="tokasm-fuzz-") as folder:
        path = Path(folder) / "counterexample.yaml"
        path.write_text(yaml_text, encoding="utf-8")
        (case,) = load_file(path)
    return run_case(target, case).outcome != "passed"


def _deadline(seconds: float | None) -> float:
    return float("inf") if seconds is None else _clocks.monotonic() + seconds


def fuzz(
    target: Target,
    *,
    examples: int = 500,
    seed: int | None = None,
    budget: float | None = None,
    shrink_budget: float | None = SHRINK_BUDGET,
    instances: int = 2,
    incremental: bool = False,
) -> FuzzReport:
    """Run up to ``examples`` programs on ``target`` and shrink the first disagreement;
    ``seed`` repeats a run. No example starts after ``budget`` seconds; shrinking takes at most
    ``shrink_budget``, then dropping steps as long again (None: no limit, so the counterexample
    depends on the seed alone). ``incremental``: programs call ``read_since`` too."""
    seed = random.randrange(2**32) if seed is None else seed
    strategy = programs(instances, incremental)
    description = f"Counterexample from tokasm fuzz against {target.name} (seed {seed})"
    started, deadline = _clocks.monotonic(), _deadline(budget)
    failures: list[tuple[tuple[Step, ...], CaseResult]] = []
    searched = 0

    def run(program: tuple[Step, ...]) -> CaseResult:
        document = case_document(program, description)
        return run_case(target, Case(document["cases"][0], GENERATED))

    def test(program: tuple[Step, ...]) -> None:
        nonlocal deadline, searched
        if _clocks.monotonic() >= deadline:
            raise _OutOfTime
        searched += not failures
        result = run(program)
        if result.outcome == "passed":
            return
        if not failures:
            deadline = _deadline(shrink_budget)
        failures.append((program, result))
        raise _Disagreement(result.message)

    hypothesis_test = _settings(examples)(given(strategy)(test))
    out_of_time = False
    try:
        hypothesis_seed(seed)(hypothesis_test)()
    except _OutOfTime:
        out_of_time = True
    except (_Disagreement, Flaky):
        pass  # the last failure recorded is the shrunk one (or, if flaky, the smallest seen)
    found = None
    if failures:
        (program, result), deadline = failures[-1], _deadline(shrink_budget)
        # Drop each step the failure does not need, from the last, while time is left:
        # Hypothesis keeps a program's first four draws and every step of a macro it keeps.
        for index in reversed(range(len(program))):
            fewer = program[:index] + program[index + 1 :]
            if not fewer or _clocks.monotonic() >= deadline:
                break
            if (outcome := run(fewer)).outcome != "passed":
                program, result = fewer, outcome
        document = case_document(program, description)
        text = dump_case_file(document)
        found = Counterexample(document, text, result, _reproduces(target, text))
    seconds = _clocks.monotonic() - started
    return FuzzReport(target.name, seed, searched, seconds, out_of_time, found)
