"""Issue 11, items 4 to 8: no target, input file or closed pipe can lose a report or forge
a pass.

Every check runs the real ``tokasm`` command in a folder of its own holding the
user's modules, as a user would: in a subprocess where the test acts on the
process (signals it, closes the pipe it reads) or on start-up, in this process
(tokasm_here) where only its output, exit code and reports matter (a target's
worker and a --cmd testee are still processes of their own; what a target does
to its process is test_supervisor's hostile family). The pytest route runs
inline, but for the xdist test. Each test asserts the exit code, that no
traceback was printed, and that every report written is valid (JSON Schema,
JUnit parsed by ElementTree). Fuzzing is off (``--fuzz-examples 0``) and the
case selection small wherever they are not under test.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest

from helpers import (
    BROKEN,
    GOOD,
    QUICK,
    copy_spec,
    tokasm_cmd,
    tokasm_here,
    tokasm_started,
    user_case_folder,
)
from tokasm.corpus._load import load_corpus, load_file
from tokasm.corpus._paths import SPEC_DIR_ENV, spec_dir
from tokasm.corpus.steps import Apply
from tokasm.fuzz._cases import case_document, dump_case_file

if TYPE_CHECKING:
    from helpers import Ran

pytest_plugins = ["pytester"]

TESTEES = Path(__file__).resolve().parent / "testees"
ONE_CASE = ("-k", "seed.example", "--fuzz-examples", "0")
#: A check refused for its input before any case runs: in process, so that no worker
#: starts meanwhile for nothing.
REFUSED = (*ONE_CASE, "--in-process")

# Conforming, but hostile to the kit's own output.
HOSTILE = """\
import shutil, time
from tokasm.implementations import ListJoinAssembler

class RemovesReportFolder(ListJoinAssembler):
    def apply(self, event):
        shutil.rmtree("gone", ignore_errors=True)
        return super().apply(event)

class HugeError(ListJoinAssembler):
    def get(self, message_id):
        raise ValueError("\\x1b[2J\\ud83d" + "x" * 20_000_000)

class Sleeps(ListJoinAssembler):
    def apply(self, event):
        print("sleeping", flush=True)
        time.sleep(120)
        return super().apply(event)
"""

# No read_since: cannot run the incremental profile.
NO_READ_SINCE = """\
from tokasm.implementations import ListJoinAssembler

class Impl:
    def __init__(self):
        self._inner = ListJoinAssembler()
    def apply(self, event):
        return self._inner.apply(event)
    def get(self, message_id):
        return self._inner.get(message_id)
"""

# Returns None for every final: the fuzzer disagrees at once.
NEVER_FINAL = """\
from tokasm.implementations import ListJoinAssembler

class Impl(ListJoinAssembler):
    def apply(self, event):
        super().apply(event)
        return None
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    modules = {
        "good": GOOD,
        "broken": BROKEN,
        "hostile": HOSTILE,
        "noread": NO_READ_SINCE,
        "neverfinal": NEVER_FINAL,
    }
    for name, text in modules.items():
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    return folder


def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        (spec_dir() / "report.schema.json").read_text(encoding="utf-8")
    )
    return loaded


def _valid_json(path: Path) -> dict[str, Any]:
    """The report, after checking it is strict UTF-8 and valid against the published schema."""
    report: dict[str, Any] = json.loads(path.read_bytes().decode("utf-8", errors="strict"))
    jsonschema.validate(report, _schema())
    return report


