"""``tokasm fuzz``: it finds and shrinks disagreements, and its printed case reproduces them.

The counterexample must be a real corpus case: valid against the schema,
accepted by the loader from a corpus folder, failing the broken target there
and passing every correct backend. Strings must survive the trip through
YAML exactly, so that is tested on its own with Hypothesis.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

import tokasm.fuzz
from helpers import QUICK, Ran, copy_spec, tokasm_cmd, tokasm_here, tokasm_main, user_folder
from mutants import MUTANTS
from tokasm.corpus._load import load_corpus, load_file
from tokasm.corpus._paths import CACHE_DIR_ENV, SPEC_DIR_ENV, spec_dir
from tokasm.corpus.steps import Apply, Get, Returns
from tokasm.errors import TargetFault
from tokasm.fuzz import (
    CHECK_EXAMPLES,
    HYPOTHESIS_STORAGE_ENV,
    SHRINK_BUDGET,
    FuzzReport,
    first_disagreement,
    fuzz,
    fuzz_phase,
)
from tokasm.fuzz import _search as fuzz_module
from tokasm.fuzz._cases import case_document, dump_case_file
from tokasm.fuzz._strategies import any_texts
from tokasm.implementations import BACKENDS, ListJoinAssembler
from tokasm.protocol._client import CommandTarget, python_testee_command
from tokasm.run.results import CaseResult
from tokasm.run.runner import run_case
from tokasm.run.targets import PythonTarget

if TYPE_CHECKING:
    from tokasm.corpus import Case
    from tokasm.corpus.steps import Step
    from tokasm.run.targets import Target

# Mutants the fuzzer must find within FOUND_WITHIN examples at seed 0; each
# breaks one rule (tests/mutants.py) the way real implementations do.
FOUND = ["case-insensitive-ids", "strips-final-text", "crlf-to-lf"]
FOUND_WITHIN = 300
#: The one of FOUND shrunk to its end: the same search shrinks every counterexample, and
#: this one's (ids, from 56 steps to 4) is the longest; the others are checked unshrunk.
SHRUNK = "case-insensitive-ids"
#: No time limit: Hypothesis shrinks to its own end, so the case depends on the seed alone,
#: never on the machine's load (a second of budget once left a longer case on a busy one).
SHRINK_SECONDS = None
FINDING_SECONDS = 0  # where only finding matters: the first failing example, unshrunk

# Design bugs (tests/mutants.py) that the corpus-free fuzz phase of ``tokasm check``
# (CHECK_EXAMPLES at seed 0) finds, and that the fuzzer of corpus 1.0.0 never did:
# sentinel deltas, special tokens and null-like texts, a held-back tail, an SDK key
# on a middle event, a read cache that counts reads, and an unknown-id memo.
REACHED = [
    "sse-done-sentinel",
    "strips-special-tokens",
    "null-texts-are-none",
    "holds-back-trailing-cr",
    "role-starts-message",
    "throttled-live-view",
    "memoizes-unknown-get",
]

# Breaks APPEND-EMPTY only: an empty non-final delta neither appends nor creates.
BROKEN = "mutants:DropsEmptyDelta"

GOOD = "from tokasm.implementations import ListJoinAssembler as Impl\n"


@pytest.fixture
def corpus_root(tmp_path: Path) -> Path:
    """An empty corpus folder with the real schema, SPEC.md and VERSION."""
    return copy_spec(tmp_path)


def _counterexample(target: str) -> tuple[dict[str, Any], str, CaseResult]:
    subject = PythonTarget(MUTANTS[target].factory, target)
    budget = SHRINK_SECONDS if target == SHRUNK else FINDING_SECONDS
    report = fuzz(subject, examples=FOUND_WITHIN, seed=0, shrink_budget=budget)
    found = report.counterexample
    assert found is not None, f"{target}: {report.summary()}"
    assert found.reproduced
    return found.document, found.yaml, found.result


@pytest.mark.parametrize("mutant", FOUND)
def test_counterexample_is_shrunk_schema_valid_and_reproduces(
    mutant: str, corpus_root: Path
) -> None:
    document, text, result = _counterexample(mutant)
    assert result.outcome in ("failed", "errored")
    (case,) = document["cases"]
    if mutant == SHRUNK:
        assert len(case["steps"]) <= 4, text  # shrunk: two operations, then the final reads
    schema = json.loads((corpus_root / "case.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(yaml.safe_load(text), schema)

    (corpus_root / "cases" / "found.yaml").write_text(text, encoding="utf-8")
    (loaded,) = load_corpus(corpus_root)  # ids checked against SPEC.md too
    broken = PythonTarget(MUTANTS[mutant].factory, mutant)
    assert run_case(broken, loaded).outcome in ("failed", "errored")
    for name, backend in BACKENDS.items():
        assert run_case(PythonTarget(backend, name), loaded).outcome == "passed", name


@pytest.mark.parametrize("mutant", REACHED)
def test_default_fuzz_phase_finds_design_bugs(mutant: str) -> None:
    subject = PythonTarget(MUTANTS[mutant].factory, mutant)
    report = fuzz(subject, examples=CHECK_EXAMPLES, seed=0, shrink_budget=FINDING_SECONDS)
    found = report.counterexample
    assert found is not None, report.summary()
    assert found.reproduced
    assert MUTANTS[mutant].requirement in found.document["cases"][0]["requirements"]


def test_checks_fuzz_phase_runs_the_cases_a_fuzz_run_tries_first() -> None:
    """``check`` draws its fuzz cases once, ahead (``planned``), and runs Hypothesis in a target's
    worker only to shrink a disagreement: the planned cases are the ones ``fuzz`` tries, so
    they find each bug it finds, and a correct backend passes them all."""
    tried: list[dict[str, Any]] = []

    def recorded(target: Target, case: Case) -> CaseResult:
        tried.append(case.document)
        return run_case(target, case)

    subject = PythonTarget(BACKENDS["list-join"], "list-join")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fuzz_module, "run_case", recorded)
        assert fuzz(subject, examples=CHECK_EXAMPLES, seed=0).counterexample is None
    planned = fuzz_module.planned(CHECK_EXAMPLES, False)
    assert [case["steps"] for case in planned] == [case["steps"] for case in tried]
    assert first_disagreement(subject, planned) is None
    for mutant in REACHED:
        broken = PythonTarget(MUTANTS[mutant].factory, mutant)
        assert first_disagreement(broken, planned) is not None, mutant


def test_a_disagreement_a_fuzz_run_does_not_find_again_is_shown_as_drawn() -> None:
    """A target failing a planned case, then none when Hypothesis searches again (it draws
    constants of the modules loaded where it runs), fails with that case as it was drawn:
    never a silent pass."""

    class FailsItsFirstRead(ListJoinAssembler):
        reads = 0

        def get(self, message_id: str) -> str | None:
            FailsItsFirstRead.reads += 1
            return "wrong" if FailsItsFirstRead.reads == 1 else super().get(message_id)

    (problem,) = fuzz_phase(PythonTarget(FailsItsFirstRead, "flaky"), (), CHECK_EXAMPLES)
    assert problem.startswith("fuzz disagrees with the model (a case drawn ahead, not shrunk)")
    assert "'wrong'" in problem, problem
    drawn = yaml.safe_load(problem.split("counterexample (save it as a corpus case):\n")[1])
    assert drawn["cases"][0]["steps"], problem


def test_macro_steps_shrink_to_a_short_plain_case() -> None:
    """A stream of reads and deltas (a macro) shrinks by its k, and prints as plain steps."""
    subject = PythonTarget(MUTANTS["throttled-live-view"].factory, "throttled")
    report = fuzz(subject, examples=FOUND_WITHIN, seed=0, shrink_budget=SHRINK_SECONDS)
    assert report.counterexample is not None
    steps = report.counterexample.document["cases"][0]["steps"]
    assert all(set(step) <= {"apply", "get", "read_since", "returns", "on"} for step in steps)
    assert sum("get" in step for step in steps) >= 4  # the 4th read is the first throttled
    assert len(steps) <= 12, report.counterexample.yaml


def test_fuzz_plays_the_callers_habits_in_process() -> None:
    """The fuzz path runs cases like the corpus does, reused dict and all (EVENT-OWNED)."""
    subject = PythonTarget(MUTANTS["keeps-events"].factory, "keeps-events")
    report = fuzz(subject, examples=CHECK_EXAMPLES, seed=0, shrink_budget=FINDING_SECONDS)
    assert report.counterexample is not None
    assert "EVENT-OWNED" in report.counterexample.result.message


class _FaultOnNul(PythonTarget):
    """A testee that dies whenever a delta carries NUL, as a C implementation might."""

    def perform_raw(self, step: Step) -> object:
        event = step.event if isinstance(step, Apply) else None
        if isinstance(event, dict) and "\x00" in event.get("delta", ""):
            raise TargetFault("testee exited with code -11")
        return super().perform_raw(step)


def test_testee_fault_is_a_disagreement_not_a_crash() -> None:
    faulty = _FaultOnNul(BACKENDS["list-join"], "faulty")
    report = fuzz(faulty, examples=FOUND_WITHIN, seed=0, shrink_budget=SHRINK_SECONDS)
    found = report.counterexample
    assert found is not None
    assert found.result.outcome == "errored"
    assert "testee fault" in found.result.message
    (case,) = found.document["cases"]
    assert case["steps"] == [
        {"apply": {"id": "m", "delta": "\x00"}, "returns": None},
        {"get": "m", "returns": "\x00"},  # every message is read at the end
    ]


def test_testee_that_crashes_once_is_reported_as_flaky(tmp_path: Path) -> None:
    faulty = Path(__file__).parent / "testees" / "faulty.py"
    marker = tmp_path / "crashed"
    argv = [sys.executable, str(faulty), "crash", "--at", "30", "--marker", str(marker)]
    subject = CommandTarget(argv)
    try:
        report = fuzz(subject, examples=100, seed=0, shrink_budget=SHRINK_SECONDS)
    finally:
        subject.close()
    found = report.counterexample
    assert found is not None
    assert "exited with code 3" in found.result.message
    assert not found.reproduced  # the respawned testee behaves; the report says so


def test_time_budget_ends_the_search() -> None:
    subject = PythonTarget(BACKENDS["list-join"], "list-join")
    report = fuzz(subject, examples=1_000_000, seed=0, budget=0.2)
    assert report.out_of_time  # however busy the machine: no count of examples asserted
    assert report.examples < 1_000_000
    assert report.counterexample is None
    assert "stopped by the time budget" in report.summary()


def test_check_phase_runs_only_after_a_clean_corpus() -> None:
    subject = PythonTarget(MUTANTS["nonfinal-returns-text"].factory, "ci")
    passed = CaseResult("x", "passed case", "passed")
    failed = CaseResult("y", "failed case", "failed", "why")
    assert fuzz_phase(subject, [passed, failed]) == ()
    assert fuzz_phase(subject, [passed], 0) == ()
    (problem,) = fuzz_phase(subject, [passed])  # check's own examples, drawn once a process
    assert problem.startswith("fuzz disagrees with the model")
    assert "\ncases:\n" in problem


def test_checks_fuzz_phase_calls_read_since_for_the_incremental_profile_only(
    project: Path,
) -> None:
    """In the target's worker, where a disagreement is shrunk too: a target breaking
    INC-READ-SINCE only passes the default fuzz phase, and fails the incremental one."""
    chosen = ("check", "mutants:ReadSinceUtf16", "-k", "seed.example", "--no-cost-probe")
    assert tokasm_here(project, *chosen).code == 0
    asked = tokasm_here(project, *chosen, "--profile", "incremental")
    assert asked.code == 1, asked.out + asked.err
    assert "fuzz disagrees with the model" in asked.out
    assert "shrunk counterexample" in asked.out
    assert "- read_since: {id: " in asked.out


# --- exact strings through YAML -------------------------------------------

EXOTIC = [
    "",
    " ",
    "trailing ",
    " leading",
    "\r",
    "\r\n",
    "\n",
    "a\n\nb\n",
    "\t",
    "\x00",
    "\x85",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\xa0",
    "e\u0301",
    "\U0001f469\u200d\U0001f4bb",
    "on",
    "yes",
    "No",
    "true",
    "null",
    "~",
    "0x1F",
    "1e3",
    "- x",
    "#",
    "a: b",
    "'",
    '"',
    "\\",
    "${i}",
    "$$",
    "{repeat: 3}",
    "ab" * 500,
    "x" + "abc" * 40 + "\r\n" * 40 + "y",
]


def _round_trip(delta: str, message_id: str, folder: Path) -> None:
    program = (Apply("a", None, {"id": message_id, "delta": delta}), Get("a", None, message_id))
    path = folder / "round-trip.yaml"
    path.write_text(dump_case_file(case_document(program, "round trip")), encoding="utf-8")
    (case,) = load_file(path)
    apply, get, _final_read = case.steps
    assert isinstance(apply, Apply)
    assert isinstance(get, Get)
    assert apply.event == {"id": message_id, "delta": delta}
    assert get.message_id == message_id
    assert get.expect == Returns(delta)


@pytest.mark.parametrize("text", EXOTIC, ids=repr)
def test_exotic_strings_survive_yaml_exactly(text: str, tmp_path: Path) -> None:
    _round_trip(text, text, tmp_path)


def test_runs_of_steps_print_as_repeat_steps(tmp_path: Path) -> None:
    """A long stream from a macro prints short, and loads back as the same plain steps."""
    delta, x, y = (Apply("a", None, {"id": "m", "delta": text}) for text in ("ab", "x", "y"))
    read = Get("a", None, "m")
    program = (read, *[delta] * 40, x, x, y, read)
    text = dump_case_file(case_document(program, "runs"))
    steps = yaml.safe_load(text)["cases"][0]["steps"]
    assert [step.get("repeat") for step in steps] == [None, 40, None, None, None, None, None]
    assert steps[1]["steps"] == [{"apply": {"id": "m", "delta": "ab"}, "returns": None}]
    path = tmp_path / "runs.yaml"
    path.write_text(text, encoding="utf-8")
    (case,) = load_file(path)
    plain = [*program, read]  # the final read of every message
    assert [step.describe() for step in case.steps] == [step.describe() for step in plain]
    assert case.steps[-1].expect == Returns("ab" * 40 + "xxy")


_repetitive = st.builds(
    lambda head, unit, count, tail: head + unit * count + tail,
    st.text(max_size=4),
    st.text(min_size=1, max_size=4),
    st.integers(min_value=0, max_value=80),
    st.text(max_size=4),
)


@given(delta=st.text() | _repetitive, message_id=st.text(max_size=6))
def test_any_string_survives_yaml_exactly(
    delta: str, message_id: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _round_trip(delta, message_id, tmp_path_factory.mktemp("yaml"))


# --- the command, as a user runs it ---------------------------------------
#
# In-process in the user's folder (``user_folder``): the command's output is the point,
# and the targets run in testee processes of their own; a real process where the program
# itself is (where it tells Hypothesis to write).


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An otherwise empty folder with a correct and a broken local module."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "good.py").write_text(GOOD, encoding="utf-8")
    shutil.copy(Path(__file__).with_name("mutants.py"), folder)
    return folder


def _fuzz(capsys: pytest.CaptureFixture[str], project: Path, *args: str) -> Ran:
    """``tokasm fuzz ARGS`` in-process in ``project``; argparse's own exit is the exit code."""
    with user_folder(project):
        try:
            return tokasm_main(capsys, "fuzz", *args)
        except SystemExit as exit_:
            out, err = capsys.readouterr()
            return Ran(exit_.code if isinstance(exit_.code, int) else 1, out, err)


