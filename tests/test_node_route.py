"""The JavaScript routes judge a JS class exactly as ``tokasm check --cmd`` does.

Three runners see the same classes: ``node --test`` with tokasm.js's suite
(in process, no Python), the 40-line loader of docs/export.md, and
``tokasm check --cmd`` over the protocol with tokasm.js's ``serve``. Their
per-case verdicts must agree, for the reference assembler, an async one and
broken ones; the in-process route cannot be passed by ending the process
early, by a stale or match-all expected-failure list, nor by a class without
a cache (CACHE-FINAL).

The reference class meets the whole export on every route; the other classes, whose
point is how they answer, meet all of it but the long and stress cases (``light_export``):
megabytes of text per case, most of what a route costs, that test the routes' scale,
not a class's answers.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from helpers import QUICK, Ran, user_case_folder
from tokasm.cli import main
from tokasm.corpus import LARGE_PROFILES, PROFILES
from tokasm.run._cost import PROBE_ID
from tokasm.run.runner import DEFAULT_PROFILES

pytestmark = [
    pytest.mark.node,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
]

REPO = Path(__file__).resolve().parent.parent
NODE = REPO / "testees" / "node"
TESTEE = NODE / "tokasm-testee.js"
ASSEMBLERS = REPO / "tests" / "testees" / "js-assemblers.js"
CLASSES = {
    "reference": f"{NODE / 'token-assembler.js'}:TokenAssembler",
    "trims-text": f"{ASSEMBLERS}:TrimsText",
    "read-since-utf16": f"{ASSEMBLERS}:ReadSinceUtf16",
    "unusual-but-correct": f"{ASSEMBLERS}:UnusualButCorrect",
    "replays-deltas-since": f"{ASSEMBLERS}:ReplaysDeltasSince",
}
#: Classes for the behaviours below, written beside the test's files (see ``classes``).
TEST_CLASSES = f"""'use strict';
const {{ TokenAssembler }} = require({json.dumps(str(NODE / "token-assembler.js"))});

/** Answers with Promises, as an SDK that accumulates inside an async loop does. */
class Async extends TokenAssembler {{
  async apply(event) {{ await null; return super.apply(event); }}
  get(id) {{ return new Promise((resolve) => setImmediate(() => resolve(super.get(id)))); }}
  async readSince(id, offset) {{ return super.readSince(id, offset); }}
}}

let calls = 0;
/** Returns null for everything, and ends the process with code 0 at its second call. */
class ExitsNull {{
  apply() {{ if (++calls > 1) process.exit(0); return null; }}
  get() {{ if (++calls > 1) process.exit(0); return null; }}
}}

/** Ends the process with code 0 as it is constructed, before any test runs. */
class ExitsAtNew {{
  constructor() {{ process.exit(0); }}
}}

/** Fails, and sets process.exitCode back to 0 as the process ends. */
class ResetsExitCode {{
  apply() {{ process.once('exit', () => {{ process.exitCode = 0; }}); return null; }}
  get() {{ return null; }}
}}

/** A void apply: undefined where null is due. */
class VoidApply extends TokenAssembler {{
  apply(event) {{ return super.apply(event) ?? undefined; }}
}}

/** Joins its parts at every read, after final too (breaks CACHE-FINAL). */
class Uncached {{
  constructor() {{ this.messages = new Map(); }}
  apply(event) {{
    let message = this.messages.get(event.id);
    if (message === undefined) {{
      message = {{ parts: [], final: false }};
      this.messages.set(event.id, message);
    }}
    if (message.final) return event.final ? message.parts.join('') : null;
    if (event.delta !== undefined) message.parts.push(event.delta);
    message.final = event.final === true;
    return message.final ? message.parts.join('') : null;
  }}
  get(id) {{ return this.messages.has(id) ? this.messages.get(id).parts.join('') : null; }}
}}

