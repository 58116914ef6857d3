"""The pytest route: ``pytest --pyargs tokasm.conformance --tokasm-assembler MODULE:ATTR``.

Runs are in-process pytester sessions in an empty folder holding the user's
module, as in a user's project; one runs pytest-xdist, whose workers are fresh
processes loading the installed entry point, and its verdicts must match ``tokasm check``.
The plugin is loaded in every pytest session where tokasm is installed, so
it must also leave other projects alone.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from helpers import QUICK
from tokasm.cli import main as tokasm_main
from tokasm.conformance import suite
from tokasm.corpus._load import load_corpus
from tokasm.errors import UsageError
from tokasm.implementations import ListJoinAssembler

if TYPE_CHECKING:
    from collections.abc import Collection

pytest_plugins = ["pytester"]

MUTANTS = Path(__file__).with_name("mutants.py")

GOOD = "from tokasm.implementations import ListJoinAssembler as Impl\n"

STRICT = """\
from tokasm.implementations import ListJoinAssembler, StrictAssembler

def make():
    return StrictAssembler(ListJoinAssembler())
"""

# Breaks AFTER-REFINAL only: a second final answers None instead of the text.
BROKEN = "mutants:RefinalReturnsNone"


def _count(profiles: Collection[str]) -> int:
    return sum(case.profile in profiles for case in load_corpus())


#: Items per target besides the cases: the cost probe and the fuzz phase.
CHECKS = 2


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(good=GOOD, strictimpl=STRICT)
    shutil.copy(MUTANTS, pytester.path)
    return pytester


def _conformance(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest_inprocess(
        "--pyargs", "tokasm.conformance", "-p", "no:cacheprovider", *args
    )


def test_correct_target_passes_with_case_ids_in_item_names(project: pytest.Pytester) -> None:
    result = _conformance(project, "--tokasm-assembler", "good:Impl", "-v")
    assert result.ret == pytest.ExitCode.OK
    # ListJoinAssembler has read_since, but the incremental profile runs only when asked for.
    result.assert_outcomes(
        passed=_count({"required"}) + CHECKS,
        skipped=_count({"strict", "incremental", "surrogates", "mappings", "scale"}),
    )
    result.stdout.fnmatch_lines(["*test_conformance.py::test_case[[]seed.example[]] PASSED*"])


def test_broken_target_fails_with_the_runner_message(project: pytest.Pytester) -> None:
    result = _conformance(
        project,
        "--tokasm-assembler",
        BROKEN,
        "-rf",
        "-k",
        "seed.example",
        "--tokasm-fuzz-examples",
        "0",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*_ test_case[[]seed.example[]] _*",
            "seed.example [[]NONFINAL-NONE, *[]] - The seed spec's example holds exactly as "
            "written [[]failed[]]",
            "step 3 on 'a': apply({'id': 'm', 'delta': 'ignored', 'final': True})",
            "  expected: 'hello'",
            "  actual:   None",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert "suite.py" not in result.stdout.str()  # pytrace=False: no frames into tokasm


def test_the_fuzz_item_is_skipped_once_a_case_of_its_target_failed(
    project: pytest.Pytester,
) -> None:
    """As ``tokasm check`` fuzzes only a target that passed every case: the failing case
    runs first, so the fuzz item knows (a serial run)."""
    result = _conformance(
        project,
        *("--tokasm-assembler", BROKEN, "--tokasm-fuzz-examples", "5", "-rs"),
        *("-k", "seed.example or fuzz"),
    )
    result.assert_outcomes(failed=1, skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED * a case of this target failed: fuzzing looks *"])


def test_several_targets_get_one_item_per_case_each(project: pytest.Pytester) -> None:
    """Shown on the one case asserted (``-k``): every case of both targets, compared with
    ``tokasm check``, is the xdist agreement test's."""
    result = _conformance(
        project,
        *("--tokasm-assembler", "good:Impl", "--tokasm-assembler", BROKEN),
        *("--tokasm-fuzz-examples", "0", "-k", "seed.example", "-v"),
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, failed=1)  # one item per target for the case
    result.stdout.fnmatch_lines_random(
        [
            "*test_case[[]good:Impl/seed.example[]] PASSED*",
            f"*test_case[[]{BROKEN}/seed.example[]] FAILED*",
        ]
    )


EXITS = """\
import os
from tokasm.implementations import ListJoinAssembler

class Impl(ListJoinAssembler):
    def apply(self, event):
        if event.get("delta") == "":
            os._exit(0)
        return super().apply(event)
"""