def _valid_junit(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    return root


def _clean(ran: Ran, code: int) -> None:
    assert ran.code == code, (ran.code, ran.out[-2000:], ran.err[-2000:])
    assert "Traceback" not in ran.err + ran.out


def _no_temporaries(folder: Path) -> None:
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def _json_argument(text: str) -> str:
    """``text`` JSON-encoded (so any text, a lone surrogate too) and quoted for a shell."""
    return "'" + json.dumps(text).replace("'", "'\"'\"'") + "'"


def _hostile_testee(name: str, error: str | None = None, chars: int = 0) -> str:
    """A --cmd line for the testee announcing ``name`` and erroring every get with
    ``error`` (default: the name) padded to ``chars`` characters."""
    line = f"{sys.executable} {TESTEES / 'hostile_text.py'} {_json_argument(name)}"
    if error is not None:
        line += f" --error-json {_json_argument(error)}"
    return line + f" --error-chars {chars}"


# --- item 4: reports are never lost or half-written -------------------------------------


def test_a_closed_pipe_loses_no_report_and_keeps_the_verdict(project: Path) -> None:
    """``tokasm check chunked --json h.json --junit h.xml | head -1``."""
    reports = ("--json", "h.json", "--junit", "h.xml", "--markdown", "h.md")
    with tokasm_started(project, "check", "chunked", *ONE_CASE, *reports) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()  # what head -1 does
        err = process.stderr.read()
        code = process.wait(timeout=120)
    assert first.startswith("tokasm ")
    assert code == 0, err
    assert "Traceback" not in err
    assert _valid_json(project / "h.json")["conforms"] is True
    assert _valid_junit(project / "h.xml").get("failures") == "0"
    assert "PASSED" in (project / "h.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args",
    [
        (
            *("bench", "-q", "--only", "list-join", "--scenario", "stream_then_finalize"),
            *("--quick", "--sizes", "1000", "--repeats", "1", "--no-memory", "--json", "b.json"),
        ),
        ("list",),
        ("show", "seed.example"),
    ],
    ids=["bench", "list", "show"],
)
def test_a_reader_gone_at_once_costs_no_report_nor_the_status(
    project: Path, args: tuple[str, ...]
) -> None:
    """``tokasm bench --json b.json | true``: the reader is gone before the first line."""
    with tokasm_started(project, *args) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        process.stdout.close()
        err = process.stderr.read()
        code = process.wait(timeout=120)
    assert code == 0, err
    assert "Traceback" not in err
    if "--json" in args:
        assert json.loads((project / "b.json").read_text(encoding="utf-8"))


def _marker_target(project: Path) -> None:
    """A module that leaves a file behind when imported: proof a target was loaded."""
    (project / "marker.py").write_text(
        "from pathlib import Path\nPath('imported').touch()\n"
        "from tokasm.implementations import ListJoinAssembler as Impl\n",
        encoding="utf-8",
    )


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--junit", "missing/r.xml"], "missing"),
        (["--markdown", "."], "folder"),
        (["--json", "plain.txt/r.json"], "plain.txt"),
        (["--write-xfail", "nowhere/known.txt"], "nowhere"),
        (["--json", "same", "--junit", "same"], "same file"),
        (["--json", "-", "--junit", "-"], "stdout"),
        (["--xfail", "plain.txt", "--json", "plain.txt"], "same file"),
        (["--cases", "plain.txt", "--json", "plain.txt"], "a case file the run loads"),
        (["--cases", ".", "--markdown", "new.yaml"], "a case file the run loads"),
    ],
)
def test_a_bad_report_path_is_refused_before_the_run(
    project: Path,
    args: list[str],
    named: str,
) -> None:
    _marker_target(project)
    (project / "plain.txt").write_text("seed.example\n", encoding="utf-8")
    ran = tokasm_here(project, "check", "marker:Impl", *ONE_CASE, "--json", "ok.json", *args)
    _clean(ran, 2)
    assert named in ran.err
    assert len(ran.err.strip().splitlines()) == 1
    assert not (project / "imported").exists()  # refused before the target was even loaded
    assert not (project / "ok.json").exists()
    assert (project / "plain.txt").read_text(encoding="utf-8") == "seed.example\n"


