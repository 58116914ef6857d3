"""Correct assemblers built in unusual ways conform under a default ``tokasm check``.

The kit must judge behaviour, not construction: a ``dict`` subclass, closures
behind a factory, UTF-32 code points in an ``array``, a generator per
message, events snapshotted into tuples, a ``str`` subclass for texts and deep
copies of every event, interned ids, a tail held back for display, percent-encoded
parts, hex keys, empty texts swept into a set, kept provider metadata, completed texts
archived in batches, lookalike ids filed in one bucket, runs of a repeated delta kept
as counts, open messages kept line by line, links indexed at final, a completed text
cached at its first read, one log scanned at every read and defaults filled into the
caller's events are all correct (RETURN-TYPE: any ``str`` instance is a text; the seed's
only cost rule is CACHE-FINAL; EVENT-OWNED asks only that an event says what it said).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest
from hypothesis import settings

from helpers import tokasm_here
from tokasm.fuzz.stateful import run_conformance_test
from unusual import UNUSUAL

if TYPE_CHECKING:
    from tokasm.implementations import AssemblerFactory

_TESTS = Path(__file__).parent


def test_unusual_set_covers_each_construction() -> None:
    assert len(UNUSUAL) == 21


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
    run_conformance_test(factory, settings(max_examples=25, stateful_step_count=30, deadline=None))


def test_str_subclass_text_passes_where_plain_str_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """The subclass really is returned (so the test above proves RETURN-TYPE's acceptance)."""
    monkeypatch.syspath_prepend(str(_TESTS))
    assembler = UNUSUAL["ReturnsStrSubclass"]()
    final = assembler.apply({"id": "m", "delta": "x", "final": True})  # type: ignore[attr-defined]
    assert type(final).__name__ == "Text"
    assert isinstance(final, str)
    assert final == "x"
