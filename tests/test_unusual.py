"""Correct assemblers built in unusual ways conform under a default ``tokasm check``.

The kit must judge behaviour, not construction: a ``dict`` subclass, closures
behind a factory, UTF-32 code points in an ``array``, a generator per
message, events snapshotted into tuples, a ``str`` subclass for texts and deep
copies of every event, interned ids, a tail held back for display, percent-encoded
parts, hex keys, empty texts swept into a set, kept provider metadata, completed texts
archived in batches, lookalike ids filed in one bucket, runs of a repeated delta kept
as counts, open messages kept line by line, links indexed at final, a completed text
cached at its first read, one log scanned at every read, defaults filled into the
caller's events and a ``read_since`` of another meaning are all correct (RETURN-TYPE: any
``str`` instance is a text; the seed's only cost rule is CACHE-FINAL; EVENT-OWNED asks only
that an event says what it said; the seed never names ``read_since``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest
from hypothesis import settings

from helpers import tokasm_here
from tokasm.fuzz.stateful import run_conformance_test
from unusual import UNUSUAL

pytest_plugins = ["pytester"]

if TYPE_CHECKING:
    from tokasm.implementations import AssemblerFactory

_TESTS = Path(__file__).parent


#: The unusual classes whose ``read_since`` is the incremental profile's, checked with it too.
INCREMENTAL = frozenset({"BucketsLookalikeIds"})


def test_unusual_set_covers_each_construction() -> None:
    assert len(UNUSUAL) == 22


@pytest.mark.slow  # the whole corpus, fuzz phase and cost probes
@pytest.mark.parametrize("name", list(UNUSUAL))
def test_every_unusual_assembler_conforms_with_defaults(tmp_path: Path, name: str) -> None:
    """A run of the CLI, corpus and fuzz phase, plus lone surrogates (in process: the
    targets are plain, if unusual, Python); one target a test, so xdist spreads them."""
    target = f"unusual:{name}"
    report = tmp_path / "report.json"
    ran = tokasm_here(
        _TESTS,
        *("check", target, "--in-process", "--profile", "surrogates"),
        *(("--profile", "incremental") if name in INCREMENTAL else ()),
        *("--json", str(report), "-q"),
    )
    (run,) = json.loads(report.read_text(encoding="utf-8"))["runs"]
    failing = [c["id"] for c in run["cases"] if c["outcome"] not in ("passed", "skipped")]
    assert failing == [], ran.out
    assert run["target"] == target
    assert run["conforms"], ran.out
    assert ran.code == 0, ran.out + ran.err


@pytest.mark.parametrize("name", list(UNUSUAL))
def test_every_unusual_assembler_matches_the_model_step_by_step(name: str) -> None:
    """The state machine judges as the check does: a ``str`` subclass is a text too."""
    factory = cast("AssemblerFactory", UNUSUAL[name])
    steps = settings(max_examples=25, stateful_step_count=30, deadline=None)
    run_conformance_test(factory, steps, incremental=name in INCREMENTAL)


def test_str_subclass_text_passes_where_plain_str_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """The subclass really is returned (so the test above proves RETURN-TYPE's acceptance)."""
    monkeypatch.syspath_prepend(str(_TESTS))
    assembler = UNUSUAL["ReturnsStrSubclass"]()
    final = assembler.apply({"id": "m", "delta": "x", "final": True})  # type: ignore[attr-defined]
    assert type(final).__name__ == "Text"
    assert isinstance(final, str)
    assert final == "x"


#: A seed-correct class whose ``read_since`` is no claim of the incremental profile.
OTHER_READ_SINCE = "unusual:ReplaysDeltasSince"


def test_a_read_since_of_another_meaning_runs_only_when_the_profile_is_asked_for(
    tmp_path: Path,
) -> None:
    """The seed never names ``read_since``: by default neither a case nor the fuzz phase calls
    it; ``--profile incremental`` fails this class."""
    report = tmp_path / "report.json"
    quick = ("--in-process", "--no-cost-probe", "--json", str(report), "-k", "seed.example")
    selected = (*quick, "-k", "inc.*", "--fuzz-examples", "0")
    ran = tokasm_here(_TESTS, "check", OTHER_READ_SINCE, *selected)
    assert ran.code == 0, ran.out + ran.err
    (run,) = json.loads(report.read_text(encoding="utf-8"))["runs"]
    outcomes = {c["id"]: c["outcome"] for c in run["cases"]}
    assert outcomes.pop("seed.example") == "passed"
    assert set(outcomes.values()) == {"skipped"}, outcomes
    fuzzed = tokasm_here(_TESTS, "check", OTHER_READ_SINCE, *quick)
    assert fuzzed.code == 0, fuzzed.out + fuzzed.err
    asked = tokasm_here(_TESTS, "check", OTHER_READ_SINCE, *selected, "--profile", "incremental")
    assert asked.code == 1, asked.out + asked.err
    (run,) = json.loads(report.read_text(encoding="utf-8"))["runs"]
    assert {c["outcome"] for c in run["cases"] if c["id"] != "seed.example"} == {"failed"}


def test_the_pytest_route_leaves_a_read_since_of_another_meaning_alone(
    pytester: pytest.Pytester,
) -> None:
    """Its incremental cases are skipped and its fuzz item, which draws no ``read_since``,
    passes."""
    shutil.copy(_TESTS / "unusual.py", pytester.path)
    result = pytester.runpytest_inprocess(
        *("--pyargs", "tokasm.conformance", "-p", "no:cacheprovider", "-v"),
        *("--tokasm-assembler", OTHER_READ_SINCE, "-k", "inc. or seed.example or fuzz"),
    )
    assert result.ret == pytest.ExitCode.OK
    assert result.parseoutcomes()["passed"] == 2  # seed.example and fuzz
    result.stdout.fnmatch_lines_random(
        ["*[[]inc.unknown-id[]] SKIPPED*", "*[[]fuzz[]] PASSED*", "*[[]seed.example[]] PASSED*"]
    )