def test_no_report_nor_export_replaces_or_adds_a_case_file_the_run_loads(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bundled corpus's (a clone's spec/cases) as --cases ones: --json spec/cases/ids.yaml
    replaced the corpus's file, and an export to a case file replaced it too."""
    root = project / "spec"
    shutil.copytree(spec_dir(), root)
    monkeypatch.setenv(SPEC_DIR_ENV, str(root))
    mine = user_case_folder(project) / "regressions.yaml"
    texts = {path: path.read_bytes() for path in [mine, *(root / "cases").glob("*.yaml")]}
    for args in (
        ("check", "good:Impl", *REFUSED, "--json", "spec/cases/ids.yaml"),
        ("check", "good:Impl", *REFUSED, "--markdown", "spec/cases/new.yaml"),
        ("export", "--format", "jsonl", "spec/cases/ids.yaml"),
        ("export", "--format", "jsonl", str(mine), "--cases", "my-cases/", "--no-bundled"),
    ):
        ran = tokasm_here(project, *args)
        _clean(ran, 2)
        assert "is a case file the run loads" in ran.err, args
    assert {path: path.read_bytes() for path in [mine, *(root / "cases").glob("*.yaml")]} == texts


def test_one_report_failing_at_the_end_does_not_stop_the_others(project: Path) -> None:
    (project / "gone").mkdir()
    ran = tokasm_here(
        project,
        "check",
        "hostile:RemovesReportFolder",
        *ONE_CASE,
        *("--junit", "gone/r.xml", "--json", "r.json", "--markdown", "r.md"),
    )
    _clean(ran, 2)
    assert "--junit" in ran.err
    assert "CONFORMANCE PASSED" in ran.out  # the verdict is still printed
    assert _valid_json(project / "r.json")["conforms"] is True
    assert (project / "r.md").read_text(encoding="utf-8").startswith("### tokasm conformance")
    _no_temporaries(project)


def test_a_report_is_replaced_whole_never_rewritten_in_place(project: Path) -> None:
    old = project / "r.json"
    old.write_text("old report\n", encoding="utf-8")
    os.link(old, project / "reader.json")  # a reader holding the old file
    ran = tokasm_here(project, "check", "good:Impl", *ONE_CASE, "--json", "r.json")
    _clean(ran, 0)
    assert (project / "reader.json").read_text(encoding="utf-8") == "old report\n"
    assert _valid_json(old)["conforms"] is True
    _no_temporaries(project)


def test_an_interrupted_run_leaves_no_stale_report(project: Path) -> None:
    for name in ("r.json", "r.xml", "r.md"):
        (project / name).write_text("from an earlier run\n", encoding="utf-8")
    reports = ("--json", "r.json", "--junit", "r.xml", "--markdown", "r.md")
    # In process, so that what the target prints reaches tokasm's stdout and says when.
    started = ("check", "hostile:Sleeps", "--in-process", *ONE_CASE, *reports)
    with tokasm_started(project, *started) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        for line in process.stdout:  # until the target says the run is under way
            if line == "sleeping\n":
                break
        process.send_signal(signal.SIGTERM)
        err = process.stderr.read()
        code = process.wait(timeout=60)
    assert code == 143, err  # EXIT_TERMINATED, as for a CI cancel
    assert "terminated" in err
    assert "Traceback" not in err
    assert not [p for p in ("r.json", "r.xml", "r.md") if (project / p).exists()]
    _no_temporaries(project)


@pytest.mark.parametrize("stdout", ["-", "/dev/stdout"])
def test_dash_sends_a_report_to_stdout_and_the_rest_to_stderr(project: Path, stdout: str) -> None:
    """``/dev/stdout`` is ``-``: a pipe it resolves to cannot be replaced (it was refused,
    "cannot create a file in its folder")."""
    ran = tokasm_here(project, "check", "broken:Impl", *ONE_CASE, "--json", stdout)
    _clean(ran, 1)
    report = json.loads(ran.out)
    jsonschema.validate(report, _schema())
    assert report["conforms"] is False
    assert "CONFORMANCE FAILED" in ran.err
    assert not (project / "-").exists()


