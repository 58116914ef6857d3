"""The corpus catches every single-rule mistake in ``mutants.py``, and no correct backend.

A kit that passes a buggy implementation is worse than none, so each mutant
must fail a case that names the very rule it breaks (checked in ``test_blame``,
from the same run that checks the summary); and a kit that fails a correct
implementation is useless, so every bundled backend must pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import tokasm
from helpers import tokasm_main, user_folder
from mutants import DESIGN_FAMILIES, MUTANTS
from tokasm.corpus._load import load_corpus, requirement_ids
from tokasm.implementations import BACKENDS, IncrementalAssembler, strict
from tokasm.run.results import FAILING
from tokasm.run.runner import DEFAULT_PROFILES, run_cases
from tokasm.run.targets import PythonTarget
from unusual import DictSubclassStore

if TYPE_CHECKING:
    from collections.abc import Callable

    from tokasm.corpus._load import Corpus
    from tokasm.implementations import Assembler
    from tokasm.run.results import CaseResult


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


def _failures(results: list[CaseResult]) -> list[str]:
    return [f"{r.case_id}: {r.outcome}\n{r.message}" for r in results if r.outcome in FAILING]


def test_every_behaviour_rule_has_a_mutant() -> None:
    behaviour = {rid for rid, kind in requirement_ids().items() if kind == "behaviour"}
    # EVT-WELLFORMED is a promise about the corpus; its mutant refuses a well-formed event.
    broken = {mutant.requirement for mutant in MUTANTS.values()}
    assert sorted(behaviour - broken) == []
    assert sorted(broken - behaviour) == []


def test_every_mutant_docstring_names_its_rule() -> None:
    """One test for all of them: a test each cost more in pytest's overhead than in checking."""
    wrong = [
        name
        for name, mutant in MUTANTS.items()
        if not (mutant.factory.__doc__ or "").startswith(f"Breaks {mutant.requirement}:")
    ]
    assert wrong == []


@pytest.mark.parametrize("family", DESIGN_FAMILIES)
def test_each_design_family_has_at_least_two_mutants(family: str) -> None:
    assert len([m for m in MUTANTS.values() if m.family == family]) >= 2


def test_design_mutants_fail_a_default_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Plain ``tokasm check TARGET ...``, no options, rejects the design-bug mutants.

    ``test_blame`` runs every mutant on the default profiles plus its own, and a case of
    its rule fails; a design mutant's profile is a default one, or ``incremental`` for the
    timing of ``read_since``, so that run is a plain check's corpus phase, with ``--profile
    incremental`` for those. Here each family's first mutant of the default profiles goes
    through the whole default check, in process, as the run's verdicts are the point, not
    its process."""
    design = [mutant for mutant in MUTANTS.values() if mutant.family in DESIGN_FAMILIES]
    assert {mutant.profile for mutant in design} <= DEFAULT_PROFILES | {"incremental"}
    targets = [
        next(
            f"mutants:{m.factory.__name__}"
            for m in design
            if m.family == family and m.profile in DEFAULT_PROFILES
        )
        for family in DESIGN_FAMILIES
    ]
    report = tmp_path / "report.json"
    with user_folder(Path(__file__).parent):
        ran = tokasm_main(capsys, "check", *targets, "--in-process", "--json", str(report), "-q")
    assert ran.code == 1, ran.out + ran.err
    runs = json.loads(report.read_text(encoding="utf-8"))["runs"]
    assert {r["target"]: r["conforms"] for r in runs} == dict.fromkeys(targets, False)


_CORRECT: dict[str, type[Assembler]] = {**BACKENDS, "TokenAssembler": tokasm.TokenAssembler}


#: The wrapped assemblers: every backend (all have ``read_since``) and one without it.
_WRAPPED: dict[str, Callable[[], Assembler]] = {**_CORRECT, "no read_since": DictSubclassStore}


@pytest.mark.parametrize("backend", list(_WRAPPED))
def test_strict_wrapper_passes_strict(corpus: Corpus, backend: str) -> None:
    """Every case of the profiles it can run passes: ``strict()`` keeps ``read_since``
    where the backend has it, so incremental runs too. (Each bundled backend alone goes
    through the default check in the check-bundled transcript, test_docs.)"""
    subject = PythonTarget(lambda: strict(_WRAPPED[backend]()), f"strict {backend}")
    results = list(run_cases(subject, corpus, {"required", "strict", "incremental"}))
    assert _failures(results) == []
    reads = isinstance(_WRAPPED[backend](), IncrementalAssembler)
    profiles = {"required", "strict", "incremental"} if reads else {"required", "strict"}
    passed = {r.case_id for r in results if r.outcome == "passed"}
    assert passed == {case.id for case in corpus if case.profile in profiles}
