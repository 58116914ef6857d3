"""Reports: the JSON matches its published schema, JUnit parses, Markdown pastes cleanly."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import jsonschema
import pytest

import tokasm
from tokasm.corpus._paths import spec_dir
from tokasm.errors import ProtocolError
from tokasm.report import (
    Progress,
    json_report,
    json_text,
    junit_text,
    markdown_report,
    progress_wanted,
    render_card,
    render_failures,
    render_verdict,
    write_text_atomically,
)
from tokasm.run import OUTCOMES, CaseResult, Failure, TargetRun

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

MESSAGE = "step 2 on 'a': get('m')\n  expected: 'a b'\n  actual:   'ab'"


def _result(case_id: str, outcome: str, message: str = MESSAGE) -> CaseResult:
    return CaseResult(
        case_id,
        f"description of {case_id}",
        outcome,  # type: ignore[arg-type]
        "" if outcome == "passed" else message,
        ("APPEND",),
    )


def _run(target: str, outcomes: list[str], problems: tuple[str, ...] = ()) -> TargetRun:
    results = tuple(_result(f"case.{i}-{o}", o) for i, o in enumerate(outcomes))
    return TargetRun(target, f"{target} impl", results, "1.2.3", problems)


EVERY_OUTCOME = _run("mod:Every", list(OUTCOMES), ("stale line",))
CLEAN = _run("mod:Clean", ["passed", "passed", "skipped", "xfailed"])


def _write(render: Callable[[Sequence[TargetRun]], str], path: Path, runs: list[TargetRun]) -> None:
    write_text_atomically(path, render(runs))


def write_json(path: Path, runs: list[TargetRun]) -> None:
    _write(json_text, path, runs)


def write_junit(path: Path, runs: list[TargetRun]) -> None:
    _write(junit_text, path, runs)


def write_markdown(path: Path, runs: list[TargetRun]) -> None:
    _write(markdown_report, path, runs)


def _schema() -> dict[str, object]:
    loaded: dict[str, object] = json.loads(
        (spec_dir() / "report.schema.json").read_text(encoding="utf-8")
    )
    return loaded


def test_json_report_matches_schema_and_counts(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    write_json(path, [CLEAN, EVERY_OUTCOME])
    report = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(report, _schema())
    assert report["tokasm_version"] == tokasm.__version__
    assert report["corpus_version"] == "1.2.3"
    assert report["protocol_version"] == 1
    assert report["conforms"] is False
    assert report["summary"] == {
        "passed": 3,
        "failed": 1,
        "errored": 1,
        "skipped": 2,
        "xfailed": 2,
        "xpassed": 1,
    }
    clean, every = report["runs"]
    assert clean["conforms"] is True
    assert every["problems"] == ["stale line"]
    assert [case["outcome"] for case in every["cases"]] == list(OUTCOMES)
    assert every["cases"][1]["message"] == MESSAGE
    assert every["cases"][1]["requirements"] == ["APPEND"]


def test_schema_rejects_a_report_missing_its_versions() -> None:
    report = json_report([CLEAN])
    del report["runs"][0]["corpus_version"]
    with pytest.raises(jsonschema.ValidationError, match="corpus_version"):
        jsonschema.validate(report, _schema())


def test_junit_counts_and_elements(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    write_junit(path, [CLEAN, EVERY_OUTCOME])
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    # failures: failed + xpassed + 1 problem; skipped: skipped + xfailed
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == (
        "11",
        "3",
        "1",
        "4",
    )
    every = root[1]
    assert every.get("name") == "mod:Every"
    props = {p.get("name"): p.get("value") for p in every.iter("property")}
    assert props["corpus_version"] == "1.2.3"
    kinds = {case.get("name"): [child.tag for child in case] for case in every.iter("testcase")}
    assert kinds == {
        "case.0-passed": [],
        "case.1-failed": ["failure"],
        "case.2-errored": ["error"],
        "case.3-skipped": ["skipped"],
        "case.4-xfailed": ["skipped"],
        "case.5-xpassed": ["failure"],
        "problem-1": ["failure"],
    }
    failure = every.find("testcase[@name='case.1-failed']/failure")
    assert failure is not None
    assert failure.text is not None
    assert "expected: 'a b'" in failure.text


def test_junit_survives_control_characters(tmp_path: Path) -> None:
    """A testee's stderr tail may hold bytes XML 1.0 cannot carry; the file must still parse."""
    run = TargetRun("cmd", "cmd", (_result("x", "errored", "stderr: \x00\x1b[31mboom"),), "1.0.0")
    path = tmp_path / "junit.xml"
    write_junit(path, [run])
    error = ET.parse(path).getroot().find(".//error")
    assert error is not None
    assert error.text is not None
    assert "\\x00\\x1b[31mboom" in error.text


