"""``tokasm check`` as a user runs it: in an empty folder, local modules.

A real subprocess where the process is the point (a plain passing run, ``--help``,
the wheel); elsewhere the command runs in-process in that folder (``user_folder``),
the same exit code and text without the start-up.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import jsonschema
import pytest

import tokasm
from helpers import QUICK, Ran, copy_spec, tokasm_cmd, tokasm_here, tokasm_main, user_folder
from tokasm.corpus._load import load_corpus
from tokasm.corpus._paths import SPEC_DIR_ENV, spec_dir

REPO = Path(__file__).resolve().parent.parent
MUTANTS = Path(__file__).with_name("mutants.py")

GOOD = """\
from tokasm.implementations import ListJoinAssembler as Impl
"""

# Breaks AFTER-REFINAL only: a second final appends its delta before answering.
BROKEN = "mutants:RefinalAppendsDelta"

# Every run here leaves out fuzzing (tests/test_fuzz.py) and the cost probe
# (tests/test_cost.py), and most of the corpus, which is not what these tests test.

#: The one case a test needs (threads, xfail lists, the program's exit).
ONE_CASE = (*QUICK, "-k", "seed.example")
#: The cases the reports are tested on: failures of BROKEN (seed.example and after.* break
#: AFTER-REFINAL), passes, and skips (strict.*: a profile not asked for).
REPORTED = (*QUICK, "-k", "seed.example", "-k", "after.*", "-k", "strict.*")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An otherwise empty folder holding a good and a broken implementation."""
    (tmp_path / "good.py").write_text(GOOD, encoding="utf-8")
    shutil.copy(MUTANTS, tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Ran]:
    """One run of a broken and a good target writing every report, shared by the tests."""
    folder = tmp_path_factory.mktemp("failing")
    (folder / "good.py").write_text(GOOD, encoding="utf-8")
    shutil.copy(MUTANTS, folder)
    reports = ("--json", "report.json", "--junit", "junit.xml", "--markdown", "card.md")
    return folder, tokasm_here(folder, "check", BROKEN, "good:Impl", *REPORTED, *reports)


def test_correct_implementation_exits_0(project: Path) -> None:
    """The program's exit and framing, on one case: the same class (list-join) passes the
    whole corpus in the README's transcript of ``tokasm check`` (tests/test_docs.py)."""
    ran = tokasm_cmd(project, "check", "good:Impl", *ONE_CASE)
    assert ran.code == 0, ran.out + ran.err
    lines = ran.out.splitlines()
    assert lines[0] == f"tokasm {tokasm.__version__} (corpus {load_corpus().version}, protocol 1)"
    assert lines[-1].startswith("CONFORMANCE PASSED: 1 of 1 targets conform")
    assert lines[-1].endswith("0 expected failures, 0 unexpected failures")


def test_broken_implementation_exits_1_and_explains(failing_run: tuple[Path, Ran]) -> None:
    _, ran = failing_run
    assert ran.code == 1
    # id and description, the failing step, the event sent, expected and actual by repr
    assert (
        f"FAILED {BROKEN}::seed.example [NONFINAL-NONE, FINAL-RETURN, AFTER-REFINAL, "
        "FINAL-UNSEEN, GET-TEXT, GET-UNKNOWN] - The seed spec's example holds"
    ) in ran.out
    assert "step 3 on 'a': apply({'id': 'm', 'delta': 'ignored', 'final': True})" in ran.out
    assert "expected: 'hello'" in ran.out
    assert "actual:   'helloignored'" in ran.out
    assert "good:Impl::" not in ran.out
    assert ran.out.splitlines()[-1].startswith(
        f"CONFORMANCE FAILED: 1 of 2 targets nonconforming ({BROKEN})"
    )


BAD_TARGETS = {
    "missing module": ("no_such_module_xyz:Impl", "cannot import module 'no_such_module_xyz'"),
    "module raises on import": ("explodes:Impl", "RuntimeError: kaboom at import"),
    "missing attribute": ("good:Nope", "has no attribute 'Nope'"),
    "no colon": ("good", "expected MODULE:ATTR"),
    "empty attribute": ("good:", "expected MODULE:ATTR"),
    "not callable": ("oddities:NUMBER", "is a int, not a class or zero-argument factory"),
    "factory raises": ("oddities:failing_factory", "calling it raised ValueError('no assembler')"),
    "no apply/get": ("oddities:Hollow", "which has no apply() method"),
}

ODDITIES = """\
NUMBER = 3

def failing_factory():
    raise ValueError("no assembler")

class Hollow:
    pass
"""


