"""The shipped corpus itself: it loads, covers every rule, and agrees with the oracle.

A case whose expectation is wrong would fail correct implementations, so every
case is checked against ``ModelAssembler`` (the spec as code) and the strict
cases against the strict wrapper; coverage is measured against SPEC.md's ids.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from tokasm.corpus import Apply, Get, ModelAssembler, Raises, load_corpus, requirement_ids, spec_dir
from tokasm.implementations import BACKENDS, ListJoinAssembler, StrictAssembler
from tokasm.run.results import FAILING
from tokasm.run.runner import run_cases
from tokasm.run.targets import PythonTarget

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tokasm.corpus import Case, Corpus
    from tokasm.run.targets import Target

#: Expanded steps the whole corpus may hold, so `tokasm check` stays quick. More than half
#: are the stress cases (16385 deltas in one message, 5000 messages open and then
#: finalized, 12000 finalized in one event each); loading costs a few microseconds per step.
STEP_BUDGET = 72_000

_PROFILE_PREFIX = {
    "strict": "STRICT-",
    "incremental": "INC-",
    "surrogates": "SURR-",
    "mappings": "MAP-",
}


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


def _behaviour_ids() -> set[str]:
    return {rid for rid, kind in requirement_ids().items() if kind == "behaviour"}


def test_spec_lists_both_kinds_of_requirement() -> None:
    kinds = requirement_ids()
    assert {"behaviour", "performance"} == set(kinds.values())
    assert len(kinds) >= 30


def test_every_behaviour_requirement_has_a_case(corpus: Corpus) -> None:
    covered = {rid for case in corpus for rid in case.requirements}
    assert sorted(_behaviour_ids() - covered) == []


def test_cases_name_only_behaviour_requirements(corpus: Corpus) -> None:
    wrong = {
        case.id: rid for case in corpus for rid in case.requirements if rid not in _behaviour_ids()
    }
    assert wrong == {}


def test_every_performance_requirement_names_a_benchmark() -> None:
    text = (spec_dir() / "SPEC.md").read_text(encoding="utf-8")
    for rid, kind in requirement_ids().items():
        if kind != "performance":
            continue
        rule = re.search(
            rf"^- \*\*{rid}\*\* \(performance\):(.*?)(?=^- \*\*|^#|\Z)", text, re.M | re.S
        )
        assert rule is not None, rid
        assert re.search(r"Covered by benchmark: `\w+`", rule.group(1)), f"{rid} names no benchmark"


def test_case_ids_are_unique_and_dotted(corpus: Corpus) -> None:
    ids = [case.id for case in corpus]
    assert len(ids) == len(set(ids))
    assert all("." in case_id for case_id in ids)


def test_corpus_size_and_step_budget(corpus: Corpus) -> None:
    """The cases a check can run but ``scale``'s stay in budget; ``scale`` holds its own
    (about 300,000 events, 30 s a target at most over the protocol)."""
    checked = [case for case in corpus if case.profile != "scale"]
    assert 80 <= len(checked) <= 200
    assert sum(len(case.steps) for case in checked) < STEP_BUDGET
    scale = sum(len(case.steps) for case in corpus if case.profile == "scale")
    assert 250_000 < scale < 320_000


def test_profile_cases_name_their_profile_rules(corpus: Corpus) -> None:
    """A strict case exercises a STRICT-* rule, an incremental one an INC-* rule, others neither."""
    for case in corpus:
        prefix = _PROFILE_PREFIX.get(case.profile)
        optional = [r for r in case.requirements if r.startswith(tuple(_PROFILE_PREFIX.values()))]
        if prefix is None:
            assert optional == [], case.id
        else:
            assert any(r.startswith(prefix) for r in case.requirements), case.id


def _checks_after_last_refusal(case: Case) -> bool:
    refused = [i for i, step in enumerate(case.steps) if isinstance(step.expect, Raises)]
    if not refused:  # a case of valid events only (strict.any-mapping-of-strings-is-valid)
        return True
    after = case.steps[refused[-1] + 1 :]
    reads = any(isinstance(step, Get) for step in after)
    streams = any(isinstance(step, Apply) and not isinstance(step.expect, Raises) for step in after)
    return reads and streams


def test_strict_cases_check_state_after_refusing(corpus: Corpus) -> None:
    """STRICT-STATE-UNCHANGED: after the last refused event, a case reads and streams on."""
    strict = [case for case in corpus if case.profile == "strict"]
    assert strict
    assert [case.id for case in strict if not _checks_after_last_refusal(case)] == []


def test_refusals_appear_only_in_strict_cases(corpus: Corpus) -> None:
    """EVT-WELLFORMED: the required profile only sends well-formed events."""
    raising = {
        case.id
        for case in corpus
        for step in case.steps
        if isinstance(step, Apply) and isinstance(step.expect, Raises)
    }
    assert all(corpus.by_id()[case_id].profile == "strict" for case_id in raising)


def _disagreements(subject: Target, corpus: Iterable[Case], profiles: set[str]) -> list[str]:
    results = list(run_cases(subject, corpus, profiles))
    assert any(r.outcome == "passed" for r in results)
    return [f"{r.case_id}: {r.message}" for r in results if r.outcome in FAILING]


def test_required_and_incremental_cases_agree_with_the_model(corpus: Corpus) -> None:
    subject = PythonTarget(ModelAssembler, "model")
    assert _disagreements(subject, corpus, {"required", "incremental"}) == []


def test_strict_cases_agree_with_the_strict_wrapper(corpus: Corpus) -> None:
    subject = PythonTarget(lambda: StrictAssembler(ListJoinAssembler()), "strict list-join")
    assert _disagreements(subject, corpus, {"strict"}) == []


@pytest.mark.parametrize("backend", ["model", *BACKENDS])
def test_surrogates_cases_pass_in_process(corpus: Corpus, backend: str) -> None:
    """SURR-*: Python strings hold lone surrogates, so the oracle and every backend keep them."""
    factory = ModelAssembler if backend == "model" else BACKENDS[backend]
    subject = PythonTarget(factory, backend)
    assert _disagreements(subject, corpus, {"surrogates"}) == []


@pytest.mark.slow  # about 300,000 events a target
@pytest.mark.parametrize("backend", ["model", *BACKENDS])
def test_scale_cases_pass_on_the_model_and_every_backend(corpus: Corpus, backend: str) -> None:
    """The ``scale`` profile asks nothing beyond the required rules: the oracle and every
    bundled backend pass it (its mutants fail it: ``test_blame``)."""
    factory = ModelAssembler if backend == "model" else BACKENDS[backend]
    scale = [case for case in corpus if case.profile == "scale"]  # expanded once a process
    assert _disagreements(PythonTarget(factory, backend), scale, {"scale"}) == []