def test_isolate_runs_the_target_as_a_testee_so_an_exit_costs_one_case(
    project: pytest.Pytester,
) -> None:
    """In pytest's process this target would end the session; isolated, each case whose
    empty delta ends the testee fails, and the others pass."""
    project.makepyfile(exits=EXITS)
    result = _conformance(
        project,
        *("--tokasm-assembler", "exits:Impl", "--tokasm-isolate", "--tokasm-fuzz-examples", "0"),
        *("-k", "append.empty-delta-creates or append.basic or seed.example"),
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["*_ test_case[[]append.empty-delta-creates[]] _*", "testee fault *exited with code 0*"]
    )


#: Exits at an empty delta; its worker's hello says read_since only in the first one started.
RESTARTS_AS_ANOTHER = """\
import os
from pathlib import Path
from tokasm.implementations import ListJoinAssembler

MARK = Path(__file__).with_name("started-once")
FIRST = not MARK.exists()
MARK.touch()

class Plain:
    def __init__(self):
        self._inner = ListJoinAssembler()
    def apply(self, event):
        if event.get("delta") == "":
            os._exit(0)
        return self._inner.apply(event)
    def get(self, message_id):
        return self._inner.get(message_id)

class Incremental(Plain):
    def read_since(self, message_id, offset):
        return self._inner.read_since(message_id, offset)

Impl = Incremental if FIRST else Plain
"""


def test_isolate_fails_the_item_where_a_run_level_problem_is_found(
    project: pytest.Pytester,
) -> None:
    """A worker restarted as another implementation is a run-level problem in tokasm check;
    with --tokasm-isolate it fails the item during which it was found, never lost."""
    project.makepyfile(restarts=RESTARTS_AS_ANOTHER)
    result = _conformance(
        project,
        *("--tokasm-assembler", "restarts:Impl", "--tokasm-isolate", "--tokasm-fuzz-examples", "0"),
        *("-k", "append.empty-delta-creates or seed.example"),
    )
    result.assert_outcomes(failed=2)  # seed.example passes, but the problem is found in it
    result.stdout.fnmatch_lines(
        [
            "*_ test_case[[]append.empty-delta-creates[]] _*",
            "testee fault *exited with code 0*",
            "*_ test_case[[]seed.example[]] _*",
            "run-level problem of the target: *changed its identity when restarted*",
        ]
    )


def test_strict_profile_on_request(project: pytest.Pytester) -> None:
    result = _conformance(
        project,
        *("--tokasm-assembler", "strictimpl:make", "--tokasm-profile", "strict"),
        *("--tokasm-fuzz-examples", "0"),  # fuzzing is not what is tested here
    )
    assert result.ret == pytest.ExitCode.OK
    # Only the profiles asked for run.
    result.assert_outcomes(
        passed=_count({"required", "strict"}) + CHECKS - 1,
        skipped=_count({"incremental", "surrogates", "mappings", "scale"}) + 1,
    )


def test_unknown_profile_is_a_usage_error(project: pytest.Pytester) -> None:
    result = _conformance(project, "--tokasm-assembler", "good:Impl", "--tokasm-profile", "lax")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --tokasm-profile: unknown 'lax' (choose from required*"])


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--tokasm-timeout", "nan", "must be a finite number above 0, got 'nan'"),
        ("--tokasm-timeout", "-1", "must be a finite number above 0, got '-1'"),
        ("--tokasm-timeout", "0", "must be a finite number above 0, got '0'"),
        ("--tokasm-fuzz-examples", "-1", "must be 0 or more, got '-1'"),
    ],
)
def test_a_bad_number_is_a_usage_error_naming_its_option(
    project: pytest.Pytester, option: str, value: str, said: str
) -> None:
    """As ``tokasm check`` refuses it: NaN was an INTERNALERROR traceback, -1 timed out every
    call, 0 meant the default and a negative fuzz count skipped the fuzz item."""
    result = _conformance(
        project, "--tokasm-assembler", "good:Impl", "--tokasm-isolate", f"{option}={value}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*argument {option}: {said}*"])


def test_a_timeout_without_isolate_is_a_usage_error(project: pytest.Pytester) -> None:
    """In pytest's process no call can be cut short: the timeout was silently ignored."""
    result = _conformance(project, "--tokasm-assembler", "good:Impl", "--tokasm-timeout", "1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --tokasm-timeout needs --tokasm-isolate*"])


def test_suite_refuses_an_unknown_profile_as_the_option_does() -> None:
    """A misspelt 'strict' skipped the strict cases, and the suite passed."""
    with pytest.raises(UsageError, match=r"unknown 'strcit' \(choose from required, strict"):
        suite(ListJoinAssembler, profiles=["strict", "strcit"])


