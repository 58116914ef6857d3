"""``test_x = tokasm.conformance.suite(MyAssembler)`` in a project's own test file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tokasm.conformance import suite
from tokasm.corpus._load import load_corpus
from tokasm.errors import XfailError
from tokasm.implementations import StringIOAssembler

pytest_plugins = ["pytester"]

TEST_FILE = """\
from tokasm.conformance import suite
{import_impl}

test_tokasm = suite(Impl{extra})
"""

GOOD = "from tokasm.implementations import StringIOAssembler as Impl"
# Breaks AFTER-REFINAL: a second final answers None instead of the text.
FORGETS_REFINAL = "from mutants import RefinalReturnsNone as Impl"


def _project(pytester: pytest.Pytester, import_impl: str, extra: str = "") -> pytest.Pytester:
    shutil.copy(Path(__file__).with_name("mutants.py"), pytester.path)
    pytester.makepyfile(test_mine=TEST_FILE.format(import_impl=import_impl, extra=extra))
    return pytester


def test_one_test_per_case_named_by_id(pytester: pytest.Pytester) -> None:
    corpus = load_corpus()
    result = _project(pytester, GOOD).runpytest_inprocess("-v", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK
    optional = sum(case.profile != "required" for case in corpus)
    # Every case, then the cost probe and the fuzz phase, as tokasm check runs them.
    result.assert_outcomes(passed=len(corpus) - optional + 2, skipped=optional)
    result.stdout.fnmatch_lines_random(
        ["*test_tokasm[[]cost.cache-final[]] PASSED*", "*test_tokasm[[]fuzz[]] PASSED*"]
    )
    result.stdout.fnmatch_lines(["*test_mine.py::test_tokasm[[]seed.example[]] PASSED*"])


def test_broken_implementation_fails_its_cases(pytester: pytest.Pytester) -> None:
    project = _project(pytester, FORGETS_REFINAL)
    # The case shown is what is tested, not the rest of the corpus (the test above runs it
    # all) nor the fuzz item, which would fail too after shrinking what it found.
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-k", "seed and example")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*_ test_tokasm[[]seed.example[]] _*",
            "seed.example [[]NONFINAL-NONE, *[]] - The seed spec's example holds exactly as "
            "written [[]failed[]]",
            "*expected: 'hello'",
            "*actual:   None",
        ]
    )


def test_profiles_argument_adds_strict(pytester: pytest.Pytester) -> None:
    project = _project(pytester, GOOD, extra=', profiles=["strict"]')
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-rf")
    outcomes = result.parseoutcomes()
    # The incremental, surrogates, mappings and scale profiles are left out.
    left_out = sum(case.profile not in ("required", "strict") for case in load_corpus())
    # And the fuzz phase, as tokasm check skips it for a target that failed a case.
    assert outcomes.get("skipped", 0) == left_out + 1
    # Every case run, then the cost probe.
    assert outcomes["passed"] + outcomes["failed"] == len(load_corpus()) - left_out + 1
    # It does not validate events, so what fails now is strict cases only.
    failed = [line for line in result.outlines if line.startswith("FAILED")]
    assert len(failed) == outcomes["failed"] > 0
    assert all("test_tokasm[strict." in line for line in failed)


def test_xfail_file_makes_listed_cases_expected_failures(pytester: pytest.Pytester) -> None:
    (pytester.path / "known.txt").write_text("seed.example  # not idempotent yet\n", "utf-8")
    project = _project(pytester, FORGETS_REFINAL, extra=', xfail="known.txt"')
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-k", "seed and example", "-rx")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines(["XFAIL *test_tokasm[[]seed.example[]] - *(not idempotent yet)"])


def test_stale_xfail_line_is_refused(tmp_path: Path) -> None:
    known = tmp_path / "known.txt"
    known.write_text("seed.example\nrenamed.long-ago  # gone\n", encoding="utf-8")
    with pytest.raises(XfailError, match=r"known\.txt:2: 'renamed\.long-ago' matches no case"):
        suite(StringIOAssembler, xfail=known)