module.exports = {{ Async, ExitsAtNew, ExitsNull, ResetsExitCode, Uncached, VoidApply }};
"""
#: Every profile that runs only when asked for (strict, and surrogates where the corpus has it).
OPTIONAL = [profile for profile in PROFILES if profile not in DEFAULT_PROFILES]
#: A TAP result line of a top-level test: ok/not ok, number, case id, directive.
_TAP = re.compile(r"^(not ok|ok) \d+ - (\S+)(?: # (SKIP|TODO)\b)?", re.MULTILINE)


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("export")
    assert main(["export", str(folder)]) == 0
    return folder


@pytest.fixture(scope="module")
def small_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export of two user cases only, for what does not need the whole corpus."""
    folder = user_case_folder(tmp_path_factory.mktemp("small"))
    out = folder.parent / "export"
    assert main(["export", "--no-bundled", "--cases", str(folder), str(out)]) == 0
    return out


#: The scale groups of the corpus: the cases ``light_export`` leaves out.
HEAVY = ("long.", "stress.")


@pytest.fixture(scope="module")
def light_export(export_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``export_dir`` without the long and stress cases, as links to its files."""
    folder = tmp_path_factory.mktemp("light")
    for path in export_dir.glob("*.json"):
        if not path.name.startswith(HEAVY):
            (folder / path.name).symlink_to(path)
    return folder


def user_cases(export: Path) -> Path:
    """The folder of user cases ``small_export`` was made from."""
    return export.parent / "my-cases"


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``TEST_CLASSES`` as a module file."""
    path = tmp_path_factory.mktemp("classes") / "classes.js"
    path.write_text(TEST_CLASSES, encoding="utf-8")
    return path


def node(
    *argv: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["node", *argv],
        env={**os.environ, **(env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def conformance(export_dir: Path, target: str, *runner: str, **env: str) -> Ran:
    """conformance.test.js run by ``runner`` (default ``node --test``) on ``target``;
    ``env`` sets TOKASM_PROFILES, TOKASM_XFAIL (by their lowercase names)."""
    done = node(
        *(runner or ("--test", "--test-reporter=tap")),
        str(NODE / "conformance.test.js"),
        env={
            "TOKASM_EXPORT": str(export_dir),
            "TOKASM_ASSEMBLER": target,
            **{f"TOKASM_{key.upper()}": value for key, value in env.items()},
        },
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def tap_verdicts(tap: str) -> dict[str, str]:
    """Each test's verdict from a TAP report of ``node --test``."""
    return {
        case_id: {"SKIP": "skipped", "TODO": "xfailed"}.get(directive, "")
        or ("passed" if status == "ok" else "failed")
        for status, case_id, directive in _TAP.findall(tap)
    }


def node_test(export_dir: Path, target: str, **env: str) -> tuple[int, dict[str, str]]:
    """Exit code of ``node --test`` and each test's verdict from its TAP report."""
    done = conformance(export_dir, target, **env)
    return done.code, tap_verdicts(done.out)


def check_json(target: str, *argv: str) -> dict[str, dict[str, str]]:
    """Each case of ``tokasm check ARGV --cmd`` serving ``target`` with tokasm.js, by id."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        main(["check", "-q", *argv, "--json", str(report), "--cmd", f"node {TESTEE} {target}"])
        (run,) = json.loads(report.read_text(encoding="utf-8"))["runs"]
    return {case["id"]: case for case in run["cases"]}


def check_cmd(export_dir: Path, target: str, *argv: str) -> dict[str, str]:
    """The verdict of each case of the export from ``tokasm check --cmd ARGV`` run on
    those cases only (-k; the export leaves out the cases JSON cannot carry:
    docs/export.md), and of each cost probe ARGV selects; no fuzzing."""
    selected = [arg for path in export_dir.glob("*.json") for arg in ("-k", path.stem)]
    return {
        case_id: "failed" if case["outcome"] == "errored" else case["outcome"]
        for case_id, case in check_json(target, "--fuzz-examples", "0", *selected, *argv).items()
    }


def target(name: str, classes: Path) -> str:
    """A class of ``CLASSES``, or else of ``TEST_CLASSES`` by its name."""
    return CLASSES.get(name, f"{classes}:{name}")


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        pytest.param("reference", None, marks=pytest.mark.slow),  # the whole export
        ("unusual-but-correct", None),
        ("Async", None),
        ("read-since-utf16", "INC-READ-SINCE"),
    ],
)
def test_node_test_and_check_cmd_give_the_same_verdicts(
    export_dir: Path, light_export: Path, classes: Path, name: str, rule: str | None
) -> None:
    """Async included: both routes await the Promises apply, get and readSince return. The
    reference class passes the cost probes over the protocol too."""
    export = export_dir if name == "reference" else light_export
    code, in_process = node_test(export, target(name, classes), profiles=",".join(OPTIONAL))
    assert in_process.pop(PROBE_ID) == "passed"
    profiles = [f"--profile={p}" for p in OPTIONAL if p not in LARGE_PROFILES]  # not exported
    probes = ("-k", "cost.*") if name == "reference" else ("--no-cost-probe",)
    over_cmd = check_cmd(export, target(name, classes), *profiles, *probes)
    if name == "reference":
        assert (over_cmd.pop(PROBE_ID), over_cmd.pop("cost.stream-linear")) == ("passed",) * 2
    assert in_process == over_cmd
    failed = [case for case, verdict in in_process.items() if verdict == "failed"]
    if rule is None:
        assert (code, failed) == (0, [])
        return
    assert code != 0, "node --test fails a broken assembler"
    rules = {
        case: json.loads((export_dir / f"{case}.json").read_text(encoding="ascii"))["requirements"]
        for case in failed
    }
    assert any(rule in listed for listed in rules.values()), rules


def test_a_read_since_of_another_meaning_is_called_only_when_the_profile_is_asked_for(
    light_export: Path,
) -> None:
    """The seed never names readSince: by default neither route calls it (both failed this
    class); asked for, the incremental profile fails it on both."""
    name = CLASSES["replays-deltas-since"]
    for asked in ((), ("incremental",)):
        code, in_process = node_test(light_export, name, profiles=",".join(asked))
        assert in_process.pop(PROBE_ID) == "passed"
        profiles = [f"--profile={profile}" for profile in asked]
        assert in_process == check_cmd(light_export, name, *profiles, "--no-cost-probe")
        failed = {case for case, verdict in in_process.items() if verdict == "failed"}
        incremental = {case for case in in_process if case.startswith("inc.")}
        assert (code != 0, failed) == ((True, incremental) if asked else (False, set()))


def test_expected_failures_are_todos_and_a_listed_case_that_passes_fails(
    small_export: Path, tmp_path: Path
) -> None:
    listed = tmp_path / "xfail.txt"
    listed.write_text("mine.sp?ces  # trims on purpose\n", encoding="utf-8")
    code, verdicts = node_test(small_export, CLASSES["trims-text"], xfail=str(listed))
    assert (code, verdicts) == (
        0,
        {"mine.spaces": "xfailed", "mine.greeting": "passed", PROBE_ID: "skipped"},
    )
    code, verdicts = node_test(small_export, CLASSES["reference"], xfail=str(listed))
    assert (code != 0, verdicts) == (
        True,
        {"mine.spaces": "failed", "mine.greeting": "passed", PROBE_ID: "passed"},
    )
    code, verdicts = node_test(small_export, CLASSES["trims-text"])
    assert (code != 0, verdicts["mine.spaces"]) == (True, "failed")


def test_a_stale_expected_failure_line_fails_the_run(small_export: Path, tmp_path: Path) -> None:
    listed = tmp_path / "xfail.txt"
    listed.write_text("mine.gone  # fixed long ago\ncost.cache-final\n", encoding="utf-8")
    done = conformance(small_export, CLASSES["reference"], xfail=str(listed))
    verdicts = tap_verdicts(done.out)
    assert done.code != 0
    assert (verdicts["xfail"], verdicts["mine.greeting"]) == ("failed", "passed")
    assert "'mine.gone' matches no case of the export" in done.out
    assert "'cost.cache-final' matches no case" not in done.out, "a cost check is a known id"


def test_an_expected_failure_glob_matching_every_case_is_refused(
    small_export: Path, tmp_path: Path
) -> None:
    listed = tmp_path / "xfail.txt"
    listed.write_text("*\n", encoding="utf-8")
    done = conformance(small_export, CLASSES["reference"], xfail=str(listed))
    assert done.code != 0
    assert "'*' matches every case of the export, so nothing could fail" in done.out + done.err


@pytest.mark.parametrize(
    ("name", "runner"),
    [("ExitsNull", ("--test",)), ("ExitsAtNew", ("--test",)), ("ResetsExitCode", ())],
    ids=["process.exit(0)", "process.exit(0) in the constructor", "process.exitCode = 0"],
)
def test_an_assembler_cannot_end_the_run_as_a_pass(
    small_export: Path, classes: Path, name: str, runner: tuple[str, ...]
) -> None:
    """Under node --test, and in a plain ``node`` run (which trusts the exit code)."""
    done = conformance(small_export, target(name, classes), *(runner or ("--test-reporter=tap",)))
    assert done.code == 1, done.out + done.err
    said = {
        "ExitsNull": "during 'mine.greeting' before every test finished: 3 never did "
        "(mine.greeting, mine.spaces, cost.cache-final)",
        "ExitsAtNew": "during 'suite()' before every test finished",
    }
    assert said.get(name, "") in done.out + done.err


def test_undefined_is_named_as_a_wrong_answer_on_both_routes(
    small_export: Path, classes: Path
) -> None:
    """Not a fault of the testee: the step fails, showing that it returned undefined."""
    shown = 'returned undefined (null means "no text")'
    done = conformance(small_export, target("VoidApply", classes))
    assert (done.code != 0, tap_verdicts(done.out)["mine.greeting"]) == (True, "failed")
    assert f"actual:   {shown}" in done.out
    over_cmd = check_json(
        target("VoidApply", classes),
        "--no-bundled",
        "--cases",
        str(user_cases(small_export)),
        *QUICK,
    )
    assert over_cmd["mine.greeting"]["outcome"] == "failed"
    assert over_cmd["mine.spaces"]["outcome"] == "passed", "the answers stay in step"
    assert f"actual:   {shown}" in over_cmd["mine.greeting"]["message"]


def test_a_class_without_a_cache_fails_cache_final_on_both_routes(
    small_export: Path, classes: Path
) -> None:
    code, verdicts = node_test(small_export, target("Uncached", classes))
    assert (code != 0, verdicts) == (
        True,
        {"mine.greeting": "passed", "mine.spaces": "passed", PROBE_ID: "failed"},
    )
    over_cmd = check_json(
        target("Uncached", classes),
        *("--no-bundled", "--cases", str(user_cases(small_export)), "--fuzz-examples", "0"),
    )
    assert over_cmd[PROBE_ID]["outcome"] == "failed"


def test_node_test_on_a_folder_with_the_testee_beside_the_tests_does_not_hang(
    small_export: Path, tmp_path: Path
) -> None:
    """node --test runs every .js file under test/, the testee too: serve() returns there."""
    tests = tmp_path / "test"
    tests.mkdir()
    shutil.copy(NODE / "tokasm.js", tests)
    reference = f"require({json.dumps(str(NODE / 'token-assembler.js'))}).TokenAssembler"
    (tests / "testee.js").write_text(
        f"require('./tokasm.js').serve({reference});\n", encoding="utf-8"
    )
    corpus = json.dumps(str(small_export))
    (tests / "tokasm.test.js").write_text(
        f"require('./tokasm.js').suite({reference}, {{ corpus: {corpus} }});\n", encoding="utf-8"
    )
    done = node("--test", "--test-reporter=tap", "test/", cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ok \d+ - mine\.greeting$", done.stdout, re.MULTILINE), done.stdout


def docs_loader(tmp_path: Path) -> Path:
    """The ``js`` block under "A complete loader" in docs/export.md, as a file."""
    text = (REPO / "docs" / "export.md").read_text(encoding="utf-8")
    block = text.split("## A complete loader", 1)[1].split("```js\n", 1)[1].split("```", 1)[0]
    assert len(block.splitlines()) <= 40, "the docs promise a loader of at most 40 lines"
    script = tmp_path / "run-export.js"
    script.write_text(block, encoding="utf-8")
    return script


@pytest.mark.parametrize("name", ["reference", "trims-text"])
def test_the_docs_loader_gives_the_same_verdicts(
    light_export: Path, tmp_path: Path, name: str
) -> None:
    module, class_name = CLASSES[name].rsplit(":", 1)
    done = node(str(docs_loader(tmp_path)), str(light_export), module, class_name)
    verdicts = dict(line.split(" ", 1)[::-1] for line in done.stdout.splitlines())
    assert verdicts == check_cmd(light_export, CLASSES[name], "--no-cost-probe")
    assert done.returncode == (0 if name == "reference" else 1), done.stderr


def test_every_export_of_tokasm_js_is_typed_in_tokasm_d_ts() -> None:
    exported = node("-p", f"Object.keys(require({str(NODE / 'tokasm.js')!r})).join(' ')")
    assert exported.returncode == 0, exported.stderr
    declared = set(
        re.findall(
            r"^export declare (?:function|class|const) (\w+)",
            (NODE / "tokasm.d.ts").read_text(encoding="utf-8"),
            re.MULTILINE,
        )
    )
    assert set(exported.stdout.split()) == declared


def test_a_newer_export_format_is_refused_not_misread(small_export: Path, tmp_path: Path) -> None:
    newer = tmp_path / "newer"
    newer.mkdir()
    for path in small_export.glob("*.json"):
        case = json.loads(path.read_text(encoding="ascii"))
        (newer / path.name).write_text(json.dumps({**case, "export_format": 2}), encoding="ascii")
    done = node(
        "--test",
        str(NODE / "conformance.test.js"),
        env={"TOKASM_EXPORT": str(newer), "TOKASM_ASSEMBLER": CLASSES["reference"]},
    )
    assert done.returncode != 0
    assert "export format 2; this tokasm.js reads 1" in done.stdout + done.stderr


@pytest.mark.parametrize("made", [False, True], ids=["missing", "an-empty-folder"])
def test_a_missing_export_is_named_with_the_command_that_makes_it(
    tmp_path: Path, made: bool
) -> None:
    """``TOKASM_EXPORT`` naming nothing, or a folder with no case (which passed, checking
    nothing): one line saying so and how to make it, not a stat error's stack."""
    missing = tmp_path / "tokasm-corpus"
    if made:
        missing.mkdir()
    done = node(
        "--test",
        str(NODE / "conformance.test.js"),
        env={"TOKASM_EXPORT": str(missing), "TOKASM_ASSEMBLER": CLASSES["reference"]},
    )
    said = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"no tokasm export at {missing}" in said
    assert f"tokasm export {missing}" in said
    assert "at Object.statSync" not in said


@pytest.mark.parametrize("made", [False, True], ids=["missing", "a-folder"])
def test_an_unreadable_xfail_file_is_named(small_export: Path, tmp_path: Path, made: bool) -> None:
    """Node's EISDIR names no path: the run fails naming TOKASM_XFAIL's file and why."""
    listed = tmp_path / "xfail.txt"
    if made:
        listed.mkdir()
    done = conformance(small_export, CLASSES["reference"], xfail=str(listed))
    assert done.code != 0
    why = "EISDIR" if made else "ENOENT"
    assert f"TOKASM_XFAIL={listed}: cannot read it ({why})" in done.out + done.err


def test_an_unknown_profile_fails_the_run_naming_it(small_export: Path) -> None:
    """As ``tokasm check --profile`` refuses it: a misspelt 'strict' skipped the strict cases,
    and the run passed."""
    done = conformance(small_export, CLASSES["reference"], profiles="strict,strcit")
    assert done.code != 0
    choices = ", ".join(PROFILES)
    assert f"unknown profile 'strcit' (choose from {choices})" in done.out + done.err


def test_a_profile_asked_for_that_the_class_cannot_run_fails_the_run(
    light_export: Path, classes: Path
) -> None:
    """As ``tokasm check --profile incremental`` refuses a target without read_since: every
    incremental case was skipped, and the run passed."""
    done = conformance(light_export, f"{classes}:Uncached", profiles="incremental")
    assert done.code != 0
    assert (
        "profile 'incremental' was asked for, but the class has no readSince, so it cannot "
        "run those cases; leave the profile out to check the class without them"
    ) in done.out + done.err