def test_without_assembler_a_usage_error(project: pytest.Pytester) -> None:
    result = _conformance(project, "-rs")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*no --tokasm-assembler given: run `python -m pytest --pyargs*"])


def test_xfail_list_makes_strict_expected_failures(project: pytest.Pytester) -> None:
    known = project.path / "known.txt"
    known.write_text("seed.ex*  # re-final is not idempotent yet\n", encoding="utf-8")
    result = _conformance(
        project,
        *("--tokasm-assembler", BROKEN, "--tokasm-assembler", "good:Impl"),
        *("--tokasm-xfail", str(known), "-k", "seed and example", "-rxXf"),
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(xfailed=1, failed=1)  # broken fails as listed; good passes: XPASS
    result.stdout.fnmatch_lines_random(
        [
            f"XFAIL *test_case[[]{BROKEN}/seed.example[]] - *known.txt:1 (re-final*",
            "FAILED *test_case[[]good:Impl/seed.example[]]*",
        ]
    )


def test_stale_xfail_line_is_a_usage_error(project: pytest.Pytester) -> None:
    known = project.path / "known.txt"
    known.write_text("seed.example\nno.such-case\n", encoding="utf-8")
    result = _conformance(project, "--tokasm-assembler", "good:Impl", "--tokasm-xfail", str(known))
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
    result = _conformance(project, "--tokasm-assembler", target)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --tokasm-assembler: target {target!r}: *{reason}*"])
    assert "Traceback" not in result.stderr.str()


def test_every_option_is_prefixed(pytester: pytest.Pytester) -> None:
    help_text = pytester.runpytest_inprocess("--help").stdout.str()
    group = help_text.split("tokasm conformance:\n", 1)[1].split("\n\n", 1)[0]
    options = [line.split()[0] for line in group.splitlines() if line.lstrip().startswith("--")]
    assert "--tokasm-assembler=MODULE:ATTR" in options
    assert all(option.startswith("--tokasm-") for option in options), options


def test_every_option_of_a_documented_pytest_command_exists(pytester: pytest.Pytester) -> None:
    """spec/CASES.md showed ``--assembler``: pytest refused it ("unrecognized arguments")."""
    root = Path(__file__).resolve().parents[1]
    documents = [root / "README.md", *(root / "docs").glob("*.md"), *(root / "spec").glob("*.md")]
    commands = [
        line
        for document in documents
        for line in document.read_text(encoding="utf-8").splitlines()
        if "python -m pytest" in line and "tokasm.conformance" in line
    ]
    assert len(commands) >= 3, commands
    options = re.compile(r"(?<![\w-])--[a-z][\w-]*")
    known = set(options.findall(pytester.runpytest_inprocess("--help").stdout.str()))
    unknown = {line: sorted(set(options.findall(line)) - known) for line in commands}
    assert not any(unknown.values()), unknown


def test_other_projects_own_options_and_tests_are_unaffected(pytester: pytest.Pytester) -> None:
    """A conftest defining ``--assembler`` (or ``--profile``) runs as it would without tokasm."""
    pytester.makeconftest(
        textwrap.dedent(
            """\
            def pytest_addoption(parser):
                parser.addoption("--assembler", default="theirs")
                parser.addoption("--profile", default="dev")
            """
        )
    )
    pytester.makepyfile(
        test_theirs=textwrap.dedent(
            """\
            def test_theirs(pytestconfig):
                assert pytestconfig.getoption("assembler") == "mine"
                assert pytestconfig.getoption("profile") == "dev"
            """
        )
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--assembler", "mine")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=1)


def test_import_tokasm_and_a_pytest_start_stay_light(pytester: pytest.Pytester) -> None:
    """``import tokasm`` loads no test tooling; tokasm's plugin adds nothing to a pytest start.

    Hypothesis's own plugin (installed with tokasm, which depends on hypothesis)
    is switched off here: it imports hypothesis at the end of every session.
    """
    probe = textwrap.dedent(
        """\
        import sys
        HEAVY = ("pytest", "_pytest", "hypothesis", "yaml", "jsonschema")
        def loaded():
            return sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY))
        import tokasm
        print("after import tokasm:", loaded())
        import pytest
        pytest.main(["--co", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"])
        print("after pytest start:", loaded())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert "after import tokasm: []" in done.stdout, done.stdout + done.stderr
    assert "after pytest start: ['_pytest', 'pytest']" in done.stdout, done.stdout


#: A slip that fails a handful of cases and a scale bug that fails a few long ones: enough
#: for the routes to disagree if they could; each more target only repeats the runs.
SUBTLE_MUTANTS = [
    "mutants:LosesDeepDelta",
    "mutants:EvictsPast256Open",
]


def _verdicts(junit: Path) -> dict[str, str]:
    """Item name -> failed, skipped or passed, from a JUnit file of the pytest route."""
    verdicts = {}
    for case in ET.parse(junit).iter("testcase"):
        failed = case.find("failure") is not None or case.find("error") is not None
        skipped = case.find("skipped") is not None
        verdicts[case.get("name", "")] = "failed" if failed else "skipped" if skipped else "passed"
    return verdicts


def _failures(verdicts: dict[str, str]) -> dict[str, set[str]]:
    """Target -> ids of its failed or errored cases, from ``_verdicts``."""
    found: dict[str, set[str]] = {target: set() for target in SUBTLE_MUTANTS}
    for name, verdict in verdicts.items():
        if verdict == "failed":
            target, case_id = name[len("test_case[") : -1].split("/")
            found[target].add(case_id)
    # The documented difference (the plugin's _FAILED_A_CASE): check fuzzes only a target that
    # passed every case; under xdist the fuzz item may not know, and find the bug again.
    return {target: failed - {"fuzz"} for target, failed in found.items()}


#: The cases of the run under xdist (``-k``): both mutants' failures among them (the long
#: stream, the interleaved messages), passes of every target, and skips (surrogates). The
#: workers still collect the whole corpus, and must agree on it; what they run is where the
#: time goes (three targets, and two more interpreters to start).
XDIST_WORDS = ("interleave", "long", "seed", "surrogates")


def _in_xdist_run(name: str) -> bool:
    return any(word in name.rsplit("/", 1)[-1] for word in XDIST_WORDS)


@pytest.mark.slow  # the whole corpus, three targets, three routes
def test_pytest_route_and_check_agree_serially_and_under_xdist(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same failing cases per target from ``tokasm check``, pytest in-process and pytest -n 2.

    The xdist run's workers are fresh processes that load the installed ``pytest11`` entry
    point, as a user's ``python -m pytest -n 2`` starts them. Check and the serial
    run cover the whole corpus; the xdist run gives every item of ``XDIST_WORDS`` the
    verdict the serial run gave it.
    """
    targets = [*SUBTLE_MUTANTS, "good:Impl"]
    monkeypatch.syspath_prepend(project.path)
    code = tokasm_main(["check", *targets, *QUICK, "--json", "check.json"])
    assert code == 1
    report = json.loads((project.path / "check.json").read_text(encoding="utf-8"))
    by_check = {
        run["target"]: {c["id"] for c in run["cases"] if c["outcome"] in ("failed", "errored")}
        for run in report["runs"]
    }
    assert by_check.pop("good:Impl") == set()
    assert all(by_check.values()), by_check  # every mutant is caught

    # The fuzz items are left out of the comparison (``_failures``), so they are not run:
    # shrinking a found bug for every mutant was most of this test's time. Nor is the cost
    # probe, whose timing is the cost tests' business (and hypothesis's own pytest plugin,
    # whose end-of-session import of hypothesis costs each pytest process 0.6 s).
    args = ["--pyargs", "tokasm.conformance", "-p", "no:cacheprovider"]
    args += ["--tokasm-fuzz-examples", "0"]
    args += [arg for target in targets for arg in ("--tokasm-assembler", target)]
    serial = project.runpytest_inprocess(*args, "-k", "not cost", "--junitxml=serial.xml")
    assert serial.ret == pytest.ExitCode.TESTS_FAILED
    serial_verdicts = _verdicts(project.path / "serial.xml")
    assert _failures(serial_verdicts) == by_check
    assert serial.parseoutcomes()["deselected"] == 3  # one probe per target

    selection = " or ".join(XDIST_WORDS)
    parallel = project.runpytest_inprocess(
        *args,
        *("-k", f"not cost and ({selection})", "-p", "no:hypothesispytest", "-n", "2"),
        "--junitxml=parallel.xml",
    )
    assert parallel.ret == pytest.ExitCode.TESTS_FAILED
    expected = {name: v for name, v in serial_verdicts.items() if _in_xdist_run(name)}
    # Each mutant fails some of these cases, every target passes some, and some are skipped.
    for target in SUBTLE_MUTANTS:
        assert _failures(expected)[target], target
    for target in targets:
        assert any(v == "passed" and f"[{target}/" in n for n, v in expected.items()), target
    assert "skipped" in expected.values()
    counts = {verdict: list(expected.values()).count(verdict) for verdict in set(expected.values())}
    assert parallel.parseoutcomes() == counts  # xdist's workers deselect: none reported
    parallel_verdicts = _verdicts(project.path / "parallel.xml")
    assert parallel_verdicts == expected
    assert _failures(parallel_verdicts) == {
        target: {case for case in failed if _in_xdist_run(f"{target}/{case}")}
        for target, failed in by_check.items()
    }