def test_cli_prints_a_case_that_reproduces_the_failure(
    project: Path,
    corpus_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ran = _fuzz(capsys, project, BROKEN, "--seed", "4", "--save", "found.yaml")
    assert ran.code == 1, ran.err
    assert "disagrees with the model" in ran.out
    assert "Traceback" not in ran.err
    shutil.copy(project / "found.yaml", corpus_root / "cases" / "found.yaml")
    (case,) = load_corpus(corpus_root)
    assert "APPEND-EMPTY" in case.requirements
    monkeypatch.chdir(project)  # the testee imports mutants.py from the current folder
    subjects: list[Target] = [
        CommandTarget(python_testee_command(BROKEN)),
        PythonTarget(BACKENDS["list-join"], "list-join"),
    ]
    try:
        assert run_case(subjects[0], case).outcome == "failed"
        assert run_case(subjects[1], case).outcome == "passed"
    finally:
        for subject in subjects:
            subject.close()
    # What was printed is the saved file, comments and all.
    assert ran.out.startswith((project / "found.yaml").read_text(encoding="utf-8"))


#: A target that records, when it is loaded, where Hypothesis was told to write.
RECORDS_STORAGE = f"""\
import os, pathlib
pathlib.Path("storage.txt").write_text(os.environ.get({HYPOTHESIS_STORAGE_ENV!r}, "unset"))
from tokasm.implementations import ListJoinAssembler as Impl
"""


def test_the_program_keeps_hypothesis_files_in_tokasms_cache(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hypothesis caches its Unicode table and the constants of local source files in its
    folder, ``.hypothesis`` in the current one by default: the program has it write under
    tokasm's cache."""
    monkeypatch.delenv(HYPOTHESIS_STORAGE_ENV, raising=False)
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    ran = tokasm_cmd(project, "fuzz", "good:Impl", "--examples", "5", "--seed", "0")
    assert ran.code == 0, ran.out + ran.err
    assert not (project / ".hypothesis").exists()
    assert any((tmp_path / "cache" / "hypothesis").rglob("*")), "Hypothesis wrote nothing"


@pytest.mark.parametrize("choice", ["cache off", "chosen by the user"])
def test_where_hypothesis_writes_without_tokasms_cache(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, choice: str
) -> None:
    """With the cache off, a temporary folder, removed at the end; a folder the user chose
    is kept. (Told by what the target saw: no fuzzing, so no second
    of Hypothesis.)"""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    (project / "records.py").write_text(RECORDS_STORAGE, encoding="utf-8")
    if choice == "cache off":
        monkeypatch.setenv(CACHE_DIR_ENV, "")
        monkeypatch.delenv(HYPOTHESIS_STORAGE_ENV, raising=False)
    else:
        monkeypatch.setenv(HYPOTHESIS_STORAGE_ENV, str(tmp_path / "mine"))
    ran = tokasm_cmd(project, "check", "records:Impl", "-k", "append.basic", *QUICK)
    assert ran.code == 0, ran.out + ran.err
    seen = Path((project / "storage.txt").read_text(encoding="utf-8"))
    if choice == "cache off":
        assert seen.parent == scratch
        assert seen.name.startswith("tokasm-hypothesis-")
    else:
        assert seen == tmp_path / "mine"
    assert list(scratch.iterdir()) == []  # the temporary folder went at the end


def _drawn(strategy: st.SearchStrategy[str]) -> list[str]:
    drawn: list[str] = []

    @hypothesis_seed(7)
    @settings(
        max_examples=200, database=None, derandomize=False, suppress_health_check=list(HealthCheck)
    )
    @given(strategy)
    def record(text: str) -> None:
        drawn.append(text)

    record()
    return drawn


def test_the_fuzzers_texts_are_what_hypothesis_draws_for_any_text() -> None:
    """Every character but the surrogates, told by code point: seed for seed the texts
    ``st.text()`` draws, without the table of Unicode categories it builds first."""
    assert _drawn(any_texts(max_size=8)) == _drawn(st.text(max_size=8))


def test_cli_exit_codes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clean = _fuzz(capsys, project, "good:Impl", "--examples", "40", "--seed", "0")
    assert clean.code == 0, clean.err
    assert "good:Impl: no disagreement with the model (40 examples" in clean.out
    for args in (["missing:Impl"], []):
        bad = _fuzz(capsys, project, *args)
        assert bad.code == 2, args
        assert "Traceback" not in bad.err
        assert "error:" in bad.err


@pytest.mark.parametrize(
    ("target", "profile", "code"),
    [
        ("mutants:ReadSinceUtf16", (), 0),
        ("mutants:ReadSinceUtf16", ("--profile", "incremental"), 1),
        ("unusual:DictSubclassStore", ("--profile", "incremental"), 2),
    ],
    ids=["by-default", "asked-for", "asked-for-without-read-since"],
)
def test_cli_calls_read_since_for_the_incremental_profile_only(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    target: str,
    profile: tuple[str, ...],
    code: int,
) -> None:
    """The seed never names ``read_since``: a target breaking INC-READ-SINCE only agrees
    with the model by default, and disagrees when the profile is asked for, which a target
    without ``read_since`` cannot be."""
    shutil.copy(Path(__file__).with_name("unusual.py"), project)
    options = ("--in-process", "--examples", "50", "--seed", "0", "--shrink-budget", "0.01")
    ran = _fuzz(capsys, project, target, *options, *profile)
    assert ran.code == code, ran.out + ran.err
    if code == 2:
        assert "has no read_since" in ran.err


@pytest.mark.parametrize(
    ("given", "budget"), [((), SHRINK_BUDGET), (("--shrink-budget", "0.5"), 0.5)]
)
def test_cli_shrink_budget_reaches_the_fuzzer(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    given: tuple[str, ...],
    budget: float,
) -> None:
    asked: list[float] = []

    def recording(subject: Target, **options: Any) -> FuzzReport:
        asked.append(options["shrink_budget"])
        return fuzz(subject, **options)

    monkeypatch.setattr(fuzz_module, "fuzz", recording)
    ran = _fuzz(capsys, project, "good:Impl", "--examples", "1", "--seed", "0", *given)
    assert ran.code == 0, ran.err
    assert asked == [budget]
    refused = _fuzz(capsys, project, "good:Impl", "--shrink-budget", "0")
    assert refused.code == 2
    assert "--shrink-budget" in refused.err


def test_cli_fuzzes_a_protocol_testee(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    testee = f"{sys.executable} -m tokasm.protocol.testee"
    clean = _fuzz(
        capsys, project, "--cmd", f"{testee} list-join", "--examples", "30", "--seed", "0"
    )
    assert clean.code == 0, clean.out + clean.err
    # Every case this target fails has an empty delta: found, then hardly shrunk.
    broken = _fuzz(
        capsys, project, "--cmd", f"{testee} {BROKEN}", "--seed", "4", "--shrink-budget", "0.01"
    )
    assert broken.code == 1, broken.out + broken.err
    assert 'delta: ""' in broken.out


#: A target that records the process it runs in, and ends that process on an empty delta.
EXITS = """\
import os, pathlib, time
pathlib.Path("pid.txt").write_text(str(os.getpid()))
from tokasm.implementations import ListJoinAssembler

class Impl(ListJoinAssembler):
    def apply(self, event):
        if event.get("delta") == "":
            os._exit(0)
        return super().apply(event)
"""


@pytest.mark.parametrize(
    ("does", "timeout", "said"),
    [
        ("os._exit(0)", "5", "exited with code 0"),
        ("time.sleep(3600)", "0.5", "no response within 0.5 s"),  # each hang costs that
    ],
)
def test_a_python_target_runs_in_a_testee_process_of_its_own(
    project: Path, capsys: pytest.CaptureFixture[str], does: str, timeout: str, said: str
) -> None:
    """A target that ends its process or hangs costs one example: a disagreement, loaded
    back as any (hardly shrunk: how far it shrinks is not the point, and each hang shrinking
    tried would cost a timeout)."""
    (project / "exits.py").write_text(EXITS.replace("os._exit(0)", does), encoding="utf-8")
    args = ("--seed", "0", "--shrink-budget", "0.001", "--timeout", timeout)
    ran = _fuzz(capsys, project, "exits:Impl", *args)
    assert ran.code == 1, ran.err
    assert int((project / "pid.txt").read_text(encoding="utf-8")) != os.getpid()
    assert said in ran.out
    assert 'delta: ""' in ran.out
    assert "loaded back, this case fails the same way" in ran.out


def test_in_process_runs_the_target_in_tokasms_process(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "here.py").write_text(EXITS.replace("os._exit(0)", "pass"), encoding="utf-8")
    """What it finds in process: test_save_never_replaces_a_file_or_follows_a_symlink."""
    clean = _fuzz(capsys, project, "here:Impl", "--in-process", "--examples", "5", "--seed", "0")
    assert clean.code == 0, clean.err
    assert int((project / "pid.txt").read_text(encoding="utf-8")) == os.getpid()


def test_save_never_replaces_a_file_or_follows_a_symlink(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # What is saved is the point, not the search or the process: in process, and one search
    # whose report every run gets, so that each saves the same case under the same name.
    reports: list[FuzzReport] = []

    def search_once(target: Target, **options: Any) -> FuzzReport:
        reports[:] = reports or [fuzz(target, **options)]
        return reports[0]

    monkeypatch.setattr(tokasm.fuzz, "fuzz", search_once)
    args = (BROKEN, "--seed", "4", "--in-process")
    (project / "dangling.yaml").symlink_to(project / "nowhere.yaml")
    refused = _fuzz(capsys, project, *args, "--save", "dangling.yaml")
    assert refused.code == 2
    assert "exists" in refused.err
    assert not (project / "nowhere.yaml").exists()
    first = _fuzz(capsys, project, *args, "--save", "found/")
    assert first.code == 1, first.err
    assert "disagrees with the model" in first.out
    (saved,) = (project / "found").iterdir()
    saved.write_text("mine\n", encoding="utf-8")
    again = _fuzz(capsys, project, *args, "--save", "found/")
    assert again.code == 2
    assert "exists; pass --force" in again.err
    assert saved.read_text(encoding="utf-8") == "mine\n"
    forced = _fuzz(capsys, project, *args, "--save", "found/", "--force")
    assert forced.code == 1, forced.err
    assert forced.out.startswith(saved.read_text(encoding="utf-8"))


def test_check_reports_what_only_the_fuzzer_finds(
    project: Path,
    corpus_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The seed example alone misses a dropped empty delta; the fuzz phase does not.
    shutil.copy(spec_dir() / "cases" / "seed-example.yaml", corpus_root / "cases")
    monkeypatch.setenv(SPEC_DIR_ENV, str(corpus_root))
    with user_folder(project):
        found = tokasm_main(capsys, "check", BROKEN, "--no-cost-probe")  # check's own examples
    assert found.code == 1, found.out + found.err
    assert f"PROBLEM {BROKEN}: fuzz disagrees with the model" in found.out
    with user_folder(project):
        off = tokasm_main(capsys, "check", BROKEN, *QUICK)
    assert off.code == 0, off.out + off.err
