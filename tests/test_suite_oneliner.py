"""``test_x = tokasm.conformance.suite(MyAssembler)`` in a project's own test file."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tokasm.conformance import suite
from tokasm.conformance._xfail import XfailError
from tokasm.conformance.corpus import load_corpus
from tokasm.implementations import StringIOAssembler

if TYPE_CHECKING:
    from pathlib import Path

pytest_plugins = ["pytester"]

TEST_FILE = """\
from tokasm.conformance import suite
from {module} import Impl

test_tokasm = suite(Impl{extra})
"""

IMPLS = {
    "good": "from tokasm.implementations import StringIOAssembler as Impl\n",
    # Breaks AFTER-REFINAL: a second final answers None instead of the text.
    "forgets_refinal": """\
from tokasm.implementations import StringIOAssembler

class Impl(StringIOAssembler):
    def apply(self, event):
        if event.get("final") and self._completed(event["id"]) is not None:
            return None
        return super().apply(event)
""",
}


def _project(pytester: pytest.Pytester, module: str, extra: str = "") -> pytest.Pytester:
    pytester.makepyfile(**{module: IMPLS[module]})
    pytester.makepyfile(test_mine=TEST_FILE.format(module=module, extra=extra))
    return pytester


def test_one_test_per_case_named_by_id(pytester: pytest.Pytester) -> None:
    corpus = load_corpus()
    result = _project(pytester, "good").runpytest_subprocess("-v", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK
    strict = sum(case.profile == "strict" for case in corpus)
    # Every case, then the cost probe and the fuzz phase, as tokasm check runs them.
    result.assert_outcomes(passed=len(corpus) - strict + 2, skipped=strict)
    result.stdout.fnmatch_lines_random(
        ["*test_tokasm[[]cost.cache-final[]] PASSED*", "*test_tokasm[[]fuzz[]] PASSED*"]
    )
    result.stdout.fnmatch_lines(["*test_mine.py::test_tokasm[[]seed.example[]] PASSED*"])


def test_broken_implementation_fails_its_cases(pytester: pytest.Pytester) -> None:
    project = _project(pytester, "forgets_refinal")
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
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
    project = _project(pytester, "good", extra=', profiles=["strict"]')
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "-rf")
    outcomes = result.parseoutcomes()
    assert "skipped" not in outcomes  # StringIOAssembler has read_since: nothing left out
    assert outcomes["passed"] + outcomes["failed"] == len(load_corpus()) + 2  # cost, fuzz
    # It does not validate events, so what fails now is strict cases only.
    failed = [line for line in result.outlines if line.startswith("FAILED")]
    assert len(failed) == outcomes["failed"] > 0
    assert all("test_tokasm[strict." in line for line in failed)


def test_xfail_file_makes_listed_cases_expected_failures(pytester: pytest.Pytester) -> None:
    (pytester.path / "known.txt").write_text("seed.example  # not idempotent yet\n", "utf-8")
    project = _project(pytester, "forgets_refinal", extra=', xfail="known.txt"')
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "-k", "seed and example", "-rx")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines(["XFAIL *test_tokasm[[]seed.example[]] - *(not idempotent yet)"])


def test_stale_xfail_line_is_refused(tmp_path: Path) -> None:
    known = tmp_path / "known.txt"
    known.write_text("seed.example\nrenamed.long-ago  # gone\n", encoding="utf-8")
    with pytest.raises(XfailError, match=r"known\.txt:2: 'renamed\.long-ago' matches no case"):
        suite(StringIOAssembler, xfail=known)
