"""Your own cases: ``--cases DIR`` beside the bundled corpus, through check, pytest and fuzz --save.

User case files follow the corpus's rules (schema, ids unique across both,
SPEC.md requirement ids); every refusal names the file, and reports say which
cases came from the user's folders.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from helpers import QUICK, USER_CASES, tokasm_here, user_case_folder
from tokasm.cli import main
from tokasm.corpus import load_corpus, spec_dir

pytest_plugins = ["pytester"]

#: Correct but for APPEND-EXACT: trims what a final returns.
TRIMS = """\
from tokasm.implementations import ListJoinAssembler

class Impl(ListJoinAssembler):
    def apply(self, event):
        text = super().apply(event)
        return None if text is None else text.strip()
"""


#: A check refused for its cases, before any target runs: in process, so no worker starts
#: meanwhile for nothing.
REFUSED = ("list-join", "--in-process")


@pytest.fixture
def mine(tmp_path: Path) -> Path:
    return user_case_folder(tmp_path)


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", "-q", "--fuzz-examples", "0", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_user_cases_run_after_the_bundled_corpus(
    mine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    chosen = ("-k", "seed.*", "-k", "mine.*", "--no-cost-probe", "--json", str(report))
    code, out, _ = check(capsys, "list-join", "--cases", str(mine), *chosen)
    assert code == 0, out
    ran = [
        case["id"] for case in json.loads(report.read_text(encoding="utf-8"))["runs"][0]["cases"]
    ]
    assert ran == ["seed.example", "mine.greeting", "mine.spaces"]
    code, out, _ = check(capsys, "list-join", "--cases", str(mine), "--no-bundled")
    assert code == 0, out
    assert ", 4 cases: 4 successes" in out  # the two cases and the two cost probes


def test_the_same_relative_case_folder_in_another_folder_is_read_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that changes folder (a host calling main twice) gets each folder's cases."""
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, case_id in ((first, "mine.first"), (second, "mine.second")):
        folder.mkdir()
        text = USER_CASES.replace("mine.greeting", case_id)
        (user_case_folder(folder) / "regressions.yaml").write_text(text, encoding="utf-8")
    found = []
    for folder in (first, second):
        monkeypatch.chdir(folder)
        corpus = load_corpus(user_cases=[Path("my-cases")])
        found.append({case.id for case in corpus if not case.bundled})
    assert found == [{"mine.first", "mine.spaces"}, {"mine.second", "mine.spaces"}]