def test_junit_has_times_and_a_name_stable_across_runtime_upgrades(project: Path) -> None:
    ran = tokasm_here(
        project,
        "check",
        "--cmd",
        _hostile_testee("tokasm-node (node v20.20.2)"),
        *("-k", "append.*", "--fuzz-examples", "0", "--junit", "r.xml", "--json", "r.json"),
    )
    _clean(ran, 1)  # the testee errors every get, on purpose
    root = _valid_junit(project / "r.xml")
    (suite,) = root
    assert suite.get("name") == "tokasm-node"
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["runtime"] == "node v20.20.2"
    assert properties["target"] == "tokasm-node (node v20.20.2)"
    cases = list(suite.iter("testcase"))
    assert cases
    assert {case.get("classname") for case in cases} == {"tokasm.tokasm-node"}
    assert all(float(case.get("time", "-1")) >= 0 for case in cases)
    assert float(suite.get("time", "-1")) >= sum(float(c.get("time", "0")) for c in cases) - 0.01
    assert float(root.get("time", "-1")) >= 0
    (run,) = _valid_json(project / "r.json")["runs"]
    assert (run["target_id"], run["runtime"]) == ("tokasm-node", "node v20.20.2")


def test_two_runtimes_of_one_testee_stay_apart_in_junit_and_json(project: Path) -> None:
    """Both were suite and class ``tokasm-node``: a CI keying cases on class and name merged
    one runtime's failures with the other's results."""
    names = ("tokasm-node (node v20.20.2)", "tokasm-node (node v22.1.0)")
    ran = tokasm_here(
        project,
        *("check", "--cmd", _hostile_testee(names[0]), "--cmd", _hostile_testee(names[1])),
        *("-k", "seed.example", "--fuzz-examples", "0", "--junit", "r.xml", "--json", "r.json"),
    )
    _clean(ran, 1)
    suites = list(_valid_junit(project / "r.xml"))
    assert [suite.get("name") for suite in suites] == list(names)
    classes = [{case.get("classname") for case in suite.iter("testcase")} for suite in suites]
    assert classes == [{f"tokasm.{name}"} for name in names]
    runs = _valid_json(project / "r.json")["runs"]
    assert [(run["target_id"], run["runtime"]) for run in runs] == [
        (names[0], "node v20.20.2"),
        (names[1], "node v22.1.0"),
    ]


# --- item 5: testee text is untrusted ---------------------------------------------------

EVIL_NAME = "broken\n*\n#\x1b[31mred\x1b[0m\u202e\ud83d\x00"


def test_a_hostile_hello_name_is_refused_cleanly(project: Path) -> None:
    """Newlines, ANSI, NUL and a lone surrogate in the name: refused at hello, exit 2."""
    ran = tokasm_here(
        project,
        *("check", "--cmd", _hostile_testee(EVIL_NAME), *ONE_CASE, "--json", "r.json"),
    )
    _clean(ran, 2)
    assert "\x1b" not in ran.err
    assert "\x00" not in ran.err
    assert not (project / "r.json").exists()


def test_hostile_errors_are_escaped_and_capped_everywhere(project: Path) -> None:
    """A 10 MB error and kind (under the protocol's line limit) with newlines, ANSI, NUL,
    bidi and a lone surrogate."""
    ran = tokasm_here(
        project,
        "check",
        "--cmd",
        _hostile_testee("hostile (python 3)", EVIL_NAME, chars=10_000_000),
        *("-k", "seed.example", "--fuzz-examples", "0"),
        *("--json", "r.json", "--junit", "r.xml", "--markdown", "r.md"),
        *("--write-xfail", "known.txt"),
    )
    _clean(ran, 1)
    for text in (ran.out, ran.err):
        assert "\x1b" not in text
        assert "\u202e" not in text
        assert "\x00" not in text
    assert "\\x1b[31m" in ran.out  # shown, escaped
    assert len(ran.out) < 100_000
    for name in ("r.json", "r.xml", "r.md", "known.txt"):
        data = (project / name).read_bytes()
        assert len(data) < 100_000, name
        text = data.decode("utf-8", errors="strict")
        assert "\x1b" not in text
        assert "\x00" not in text
    report = _valid_json(project / "r.json")
    (run,) = report["runs"]
    assert run["target_id"] == "hostile"
    message = run["cases"][0]["message"]
    assert "\\x1b[31m" in message
    assert len(message) < 20_000
    _valid_junit(project / "r.xml")
    # The target's name never becomes a line of the list, so it cannot excuse every case.
    entries = [
        line.partition("#")[0].strip()
        for line in (project / "known.txt").read_text(encoding="utf-8").splitlines()
    ]
    assert [entry for entry in entries if entry] == ["seed.example"]