def test_markdown_card(tmp_path: Path) -> None:
    tricky = _run("a|b:Impl", ["failed"])
    tricky = TargetRun(
        tricky.target,
        tricky.implementation,
        (_result("x", "failed", "actual: '```'"),),
        "1.0.0",
    )
    path = tmp_path / "card.md"
    write_markdown(path, [CLEAN, _run("mod:AllPass", ["passed", "skipped"]), tricky])
    card = path.read_text(encoding="utf-8")
    assert card.startswith("### tokasm conformance: FAILED\n")
    row = "| `mod:Clean` | `mod:Clean impl` | 2 | 0 | 0 | 1 | 1 | 0 | ✅ expected failures only |"
    assert row in card
    assert "| `a\\|b:Impl` |" in card  # a pipe would split the table cell
    assert "````text\nactual: '```'\n````" in card  # fence longer than the content's
    assert "mod:Clean</code>: 1 not passing" in card  # its expected failure, listed
    assert "mod:AllPass</code>" not in card  # nothing to detail


def test_markdown_keeps_a_hostile_name_inert() -> None:
    """Backticks, HTML and newlines in a name stay inside code: they cannot end the span,
    open a tag, or start a new table row."""
    hostile = _run("x`` <img src=y>\n| z |", ["failed"], ("problem\n### heading",))
    card = markdown_report([hostile])
    row = next(line for line in card.splitlines() if line.startswith("| ```"))
    assert row.startswith("| ```x`` <img src=y>\\n\\| z \\|``` |")
    assert "```text\nproblem\n### heading\n```" in card  # a problem is fenced too


def test_markdown_all_clean_says_passed() -> None:
    assert markdown_report([CLEAN]).startswith("### tokasm conformance: PASSED\n")


def test_verdict_line_counts_like_protobuf() -> None:
    assert render_verdict([CLEAN], 4) == (
        "CONFORMANCE PASSED: 0 of 1 targets conform, 1 with expected failures only "
        "(mod:Clean); corpus 1.2.3, 4 cases: "
        "2 successes, 1 skipped, 1 expected failures, 0 unexpected failures"
    )
    assert render_verdict([CLEAN, EVERY_OUTCOME], 6) == (
        "CONFORMANCE FAILED: 1 of 2 targets nonconforming (mod:Every); corpus 1.2.3, 6 cases: "
        "3 successes, 2 skipped, 2 expected failures, 4 unexpected failures"
    )


class _Terminal:
    """A stand-in for stderr that says whether it is a terminal."""

    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.written = ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        self.written += text
        return len(text)

    def flush(self) -> None:
        pass


def test_progress_counts_on_a_terminal_and_erases_itself() -> None:
    terminal = _Terminal(tty=True)
    results = [_result("a", "passed"), _result("b", "failed"), _result("c", "passed")]
    progress = Progress("mod:Impl", 3, terminal)  # type: ignore[arg-type]
    assert list(progress.track(results)) == results
    frames = terminal.written.split("\r")
    assert [f.rstrip() for f in frames[1:5]] == [
        "mod:Impl: 0/3 cases",
        "mod:Impl: 1/3 cases",
        "mod:Impl: 2/3 cases, 1 failing",
        "mod:Impl: 3/3 cases, 1 failing",
    ]
    assert terminal.written.endswith("\r")  # the line is blanked, stdout starts clean


@pytest.mark.parametrize(
    ("tty", "ci", "quiet", "wanted"),
    [
        (True, None, False, True),
        (False, None, False, False),
        (True, "true", False, False),
        (True, None, True, False),
    ],
)
def test_progress_only_on_a_terminal_outside_ci(
    monkeypatch: pytest.MonkeyPatch, tty: bool, ci: str | None, quiet: bool, wanted: bool
) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    assert progress_wanted(_Terminal(tty), quiet) is wanted  # type: ignore[arg-type]


def test_documented_example_is_valid() -> None:
    """The JSON example in spec/REPORTS.md is a real report shape, not prose."""
    text = (spec_dir() / "REPORTS.md").read_text(encoding="utf-8")
    example = text.split("```json\n", 1)[1].split("\n```", 1)[0]
    jsonschema.validate(json.loads(example), _schema())


def test_target_text_is_escaped_and_capped_in_every_report(tmp_path: Path) -> None:
    """A lone surrogate, ANSI and NUL in a name, 1 MB of error: every report stays valid."""
    name = "half\ud83d emoji\x1b[2J\x00"
    huge = "line one\n" + "\ud83d\x07" * 500_000
    run = TargetRun(name, name, (_result("case.x", "errored", huge),), "1.2.3", ("p\x00",))
    write_json(tmp_path / "r.json", [run])
    write_junit(tmp_path / "r.xml", [run])
    write_markdown(tmp_path / "r.md", [run])
    for report in ("r.json", "r.xml", "r.md"):
        data = (tmp_path / report).read_bytes()
        assert len(data) < 200_000
        text = data.decode("utf-8", errors="strict")
        assert "\x1b" not in text
        assert "\x00" not in text
    loaded = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    jsonschema.validate(loaded, _schema())
    (case,) = loaded["runs"][0]["cases"]
    assert loaded["runs"][0]["target"] == "half\\ud83d emoji\\x1b[2J\\x00"
    assert case["message"].startswith("line one\n\\ud83d\\x07")
    assert "characters]" in case["message"]
    ET.parse(tmp_path / "r.xml")
    assert "\x1b" not in render_failures(run) + render_card([run])