def test_a_program_calling_main_keeps_its_own_threads(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread the host had before the run is not the target's: ``main`` returns and the
    host goes on (it used to end the whole process, as for a thread a target leaves)."""

    def ended(code: int) -> None:
        pytest.fail(f"the check ended its host process with os._exit({code})")

    monkeypatch.setattr(os, "_exit", ended)
    stop = threading.Event()
    host = threading.Thread(target=stop.wait, name="the host's own")
    host.start()
    try:
        ran = tokasm_here(project, "check", "good:Impl", *ONE_CASE)
    finally:
        stop.set()
        host.join()
    assert ran.code == 0, ran.out + ran.err


#: A correct target that leaves a non-daemon thread running until a byte arrives on the
#: file descriptor named by $LINGER_FD (as a lazily started thread pool would linger).
LINGERS = """\
import os
import threading
from tokasm.implementations import ListJoinAssembler

class Impl(ListJoinAssembler):
    started = False

    def __init__(self):
        super().__init__()
        if not Impl.started:
            Impl.started = True
            fd = int(os.environ["LINGER_FD"])
            threading.Thread(target=os.read, args=(fd, 1), name="the target's").start()
"""


def test_main_called_in_process_returns_though_the_target_left_a_thread(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the ``tokasm`` program ends its process for a lingering thread: a host calling
    ``main`` (a test, a script running several checks) gets the exit code back."""

    def ended(code: int) -> None:
        pytest.fail(f"the check ended its host process with os._exit({code})")

    monkeypatch.setattr(os, "_exit", ended)
    (project / "lingers.py").write_text(LINGERS, encoding="utf-8")
    read_end, write_end = os.pipe()
    monkeypatch.setenv("LINGER_FD", str(read_end))
    try:
        ran = tokasm_here(project, "check", "lingers:Impl", *ONE_CASE)
    finally:
        os.write(write_end, b"x")  # the target's thread returns
        for thread in threading.enumerate():
            if thread.name == "the target's":
                thread.join()
        os.close(read_end)
        os.close(write_end)
    assert ran.code == 0, ran.out + ran.err


@pytest.mark.parametrize(("target", "reason"), BAD_TARGETS.values(), ids=list(BAD_TARGETS))
def test_bad_target_exits_2_without_traceback(
    project: Path, target: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "explodes.py").write_text('raise RuntimeError("kaboom at import")\n', "utf-8")
    (project / "oddities.py").write_text(ODDITIES, encoding="utf-8")
    with user_folder(project):
        ran = tokasm_main(capsys, "check", "good:Impl", target)
    assert ran.code == 2
    assert f"target {target!r}" in ran.err
    assert reason in ran.err
    assert "Traceback" not in ran.err + ran.out
    assert "CONFORMANCE" not in ran.out  # nothing ran: targets are loaded before any case


def test_reports_are_written_and_valid(failing_run: tuple[Path, Ran]) -> None:
    project, ran = failing_run
    assert ran.code == 1
    report = json.loads((project / "report.json").read_text(encoding="utf-8"))
    schema = json.loads((spec_dir() / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, schema)
    assert report["conforms"] is False
    assert [run["target"] for run in report["runs"]] == [BROKEN, "good:Impl"]
    broken = report["runs"][0]
    failed = {case["id"] for case in broken["cases"] if case["outcome"] == "failed"}
    assert "seed.example" in failed
    assert broken["summary"]["failed"] == len(failed)
    assert {case["outcome"] for case in broken["cases"]} == {"passed", "failed", "skipped"}

    suites = ET.parse(project / "junit.xml").getroot()
    assert [suite.get("name") for suite in suites] == [BROKEN, "good:Impl"]
    failures = [case.get("name") for case in suites[0] if case.find("failure") is not None]
    assert set(failures) == failed

    card = (project / "card.md").read_text(encoding="utf-8")
    assert card.startswith("### tokasm conformance: FAILED")
    assert f"| `{BROKEN}` |" in card
    assert "`seed.example`" in card


def test_xfail_list_round_trip(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with user_folder(project):
        first = tokasm_main(capsys, "check", BROKEN, "--write-xfail", "known.txt", *ONE_CASE)
    assert first.code == 1
    listed = (project / "known.txt").read_text(encoding="utf-8")
    assert "\nseed.example  # failed: step 3 on 'a'" in listed

    with user_folder(project):
        again = tokasm_main(capsys, "check", BROKEN, "--xfail", "known.txt", *ONE_CASE)
    assert again.code == 0, again.out
    assert "CONFORMANCE PASSED" in again.out
    assert " 0 unexpected failures" in again.out
    assert " 0 expected failures" not in again.out

    # The fixed implementation passes the listed cases: the list is now wrong.
    with user_folder(project):
        fixed = tokasm_main(capsys, "check", "good:Impl", "--xfail", "known.txt", *ONE_CASE)
    assert fixed.code == 1
    assert "XPASSED good:Impl::seed.example" in fixed.out


def test_stale_xfail_line_fails_the_run(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "known.txt").write_text("no.such.case.*  # fixed long ago\n", encoding="utf-8")
    with user_folder(project):
        ran = tokasm_main(capsys, "check", "good:Impl", "--xfail", "known.txt", *ONE_CASE)
    assert ran.code == 1  # a line is stale if it matches no case of the corpus, run or not
    assert "known.txt:1: 'no.such.case.*' matches no case" in ran.out


def test_unreadable_xfail_file_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with user_folder(project):
        ran = tokasm_main(capsys, "check", "good:Impl", "--xfail", "missing.txt")
    assert ran.code == 2
    assert "missing.txt" in ran.err
    assert "Traceback" not in ran.err


@pytest.mark.parametrize(
    ("target", "cases", "why"),
    [
        ("good:Impl", "strict.*", "profile 'strict' not selected (use --profile strict)"),
        ("good:Impl", "inc.*", "profile 'incremental' not selected (use --profile incremental)"),
    ],
    ids=["a-profile-not-asked-for", "read_since-not-called-by-default"],
)
def test_a_selection_of_cases_none_of_which_runs_is_a_usage_error(
    project: Path, target: str, cases: str, why: str
) -> None:
    """As a -k matching nothing is: every case was skipped, and the run passed."""
    chosen = ("-k", cases, *QUICK, "--in-process")
    ran = tokasm_here(project, "check", target, *chosen)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err == f"tokasm check: error: nothing selected runs on {target}: {why}\n"


def test_a_profile_asked_for_runs_the_selection_of_its_cases(project: Path) -> None:
    chosen = ("-k", "strict.*", *QUICK, "--in-process", "--profile", "strict")
    # they run (and fail: it does not validate events)
    assert tokasm_here(project, "check", "good:Impl", *chosen).code == 1


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("check", "good:Impl", *ONE_CASE, "--strict-cost"), "--strict-cost needs the cost probe"),
        (("fuzz", "good:Impl", "--examples", "1", "--force"), "--force needs --save"),
    ],
)
def test_an_option_that_needs_one_left_out_is_refused(
    project: Path, args: tuple[str, ...], said: str
) -> None:
    """It was silently ignored: no cost probe to fail, no file to replace."""
    ran = tokasm_here(project, *args, "--in-process")
    assert (ran.code, ran.out) == (2, "")
    assert said in ran.err