def test_a_testee_that_takes_another_targets_name_is_told_apart_from_it(project: Path) -> None:
    """A failing testee announcing itself as the bundled list-join, checked beside it."""
    ran = tokasm_here(
        project,
        *("check", "list-join", "--cmd", _hostile_testee("list-join"), *ONE_CASE),
        *("--json", "r.json", "--junit", "r.xml"),
    )
    _clean(ran, 1)
    assert "ERRORED list-join #2::seed.example" in ran.out
    assert "1 of 2 targets nonconforming (list-join #2)" in ran.out
    runs = _valid_json(project / "r.json")["runs"]
    assert [(run["target"], run["implementation"]) for run in runs] == [
        ("list-join", "list-join"),
        ("list-join #2", "list-join"),
    ]
    suites = _valid_junit(project / "r.xml").iter("testsuite")
    assert [suite.get("name") for suite in suites] == ["list-join", "list-join #2"]


def test_a_20_mb_error_in_process_is_capped_everywhere(project: Path) -> None:
    reports = ("--json", "r.json", "--junit", "r.xml", "--markdown", "r.md")
    ran = tokasm_here(project, "check", "hostile:HugeError", *ONE_CASE, *reports)
    _clean(ran, 1)
    assert len(ran.out) < 100_000
    assert "\x1b" not in ran.out
    for name in ("r.json", "r.xml", "r.md"):
        data = (project / name).read_bytes()
        assert len(data) < 100_000, name
        assert b"\x1b" not in data
    _valid_json(project / "r.json")
    _valid_junit(project / "r.xml")


@pytest.mark.parametrize("glob", ["*", "**", "?*", "*?*", "*.*", "[a-z0-9]*"])
def test_an_xfail_glob_matching_every_case_is_refused(project: Path, glob: str) -> None:
    (project / "known.txt").write_text(f"{glob}  # everything\n", encoding="utf-8")
    ran = tokasm_here(project, "check", "broken:Impl", *REFUSED, "--xfail", "known.txt")
    _clean(ran, 2)
    assert "matches every case" in ran.err


# --- item 6: corpus and xfail input are bounded -----------------------------------------