#: Failing results of every shape a worker sends back.
FAILURES = [
    Failure(
        "mismatch",
        "2",
        "a",
        {"op": "get", "instance": "a", "id": "m"},
        {"returns": "a b"},
        {"returns": "ab"},
    ),
    Failure(
        "raised",
        "2[7].1",
        "a",
        {"op": "apply", "instance": "a", "event": {"id": "m", "delta": "x", "n": [1, None]}},
        {"returns": None},
        {"raises": "KeyError", "message": "KeyError('delta')"},
    ),
    Failure(
        "not-text",
        "1",
        "b",
        {"op": "get", "instance": "b", "id": "m"},
        {"raises": "TypeError"},
        {"foreign": "b'x'", "type": "builtins.bytes"},
    ),
    Failure("factory-error", instance="a", actual={"raises": "OSError", "message": "no"}),
    Failure("testee-fault"),
    Failure("hung", "3", "a", {"op": "get", "instance": "a", "id": "m"}, {"returns": None}),
]


@pytest.mark.parametrize("failure", FAILURES, ids=[f.kind for f in FAILURES])
def test_a_failing_result_goes_through_json_and_back_unchanged(failure: Failure) -> None:
    result = CaseResult(
        "case.x", "desc", "errored", "why", ("APPEND", "GET-TEXT"), "my/cases.yaml", 0.5, failure
    )
    line = json.dumps(result.to_data())
    assert CaseResult.from_data(json.loads(line)) == result


def test_a_result_without_failure_goes_through_and_back() -> None:
    result = CaseResult("case.y", "desc", "passed", duration=2)
    assert CaseResult.from_data(json.loads(json.dumps(result.to_data()))) == result


def _data(**changes: object) -> dict[str, object]:
    data = CaseResult("c", "d", "failed", "m", ("R",), failure=FAILURES[1]).to_data()
    return {**data, **changes}


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ([], "result must be an object"),
        (_data(outcome="won"), "unknown outcome 'won'"),
        (_data(case_id=1), "'case_id' must be str, got int"),
        (_data(requirements=["R", 2]), "'requirements' must hold strings only"),
        (_data(duration="1"), "'duration' must be float or int"),
        (_data(extra=1), "unknown keys ['extra']"),
        ({k: v for k, v in _data().items() if k != "message"}, "missing keys ['message']"),
        (_data(failure="boom"), "'failure' must be dict or null, got str"),
        (_data(failure={**vars(FAILURES[0]), "kind": "exploded"}), "unknown kind 'exploded'"),
        (_data(failure={**vars(FAILURES[0]), "where": None}), "'where' must be str"),
        (
            _data(failure={**vars(FAILURES[0]), "request": []}),
            "'request' must be dict or null, got list",
        ),
        (
            _data(failure={**vars(FAILURES[0]), "expected": {"foreign": "x", "type": "t"}}),
            "failure expected: unknown keys ['foreign', 'type']",
        ),
        (
            _data(failure={**vars(FAILURES[0]), "actual": {"returns": 3}}),
            "'returns' must be str or null, got int",
        ),
        (
            _data(failure={**vars(FAILURES[0]), "actual": {"raises": "E"}}),
            "failure actual: unknown keys ['raises']",
        ),
    ],
)
def test_a_result_of_another_shape_is_a_protocol_error(data: object, says: str) -> None:
    with pytest.raises(ProtocolError, match=re.escape(says)):
        CaseResult.from_data(data)


def test_the_json_report_carries_the_failure_record_escaped_and_capped() -> None:
    failure = Failure(
        "mismatch",
        "2",
        "a",
        {"op": "get", "instance": "a", "id": "m\x1b"},
        {"returns": "x" * 50_000},
        {"returns": None},
    )
    result = CaseResult("case.z", "desc", "failed", MESSAGE, ("APPEND",), failure=failure)
    report = json.loads(json_text([TargetRun("t", "t", (result,), "1.2.3")]))
    jsonschema.validate(report, _schema())
    (case,) = report["runs"][0]["cases"]
    assert case["failure"]["kind"] == "mismatch"
    assert case["failure"]["request"]["id"] == "m\\x1b"
    assert len(case["failure"]["expected"]["returns"]) < 3000
    assert case["failure"]["actual"] == {"returns": None}
    assert "failure" not in json_report([CLEAN])["runs"][0]["cases"][0]