def test_help_answers_ci_questions(tmp_path: Path) -> None:
    ran = tokasm_cmd(tmp_path, "check", "--help")
    assert ran.code == 0
    for needle in ("exit codes:", "--json PATH", "--junit PATH", "--markdown PATH", "--xfail FILE"):
        assert needle in ran.out


def test_wheel_carries_corpus_and_runs_from_anywhere(tmp_path: Path) -> None:
    """The non-editable layout: corpus as tokasm/_spec, py.typed, and a working check.

    The wheel is unpacked onto PYTHONPATH (ahead of the editable install), which
    is what installing it does, without the cost of a fresh virtualenv.
    """
    if not (REPO / "pyproject.toml").is_file():
        pytest.skip("not running from a source checkout")
    # The build backend's own PEP 517 hook, as any front end calls it (hatchling is in the
    # test extra): offline, and without pip's start-up and an isolated build environment.
    build = "import sys, hatchling.build as backend; backend.build_wheel(sys.argv[1])"
    subprocess.run(
        [sys.executable, "-c", build, tmp_path],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("tokasm-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    cases = {f"tokasm/_spec/cases/{p.name}" for p in (REPO / "spec" / "cases").glob("*.yaml")}
    assert {"tokasm/_spec/VERSION", "tokasm/py.typed", *cases} <= names

    installed = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(installed)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "good.py").write_text(GOOD, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != SPEC_DIR_ENV}
    env["PYTHONPATH"] = str(installed)
    where = subprocess.run(
        [sys.executable, "-c", "from tokasm.corpus._paths import spec_dir; print(spec_dir())"],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()) == installed / "tokasm" / "_spec"
    probe = subprocess.run(  # every case file loads; one case runs
        [sys.executable, "-m", "tokasm", "check", "good:Impl", *ONE_CASE],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    assert "CONFORMANCE PASSED" in probe.stdout


def test_a_check_run_in_process_leaves_the_garbage_collector_as_it_found_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The corpus is frozen out of the collector's walks during the run only: a program that
    calls ``main`` again and again must not keep each run's garbage for good."""
    ran = tokasm_main(capsys, "check", "chunked", "-k", "append.basic", *QUICK)
    assert ran.code == 0, ran.out
    assert gc.get_freeze_count() == 0
    gc.freeze()  # a program's own: a check must not thaw it (freed objects leave the count)
    try:
        assert tokasm_main(capsys, "check", "chunked", "-k", "append.basic", *QUICK).code == 0
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_a_relative_spec_folder_is_read_again_in_another_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``TOKASM_SPEC_DIR=spec`` names the current folder's spec: SPEC.md's rules too."""
    for name in ("a", "b"):
        root = copy_spec(tmp_path / name)
        shutil.copy(spec_dir() / "cases" / "seed-example.yaml", root / "cases")
    spec_b = tmp_path / "b" / "spec"
    with (spec_b / "SPEC.md").open("a", encoding="utf-8") as rules:
        rules.write("\n- **ASM-NEW** (behaviour): a rule only folder b has.\n")
    case = (spec_b / "cases" / "seed-example.yaml").read_text(encoding="utf-8")
    (spec_b / "cases" / "seed-example.yaml").write_text(
        case.replace("requirements: [", "requirements: [ASM-NEW, ", 1), encoding="utf-8"
    )
    monkeypatch.setenv(SPEC_DIR_ENV, "spec")
    for name in ("a", "b"):
        monkeypatch.chdir(tmp_path / name)
        ran = tokasm_main(capsys, "check", "chunked", *QUICK)
        assert ran.code == 0, (name, ran.out, ran.err)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux's /proc")
def test_a_failed_run_in_process_gives_back_what_it_held_for_its_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Descriptors held for the reports from before any target loads are given back however
    the run ends, a refusal included: a program may call ``main`` again and again."""
    report = str(tmp_path / "r.json")

    def open_descriptors() -> int:
        return len(list(Path("/proc/self/fd").iterdir()))

    before = open_descriptors()
    for argv in (
        ("check", "nosuch:Thing", "--json", report),
        ("check", "chunked", "-k", "zzz-matches-nothing", "--json", report),
        ("bench", "nosuch:Thing", "--only", "--quick", "--json", report),
    ):
        assert tokasm_main(capsys, *argv).code == 2
    assert open_descriptors() == before


def test_an_unknown_option_is_told_with_the_subcommands_usage(tmp_path: Path) -> None:
    ran = tokasm_cmd(tmp_path, "check", "chunked", "--no-such-option")
    assert ran.code == 2
    assert ran.err.startswith("usage: tokasm check"), ran.err
    assert "tokasm check: error: unrecognized arguments: --no-such-option" in ran.err


def test_a_target_that_needs_arguments_is_pointed_at_a_factory(tmp_path: Path) -> None:
    (tmp_path / "needs.py").write_text("class NeedsArg:\n    def __init__(self, x): pass\n")
    ran = tokasm_cmd(tmp_path, "check", "needs:NeedsArg")
    assert ran.code == 2
    assert "zero-argument factory" in ran.err


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("check", "good:Impl", *ONE_CASE, "--json", "r.json"), 0),
        (("check", BROKEN, *ONE_CASE, "--json", "r.json"), 1),
        (("check", "--no-such-option"), 2),
        (("list",), 0),
        (("--version",), 0),
    ],
    ids=["conforms", "fails", "usage", "list", "version"],
)
def test_a_closed_stdout_keeps_the_exit_status_and_the_reports(
    project: Path, args: tuple[str, ...], code: int
) -> None:
    """Started with stdout closed (``>&-``), as a CI step that wants only the status may be."""
    program = [sys.executable, "-m", "tokasm", *args]
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *program],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    if "--json" in args:
        report = json.loads((project / "r.json").read_text(encoding="utf-8"))
        assert report["conforms"] == (code == 0)


#: The smallest bench sweep: one backend, one scenario, three tiny sizes, one round.
TINY_BENCH = (
    *("bench", "--only", "list-join", "--scenario", "reread_unchanged", "--no-memory", "-q"),
    *("--quick", "--sizes", "40,80,160", "--repeats", "1"),
)


def test_bench_refuses_two_reports_naming_one_file_before_measuring(project: Path) -> None:
    """As check refuses them: the last written replaced the other (a plot over the JSON)."""
    ran = tokasm_here(project, *TINY_BENCH, "--json", "r.out", "--markdown", "./r.out")
    assert (ran.code, ran.out) == (2, "")
    assert ran.err == "tokasm bench: error: --markdown and --json name the same file\n"


def test_bench_sends_a_dash_report_to_stdout_and_the_tables_to_stderr(project: Path) -> None:
    """As check does with '-': it wrote a file named '-'."""
    ran = tokasm_here(project, *TINY_BENCH, "--json", "-")
    assert ran.code == 0, ran.err
    assert json.loads(ran.out)["results"]
    assert "reread_unchanged:" in ran.err
    assert not (project / "-").exists()