def test_a_missing_spec_folder_is_a_clean_error_and_help_still_works(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--help and --version in a subprocess: they must work from start-up without a spec."""
    monkeypatch.setenv(SPEC_DIR_ENV, str(project / "no-such-spec"))
    helped = tokasm_cmd(project, "--help")
    _clean(helped, 0)
    assert "check" in helped.out
    versioned = tokasm_cmd(project, "--version")
    _clean(versioned, 0)
    ran = tokasm_here(project, "check", "good:Impl", *REFUSED)
    _clean(ran, 2)
    assert SPEC_DIR_ENV in ran.err
    assert "no-such-spec" in ran.err


CASE_HEAD = """\
description: hostile
cases:
  - id: hostile.case
    description: a hostile case
    requirements: [APPEND]
"""

#: A "billion laughs": each delta ten aliases of the one before, 10**9 texts in a few lines.
ALIAS_BOMB = "    steps:\n      - apply: {id: m, delta: &l0 lol}\n" + "".join(
    f"      - apply: {{id: m, delta: &l{n} {{concat: [{', '.join([f'*l{n - 1}'] * 10)}]}}}}\n"
    for n in range(1, 10)
)

#: 10**12 steps, and a text of 10**13 characters, in a few lines (7.9 GB, then a MemoryError).
NESTED_REPEATS = (
    "    steps:\n      - repeat: 1000000\n        steps:\n          - repeat: 1000000\n"
    "            steps: [{apply: {id: m, delta: x}, returns: null}]\n"
)
NESTED_TEXT = (
    "    steps:\n      - apply: {id: m, delta: {repeat: 1000000, text: {repeat: 1000000, "
    "text: xxxxxxxxxx}}}\n        returns: null\n"
)


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ("    ? [1, 2]\n    : unhashable\n    steps: []\n", "mapping key"),
        ("    steps: " + "[" * 5000 + "]" * 5000 + "\n", "not valid YAML"),
        (ALIAS_BOMB, "aliases stand for more than"),
        (NESTED_REPEATS, "steps, over the 1,000,000 a case may"),
        (NESTED_TEXT, "characters a text may have"),
    ],
    ids=["unhashable-key", "deep", "alias-bomb", "nested-repeats", "nested-text-repeats"],
)
def test_hostile_corpus_files_are_clean_errors(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    body: str,
    named: str,
) -> None:
    root = copy_spec(project)
    (root / "cases" / "hostile.yaml").write_text(CASE_HEAD + body, encoding="utf-8")
    monkeypatch.setenv(SPEC_DIR_ENV, str(root))
    ran = tokasm_here(project, "check", "good:Impl", *REFUSED)
    _clean(ran, 2)
    assert "hostile.yaml" in ran.err
    assert named in ran.err


def test_a_huge_case_file_is_refused_unread(project: Path) -> None:
    """A sparse file past the limit (one of 3 GiB was read whole, and took 6 GB to parse)."""
    with (project / "huge.yaml").open("wb") as sparse:
        sparse.truncate(17 << 20)
    ran = tokasm_here(project, "check", "good:Impl", *REFUSED, "--cases", "huge.yaml")
    _clean(ran, 2)
    assert "huge.yaml: cannot read: the file is larger than 16,777,216 bytes" in ran.err


def test_a_fifo_in_a_case_folder_is_refused_unopened(project: Path) -> None:
    """Opened, a named pipe without a writer waits for one for ever."""
    (project / "cases").mkdir()
    os.mkfifo(project / "cases" / "pipe.yaml")
    ran = tokasm_here(project, "check", "good:Impl", *REFUSED, "--cases", "cases")
    _clean(ran, 2)
    assert "pipe.yaml: cannot read: not a regular file" in ran.err


@pytest.mark.parametrize("source", ["/dev/zero", "sparse"])
def test_an_endless_or_huge_xfail_file_is_a_clean_error(project: Path, source: str) -> None:
    path = source
    if source == "sparse":
        with (project / "sparse.txt").open("wb") as sparse:
            sparse.truncate(17 << 20)
        path = "sparse.txt"
    ran = tokasm_here(project, "check", "good:Impl", *REFUSED, "--xfail", path)
    _clean(ran, 2)
    assert "larger than" in ran.err


def test_a_named_pipe_without_a_writer_as_the_xfail_file_reads_as_empty(project: Path) -> None:
    """Opened, it waited for a writer for ever (`--xfail <(grep ...)`, a pipe with one, reads
    as any file)."""
    os.mkfifo(project / "pipe.txt")
    ran = tokasm_here(project, "check", "good:Impl", *REFUSED, "--xfail", "pipe.txt")
    _clean(ran, 0)


def test_a_long_xfail_list_is_matched_once(project: Path) -> None:
    """40,000 lines (ids, globs and stale lines): finishes, every stale line is reported."""
    ids = sorted(case.id for case in load_corpus())
    lines = ["seed.example"]
    for number in range(1, 40_000):
        kind = number % 4
        if kind == 0:
            lines.append(ids[number % len(ids)])
        elif kind == 1:
            lines.append(ids[number % len(ids)][:6] + "*")
        else:
            lines.append(f"gone.case-{number}")
    (project / "long.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ran = tokasm_here(
        project,
        *("check", "good:Impl", *ONE_CASE, "--xfail", "long.txt", "--json", "r.json"),
    )
    _clean(ran, 1)
    (run,) = _valid_json(project / "r.json")["runs"]
    assert len(run["problems"]) == 20_000
    assert run["cases"][0]["outcome"] == "xpassed"


# --- item 7: silent passes are errors ---------------------------------------------------


def test_a_requested_profile_the_target_cannot_run_is_a_usage_error(project: Path) -> None:
    ran = tokasm_here(project, "check", "noread:Impl", "--profile", "incremental", *ONE_CASE)
    _clean(ran, 2)
    assert "noread:Impl" in ran.err
    assert "read_since" in ran.err
    # Not asked for by name: the incremental profile does not run (the seed never names it).
    default = tokasm_here(project, "check", "noread:Impl", *ONE_CASE)
    _clean(default, 0)


def _pytest_route(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest on the conformance suite, inline (with ``-n``, xdist's workers are processes)."""
    pytester.makepyfile(noread=NO_READ_SINCE, good=GOOD)
    return pytester.runpytest_inprocess(
        "--pyargs", "tokasm.conformance", "-p", "no:cacheprovider", *args
    )


def test_pytest_route_without_a_target_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = _pytest_route(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*no --tokasm-assembler given*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_pytest_route_without_a_target_fails_under_xdist(pytester: pytest.Pytester) -> None:
    """xdist workers cannot raise a usage error: the placeholder test fails instead."""
    result = _pytest_route(pytester, "-n", "1", "-p", "no:hypothesispytest")
    assert result.ret not in (pytest.ExitCode.OK, pytest.ExitCode.INTERNAL_ERROR)
    result.stdout.fnmatch_lines(["*no --tokasm-assembler given*"])
    assert "INTERNALERROR" not in result.stdout.str()


def test_pytest_route_refuses_a_profile_the_target_cannot_run(
    pytester: pytest.Pytester,
) -> None:
    result = _pytest_route(
        pytester, "--tokasm-assembler", "noread:Impl", "--tokasm-profile", "incremental"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*noread:Impl*read_since*"])


def test_pytest_route_refuses_a_match_everything_xfail_list(pytester: pytest.Pytester) -> None:
    (pytester.path / "known.txt").write_text("*\n", encoding="utf-8")
    result = _pytest_route(
        pytester, "--tokasm-assembler", "good:Impl", "--tokasm-xfail", "known.txt"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*matches every case*"])


# --- item 8: small losses ----------------------------------------------------------------


def test_write_xfail_keeps_the_reasons_people_wrote(project: Path) -> None:
    chosen = ("check", "broken:Impl", "-k", "after.*", "-k", "seed.*", *QUICK)
    first = tokasm_here(project, *chosen, "--write-xfail", "known.txt")
    _clean(first, 1)
    lines = (project / "known.txt").read_text(encoding="utf-8").splitlines()
    listed = [line.partition("#")[0].strip() for line in lines if not line.startswith("#")]
    assert "seed.example" in listed
    edited = [
        "seed.example  # re-final answers None: tracked in #123"
        if line.startswith("seed.")
        else line
        for line in lines
    ]
    (project / "known.txt").write_text("\n".join(edited) + "\n", encoding="utf-8")
    again = tokasm_here(
        project, *chosen, "--xfail", "known.txt", "--write-xfail", "known.txt", "--json", "r.json"
    )
    _clean(again, 0)
    assert (
        "seed.example  # re-final answers None: tracked in #123"
        in (project / "known.txt").read_text(encoding="utf-8").splitlines()
    )
    assert _valid_json(project / "r.json")["summary"]["xfailed"] == len(listed)


def test_write_xfail_keeps_the_lines_of_cases_the_run_did_not_check(project: Path) -> None:
    """A refresh with -k, or with a profile's cases skipped, dropped every line about the other
    cases: the next whole run failed on them, their reasons lost. A stale line still goes."""
    known = project / "known.txt"
    kept = ["seed.example  # tracked in #123", "strict.*  # we do not validate yet"]
    known.write_text("\n".join([*kept, "gone.case  # renamed long ago"]) + "\n", encoding="utf-8")
    chosen = ("-k", "after.*", "-k", "strict.*", *QUICK)  # strict's cases skipped: no --profile
    ran = tokasm_here(project, "check", "broken:Impl", *chosen, "--write-xfail", "known.txt")
    _clean(ran, 1)
    lines = known.read_text(encoding="utf-8").splitlines()
    assert set(kept) <= set(lines)
    assert not any(line.startswith("gone.") for line in lines)
    assert any(line.startswith("after.") for line in lines)  # today's failures
    wider = ("-k", "after.*", "-k", "seed.*", *QUICK, "--xfail", "known.txt")
    _clean(tokasm_here(project, "check", "broken:Impl", *wider), 0)  # seed.example: listed still


def test_fuzz_save_refuses_to_overwrite_without_force(project: Path) -> None:
    kept = project / "found.yaml"
    kept.write_text("# my notes\n", encoding="utf-8")
    # Seed 3: a counterexample that shrinks quickly (what is saved is the point, not the case).
    args = (
        *("fuzz", "neverfinal:Impl", "--seed", "3", "--examples", "50"),
        *("--shrink-budget", "0.01", "--save", "found.yaml"),
    )
    refused = tokasm_here(project, *args)
    _clean(refused, 2)
    assert "--force" in refused.err
    assert refused.out == ""  # refused before fuzzing
    assert kept.read_text(encoding="utf-8") == "# my notes\n"
    forced = tokasm_here(project, *args, "--force")
    _clean(forced, 1)
    saved = kept.read_text(encoding="utf-8")
    assert "cases:" in saved
    assert forced.out.startswith(saved)
    _no_temporaries(project)


@pytest.mark.parametrize("save", ["-", "no/such/folder/found.yaml", "plain.txt/", "plain.txt/x"])
def test_fuzz_save_path_is_checked_before_fuzzing(project: Path, save: str) -> None:
    (project / "plain.txt").write_text("not a folder\n", encoding="utf-8")
    ran = tokasm_here(project, "fuzz", "neverfinal:Impl", "--examples", "50", "--save", save)
    _clean(ran, 2)
    assert "--save" in ran.err
    assert ran.out == ""


def test_two_counterexamples_pasted_into_one_file_load(tmp_path: Path) -> None:
    """A counterexample with a step said twice in a row, written twice into one case file, as
    a user pastes what ``tokasm fuzz`` prints: no YAML anchor to clash."""
    step = Apply("a", None, {"id": "m", "delta": "x"})
    texts = [dump_case_file(case_document((step, step), f"twice {n}")) for n in (1, 2)]
    path = tmp_path / "pasted.yaml"
    pasted = texts[0] + "".join(texts[1].partition("cases:\n")[2])
    path.write_text(pasted, encoding="utf-8")
    assert len(load_file(path)) == 2


def test_cases_a_crash_stopped_are_blamed_on_no_rule(project: Path) -> None:
    """A target that dies at every read: its cases fault, then the circuit breaker errors the
    rest unrun. None of that says which rule it breaks."""
    (project / "crasher.py").write_text(
        "import os\nfrom tokasm.implementations import ListJoinAssembler\n\n"
        "class Impl(ListJoinAssembler):\n    def get(self, message_id):\n        os._exit(3)\n",
        encoding="utf-8",
    )
    ran = tokasm_here(project, "check", "crasher:Impl", *QUICK, "-k", "after.*")
    _clean(ran, 1)
    assert "circuit breaker" in ran.out
    assert "likely broken rules" not in ran.out
