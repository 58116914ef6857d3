"""The pytest route: ``python -m pytest --pyargs tokasm.conformance --assembler MODULE:ATTR``.

Every run is a real pytest subprocess in an empty folder holding the user's
module, as in a user's project; the verdicts must match ``tokasm check``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tokasm.conformance.corpus import load_corpus

if TYPE_CHECKING:
    from collections.abc import Collection

pytest_plugins = ["pytester"]

GOOD = "from tokasm.implementations import ListJoinAssembler as Impl\n"

# Breaks AFTER-REFINAL only: a second final answers None instead of the text.
BROKEN = """\
from tokasm.implementations import ListJoinAssembler

class Impl(ListJoinAssembler):
    def apply(self, event):
        if event.get("final") and self._completed(event["id"]) is not None:
            return None
        return super().apply(event)
"""

STRICT = """\
from tokasm.implementations import ListJoinAssembler, StrictAssembler

def make():
    return StrictAssembler(ListJoinAssembler())
"""


def _count(profiles: Collection[str]) -> int:
    return sum(case.profile in profiles for case in load_corpus())


#: Items per target besides the cases: the cost probe and the fuzz phase.
CHECKS = 2


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(good=GOOD, broken=BROKEN, strictimpl=STRICT)
    return pytester


def _conformance(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest_subprocess(
        "--pyargs", "tokasm.conformance", "-p", "no:cacheprovider", *args
    )


def test_correct_target_passes_with_case_ids_in_item_names(project: pytest.Pytester) -> None:
    result = _conformance(project, "--assembler", "good:Impl", "-v")
    assert result.ret == pytest.ExitCode.OK
    # ListJoinAssembler has read_since, so the incremental profile runs too.
    result.assert_outcomes(
        passed=_count({"required", "incremental"}) + CHECKS, skipped=_count({"strict"})
    )
    result.stdout.fnmatch_lines(["*test_conformance.py::test_case[[]seed.example[]] PASSED*"])


def test_broken_target_fails_alike_serially_and_under_xdist(project: pytest.Pytester) -> None:
    serial = _conformance(project, "--assembler", "broken:Impl", "-rf")
    assert serial.ret == pytest.ExitCode.TESTS_FAILED
    serial.stdout.fnmatch_lines(
        [
            "*_ test_case[[]seed.example[]] _*",
            "seed.example [[]NONFINAL-NONE, *[]] - The seed spec's example holds exactly as "
            "written [[]failed[]]",
            "step 3 on 'a': apply({'id': 'm', 'delta': 'ignored', 'final': True})",
            "  expected: 'hello'",
            "  actual:   None",
        ]
    )
    assert "Traceback" not in serial.stdout.str()
    assert "suite.py" not in serial.stdout.str()  # pytrace=False: no frames into tokasm

    parallel = _conformance(project, "--assembler", "broken:Impl", "-rf", "-n", "2")
    assert parallel.ret == serial.ret
    assert parallel.parseoutcomes() == serial.parseoutcomes()

    def failed(run: pytest.RunResult) -> list[str]:
        return sorted(line.split(" - ")[0] for line in run.outlines if line.startswith("FAILED"))

    assert failed(parallel) == failed(serial)
    assert "FAILED test_conformance.py::test_case[seed.example]" in failed(serial)


def test_several_targets_get_one_item_per_case_each(project: pytest.Pytester) -> None:
    result = _conformance(project, "--assembler", "good:Impl", "--assembler", "broken:Impl", "-v")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines_random(
        [
            "*test_case[[]good:Impl/seed.example[]] PASSED*",
            "*test_case[[]broken:Impl/seed.example[]] FAILED*",
        ]
    )


def test_strict_profile_on_request(project: pytest.Pytester) -> None:
    result = _conformance(project, "--assembler", "strictimpl:make", "--tokasm-profile", "strict")
    assert result.ret == pytest.ExitCode.OK
    # StrictAssembler has no read_since: the incremental profile is skipped.
    result.assert_outcomes(
        passed=_count({"required", "strict"}) + CHECKS, skipped=_count({"incremental"})
    )


def test_without_assembler_one_clear_skip(project: pytest.Pytester) -> None:
    result = _conformance(project, "-rs")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*no --assembler given: run `python -m pytest --pyargs*"])


def test_xfail_list_makes_strict_expected_failures(project: pytest.Pytester) -> None:
    known = project.path / "known.txt"
    known.write_text("seed.ex*  # re-final is not idempotent yet\n", encoding="utf-8")
    result = _conformance(
        project,
        *("--assembler", "broken:Impl", "--assembler", "good:Impl"),
        *("--tokasm-xfail", str(known), "-k", "seed and example", "-rxXf"),
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(xfailed=1, failed=1)  # broken fails as listed; good passes: XPASS
    result.stdout.fnmatch_lines_random(
        [
            "XFAIL *test_case[[]broken:Impl/seed.example[]] - *known.txt:1 (re-final*",
            "FAILED *test_case[[]good:Impl/seed.example[]]*",
        ]
    )


def test_stale_xfail_line_is_a_usage_error(project: pytest.Pytester) -> None:
    known = project.path / "known.txt"
    known.write_text("seed.example\nno.such-case\n", encoding="utf-8")
    result = _conformance(project, "--assembler", "good:Impl", "--tokasm-xfail", str(known))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: --tokasm-xfail: *known.txt:2: 'no.such-case' matches no case*"]
    )


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("nope_missing:Impl", "cannot import module 'nope_missing'"),
        ("good", "expected MODULE:ATTR"),
    ],
)
def test_bad_assembler_is_a_usage_error(project: pytest.Pytester, target: str, reason: str) -> None:
    result = _conformance(project, "--assembler", target)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --assembler: target {target!r}: *{reason}*"])
    assert "Traceback" not in result.stderr.str()


def test_plugin_is_inert_in_other_projects(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_theirs="def test_theirs():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=1)
    help_text = pytester.runpytest_subprocess("--help").stdout.str()
    assert "--assembler=MODULE:ATTR" in help_text


SUBTLE_MUTANTS = [
    "mutants:LosesDeepDelta",
    "mutants:CaseInsensitiveIds",
    "mutants:TruncatesLongDelta",
    "mutants:CrlfToLf",
    "mutants:EvictsPast256Open",
]


def test_pytest_route_and_check_agree(project: pytest.Pytester) -> None:
    """Same failing cases per target from ``tokasm check`` and from pytest under xdist."""
    shutil.copy(Path(__file__).with_name("mutants.py"), project.path)
    targets = [*SUBTLE_MUTANTS, "good:Impl"]
    subprocess.run(
        [sys.executable, "-m", "tokasm", "check", *targets, "--json", "check.json"],
        cwd=project.path,
        capture_output=True,
        check=False,
    )
    report = json.loads((project.path / "check.json").read_text(encoding="utf-8"))
    by_check = {
        run["target"]: {c["id"] for c in run["cases"] if c["outcome"] in ("failed", "errored")}
        for run in report["runs"]
    }
    assert by_check.pop("good:Impl") == set()
    assert all(by_check.values()), by_check  # every mutant is caught

    args = [arg for target in targets for arg in ("--assembler", target)]
    result = _conformance(project, *args, "-n", "2", "--junitxml=pytest.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    by_pytest: dict[str, set[str]] = {target: set() for target in SUBTLE_MUTANTS}
    for case in ET.parse(project.path / "pytest.xml").iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            target, case_id = case.get("name", "")[len("test_case[") : -1].split("/")
            by_pytest[target].add(case_id)
    # The documented difference (pytest_suite's docstring): check fuzzes only a target that
    # passed every case; the fuzz item runs anyway and may find the same bug again.
    assert {target: failed - {"fuzz"} for target, failed in by_pytest.items()} == by_check
