"""The JavaScript routes judge a JS class exactly as ``tokasm check --cmd`` does.

Three runners see the same classes: ``node --test`` with tokasm.js's suite
(in process, no Python), the 40-line loader of docs/export.md, and
``tokasm check --cmd`` over the protocol with tokasm.js's ``serve``. Their
per-case verdicts must agree, for the reference assembler and broken ones.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import QUICK, user_case_folder
from tokasm.cli import main
from tokasm.corpus._load import PROFILES
from tokasm.run.runner import DEFAULT_PROFILES

pytestmark = [
    pytest.mark.node,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
]

REPO = Path(__file__).resolve().parent.parent
NODE = REPO / "testees" / "node"
ASSEMBLERS = REPO / "tests" / "testees" / "js-assemblers.js"
CLASSES = {
    "reference": f"{NODE / 'token-assembler.js'}:TokenAssembler",
    "trims-text": f"{ASSEMBLERS}:TrimsText",
    "read-since-utf16": f"{ASSEMBLERS}:ReadSinceUtf16",
    "unusual-but-correct": f"{ASSEMBLERS}:UnusualButCorrect",
}
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


def node(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["node", *argv],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def node_test(export_dir: Path, target: str, **env: str) -> tuple[int, dict[str, str]]:
    """Exit code of ``node --test`` and each case's verdict from its TAP report;
    ``env`` sets TOKASM_PROFILES, TOKASM_XFAIL (by their lowercase names)."""
    done = node(
        "--test",
        "--test-reporter=tap",
        str(NODE / "conformance.test.js"),
        env={
            "TOKASM_EXPORT": str(export_dir),
            "TOKASM_ASSEMBLER": target,
            **{f"TOKASM_{key.upper()}": value for key, value in env.items()},
        },
    )
    verdicts = {
        case_id: {"SKIP": "skipped", "TODO": "xfailed"}.get(directive, "")
        or ("passed" if status == "ok" else "failed")
        for status, case_id, directive in _TAP.findall(done.stdout)
    }
    return done.returncode, verdicts


def check_cmd(tmp_path: Path, export_dir: Path, target: str, *profile: str) -> dict[str, str]:
    """Each exported case's verdict from ``tokasm check --cmd`` serving ``target`` with
    tokasm.js (the export leaves out the cases JSON cannot carry: docs/export.md)."""
    report = tmp_path / "report.json"
    argv = ["check", "-q", *QUICK, "--json", str(report), *profile]
    main([*argv, "--cmd", f"node {NODE / 'tokasm-testee.js'} {target}"])
    (run,) = json.loads(report.read_text(encoding="utf-8"))["runs"]
    exported = {path.stem for path in export_dir.glob("*.json")}
    return {
        c["id"]: "failed" if c["outcome"] == "errored" else c["outcome"]
        for c in run["cases"]
        if c["id"] in exported
    }


@pytest.mark.parametrize(
    ("name", "rule"),
    [("reference", None), ("unusual-but-correct", None), ("read-since-utf16", "INC-READ-SINCE")],
)
def test_node_test_and_check_cmd_give_the_same_verdicts(
    export_dir: Path, tmp_path: Path, name: str, rule: str | None
) -> None:
    code, in_process = node_test(export_dir, CLASSES[name], profiles=",".join(OPTIONAL))
    profiles = (f"--profile={p}" for p in OPTIONAL)
    assert in_process == check_cmd(tmp_path, export_dir, CLASSES[name], *profiles)
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


def test_expected_failures_are_todos_and_a_listed_case_that_passes_fails(
    small_export: Path, tmp_path: Path
) -> None:
    listed = tmp_path / "xfail.txt"
    listed.write_text("mine.sp?ces  # trims on purpose\n", encoding="utf-8")
    code, verdicts = node_test(small_export, CLASSES["trims-text"], xfail=str(listed))
    assert (code, verdicts) == (0, {"mine.spaces": "xfailed", "mine.greeting": "passed"})
    code, verdicts = node_test(small_export, CLASSES["reference"], xfail=str(listed))
    assert (code != 0, verdicts) == (True, {"mine.spaces": "failed", "mine.greeting": "passed"})
    code, verdicts = node_test(small_export, CLASSES["trims-text"])
    assert (code != 0, verdicts["mine.spaces"]) == (True, "failed")


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
    export_dir: Path, tmp_path: Path, name: str
) -> None:
    module, class_name = CLASSES[name].rsplit(":", 1)
    done = node(str(docs_loader(tmp_path)), str(export_dir), module, class_name)
    verdicts = dict(line.split(" ", 1)[::-1] for line in done.stdout.splitlines())
    assert verdicts == check_cmd(tmp_path, export_dir, CLASSES[name])
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