def test_a_report_names_the_file_of_a_user_case(
    mine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "trims.py").write_text(TRIMS, encoding="utf-8")
    report = tmp_path / "report.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)  # the target's worker imports from the current folder
        code, out, _ = check(
            capsys, "trims:Impl", "--cases", str(mine), "-k", "*spaces*", "--json", str(report)
        )
    assert code == 1
    source = (mine / "regressions.yaml").as_posix()
    assert (
        f"FAILED trims:Impl::mine.spaces [APPEND-EXACT] - Trailing spaces are kept [from {source}]"
    ) in out
    document = json.loads(report.read_text(encoding="utf-8"))
    schema = json.loads((spec_dir() / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(document, schema)
    sources = {case["id"]: case["source"] for case in document["runs"][0]["cases"]}
    assert sources["mine.spaces"] == source
    assert {value for key, value in sources.items() if not key.startswith("mine.")} == {"bundled"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (USER_CASES.replace("mine.greeting", "append.basic"), "duplicate id, first defined in"),
        # a check's own ids: reports would name two checks alike
        (USER_CASES.replace("mine.greeting", "cost.cache-final"), "name a check's own probes"),
        (USER_CASES.replace("mine.greeting", "fuzz"), "name a check's own probes"),
        (USER_CASES.replace("[APPEND-EXACT]", "[NO-SUCH-RULE]"), "requirement ids not in SPEC.md"),
        (USER_CASES.replace("returns: null", "return: null", 1), "unknown step key 'return'"),
        ("cases: [\n", "not valid YAML"),
        (  # a step list holding itself
            USER_CASES.replace(
                "    steps:\n      - apply: {id: s",
                "    steps: &s\n      - steps: *s\n        repeat: 1\n      - apply: {id: s",
            ),
            "recursive",
        ),
    ],
)
def test_a_bad_user_file_is_a_usage_error_naming_it(
    mine: Path, capsys: pytest.CaptureFixture[str], text: str, problem: str
) -> None:
    bad = mine / "bad.yaml"
    bad.write_text(text, encoding="utf-8")
    code, _, err = check(capsys, *REFUSED, "--cases", str(mine))
    assert code == 2
    assert str(bad) in err
    assert problem in err


def test_a_case_file_given_twice_is_read_once(
    mine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Itself and its folder, or its folder twice: not a duplicate id "first defined in" the
    very same file."""
    (case_file,) = mine.glob("*.yaml")
    twice = ("--cases", str(mine), "--cases", str(case_file), "--cases", f"{mine}/.")
    code, out, err = check(capsys, "list-join", *twice, "--no-bundled", "--no-cost-probe")
    assert (code, err) == (0, ""), out
    assert ", 2 cases: 2 successes" in out


def test_ids_are_unique_across_user_folders_too(
    mine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "copy.yaml").write_text(USER_CASES, encoding="utf-8")
    code, _, err = check(capsys, *REFUSED, "--cases", str(mine), "--cases", str(other))
    assert code == 2
    assert "duplicate id" in err
    assert str(other / "copy.yaml") in err


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--no-bundled"], "--no-bundled needs at least one --cases"),
        (["--cases", "no/such/folder"], "no such case folder"),
    ],
)
def test_bad_case_options_are_usage_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], problem: str
) -> None:
    code, _, err = check(capsys, *REFUSED, *argv)
    assert code == 2
    assert problem in err


def test_an_empty_case_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = check(capsys, *REFUSED, "--cases", str(tmp_path))
    assert code == 2
    assert "no *.yaml case files" in err


def test_fuzz_saves_into_a_case_folder_that_check_then_runs(tmp_path: Path) -> None:
    """In process; the checks of what was saved name the folder by its full path (the
    corpus is loaded once per path and process: a relative name could find another
    test's folder)."""
    (tmp_path / "trims.py").write_text(TRIMS, encoding="utf-8")
    folder = tmp_path / "found"  # not there yet: the trailing slash makes it a folder
    # Seed 0 finds a trimmed delta; what is saved is the point, not how far it shrinks.
    fuzzing = ("fuzz", "trims:Impl", "--seed", "0", "--shrink-budget", "0.01")
    ran = tokasm_here(tmp_path, *fuzzing, "--save", "found/")
    assert ran.code == 1, ran.err
    (saved,) = folder.glob("*.yaml")
    assert saved.name.startswith("fuzz.")
    assert f"# saved to {folder.name}/{saved.name}" in ran.out
    cases = ("--cases", str(folder), "--no-bundled", *QUICK)
    again = tokasm_here(tmp_path, "check", "trims:Impl", *cases)
    assert again.code == 1, again.out
    assert f"FAILED trims:Impl::{saved.stem}" in again.out
    fixed = tokasm_here(tmp_path, "check", "list-join", *cases, "-q")
    assert fixed.code == 0, fixed.out


def test_the_pytest_route_runs_user_cases(pytester: pytest.Pytester, mine: Path) -> None:
    pytester.makepyfile(trims=TRIMS)
    result = pytester.runpytest_inprocess(
        "--pyargs",
        "tokasm.conformance",
        "-p",
        "no:cacheprovider",
        "--tokasm-assembler",
        "trims:Impl",
        "--tokasm-cases",
        str(mine),
        "--tokasm-no-bundled",
    )
    # The two cases (one finds the trimming), then the cost probe (skipped: the target
    # answers wrong, so its reads are not measured) and the fuzz phase (skipped, as tokasm
    # check skips it for a target that failed a case).
    result.assert_outcomes(passed=1, failed=1, skipped=2)
    result.stdout.fnmatch_lines(["*mine.spaces*"])
    bad = pytester.runpytest_inprocess(
        "--pyargs", "tokasm.conformance", "--tokasm-assembler", "trims:Impl", "--tokasm-no-bundled"
    )
    assert bad.ret == pytest.ExitCode.USAGE_ERROR


def test_list_and_show_take_the_case_options_as_check_does(
    mine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failing case of one's own was named by check, but neither listed nor shown."""
    assert main(["show", "mine.greeting", "--cases", str(mine)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("mine.greeting - ")
    assert f"source: {mine}" in out
    assert main(["list", "--cases", str(mine), "--no-bundled"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()[1:3]] == ["mine.greeting", "mine.spaces"]
    assert "4 of 4 checks" in out  # the two cases and the two cost probes
