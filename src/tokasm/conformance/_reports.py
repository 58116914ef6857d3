"""Render finished runs: terminal report card and verdict, JSON, JUnit XML and Markdown.

The JSON shape is documented in ``spec/REPORTS.md`` and pinned by
``spec/report.schema.json``; every report records the tokasm, corpus and
protocol versions, so a stored result says what it was measured against.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

from .._versions import PROTOCOL_VERSION, __version__
from .results import FAILING, OUTCOMES, summarize

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from .results import CaseResult, TargetRun

__all__ = [
    "json_report",
    "junit_report",
    "markdown_report",
    "render_card",
    "render_failures",
    "render_verdict",
    "write_json",
    "write_junit",
    "write_markdown",
]


def render_card(runs: Sequence[TargetRun]) -> str:
    """A target x outcome table, one row per target, with a verdict column."""
    width = max([len("target"), *(len(run.target) for run in runs)])
    header = f"{'target':<{width}}  " + " ".join(f"{o:>7}" for o in OUTCOMES) + "  verdict"
    rows = [header, "-" * len(header)]
    for run in runs:
        counts = run.summary
        verdict = "NONCONFORMING" if not run.conforms else "conforms"
        if run.conforms and counts["xfailed"]:
            verdict = "expected failures only"
        rows.append(
            f"{run.target:<{width}}  "
            + " ".join(f"{counts[o]:>7}" for o in OUTCOMES)
            + f"  {verdict}"
        )
    return "\n".join(rows)


def _rules(result: CaseResult) -> str:
    return f" [{', '.join(result.requirements)}]" if result.requirements else ""


def render_failures(run: TargetRun) -> str:
    """Every non-passing, non-skipped case of one run, with the rules it lists and its
    message; an expected failure in one line (its first and its ``[listed in ...]`` line)."""
    blocks = [
        f"{result.outcome.upper()} {run.target}::{result.case_id}{_rules(result)} - "
        f"{result.description}"
        + (f" [from {result.source}]" if result.source else "")
        + "\n"
        + "\n".join(f"  {line}" for line in result.message.splitlines())
        for result in run.results
        if result.outcome not in ("passed", "skipped", "xfailed")
    ]
    blocks.extend(
        f"XFAIL {run.target}::{result.case_id}{_rules(result)} - "
        f"{result.message.splitlines()[0]} {result.message.splitlines()[-1]}"
        for result in run.results
        if result.outcome == "xfailed"
    )
    blocks.extend(f"PROBLEM {run.target}: {problem}" for problem in run.problems)
    return "\n".join(blocks)


def _totals(runs: Sequence[TargetRun]) -> dict[str, int]:
    return summarize(result for run in runs for result in run.results)


def render_verdict(runs: Sequence[TargetRun], case_count: int) -> str:
    """The closing line, protobuf style: ``CONFORMANCE PASSED: ... N unexpected failures``."""
    totals = _totals(runs)
    problems = sum(len(run.problems) for run in runs)
    unexpected = sum(totals[outcome] for outcome in FAILING) + problems
    failing = [run.target for run in runs if not run.conforms]
    counts = (
        f"{totals['passed']} successes, {totals['skipped']} skipped, "
        f"{totals['xfailed']} expected failures, {unexpected} unexpected failures"
    )
    scope = f"corpus {runs[0].corpus_version}, {case_count} cases" if runs else "no targets"
    if failing:
        return (
            f"CONFORMANCE FAILED: {len(failing)} of {len(runs)} targets nonconforming "
            f"({', '.join(failing)}); {scope}: {counts}"
        )
    return f"CONFORMANCE PASSED: {len(runs)} of {len(runs)} targets conform; {scope}: {counts}"


def _versions(runs: Sequence[TargetRun]) -> dict[str, Any]:
    return {
        "tokasm_version": __version__,
        "corpus_version": runs[0].corpus_version if runs else "",
        "protocol_version": PROTOCOL_VERSION,
    }


def _case_json(result: CaseResult) -> dict[str, Any]:
    return {
        "id": result.case_id,
        "description": result.description,
        "outcome": result.outcome,
        "message": result.message,
        "requirements": list(result.requirements),
        "source": result.source or "bundled",
    }


def json_report(runs: Sequence[TargetRun]) -> dict[str, Any]:
    """The ``--json`` document: versions, overall verdict and one entry per target run."""
    return {
        **_versions(runs),
        "conforms": all(run.conforms for run in runs),
        "summary": _totals(runs),
        "runs": [
            {
                "target": run.target,
                "implementation": run.implementation,
                **_versions([run]),
                "conforms": run.conforms,
                "summary": run.summary,
                "cases": [_case_json(result) for result in run.results],
                "problems": list(run.problems),
            }
            for run in runs
        ],
    }


def write_json(path: Path, runs: Sequence[TargetRun]) -> None:
    """Write ``json_report`` to ``path`` (UTF-8, indented, non-ASCII kept)."""
    text = json.dumps(json_report(runs), indent=2, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")


# XML 1.0 cannot carry most control characters, even escaped; a testee's stderr may.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


#: JUnit element for each non-passing outcome; xfailed is a skip, as pytest writes it.
_JUNIT_ELEMENT = {
    "failed": "failure",
    "xpassed": "failure",
    "errored": "error",
    "skipped": "skipped",
    "xfailed": "skipped",
}


def _junit_case(suite: ET.Element, classname: str, result: CaseResult) -> None:
    case = ET.SubElement(suite, "testcase", classname=classname, name=result.case_id)
    tag = _JUNIT_ELEMENT.get(result.outcome)
    if tag is None:
        return
    first = (result.message.splitlines() or [result.outcome])[0]
    child = ET.SubElement(
        case, tag, type=result.outcome, message=_xml_text(f"{result.description}: {first}")
    )
    if tag != "skipped":
        child.text = _xml_text(f"{result.description}\n{result.message}")


def _junit_suite(parent: ET.Element, run: TargetRun) -> None:
    counts = run.summary
    suite = ET.SubElement(
        parent,
        "testsuite",
        name=run.target,
        tests=str(len(run.results) + len(run.problems)),
        failures=str(counts["failed"] + counts["xpassed"] + len(run.problems)),
        errors=str(counts["errored"]),
        skipped=str(counts["skipped"] + counts["xfailed"]),
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in {**_versions([run]), "implementation": run.implementation}.items():
        ET.SubElement(properties, "property", name=name, value=_xml_text(str(value)))
    classname = f"tokasm.{run.target}"
    for result in run.results:
        _junit_case(suite, classname, result)
    for number, problem in enumerate(run.problems, 1):
        case = ET.SubElement(suite, "testcase", classname=classname, name=f"problem-{number}")
        failure = ET.SubElement(case, "failure", type="problem", message=_xml_text(problem))
        failure.text = _xml_text(problem)


def junit_report(runs: Sequence[TargetRun]) -> ET.ElementTree[ET.Element]:
    """JUnit XML: one ``testsuite`` per target, one ``testcase`` per case (name = case id)."""
    root = ET.Element("testsuites", name="tokasm conformance")
    for run in runs:
        _junit_suite(root, run)
    for attribute in ("tests", "failures", "errors", "skipped"):
        root.set(attribute, str(sum(int(s.get(attribute, "0")) for s in root)))
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(path: Path, runs: Sequence[TargetRun]) -> None:
    """Write ``junit_report`` to ``path``."""
    junit_report(runs).write(path, encoding="utf-8", xml_declaration=True)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _fenced(text: str) -> str:
    """A code block whose fence is longer than any backtick run inside ``text``."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _markdown_details(run: TargetRun) -> list[str]:
    shown = [r for r in run.results if r.outcome not in ("passed", "skipped")]
    if not shown and not run.problems:
        return []
    lines = [
        "",
        f"<details><summary><code>{html.escape(run.target)}</code>: "
        f"{len(shown)} not passing, {len(run.problems)} problems</summary>",
        "",
    ]
    for result in shown:
        lines += [
            f"**{result.outcome}** `{result.case_id}`: {result.description}",
            "",
            _fenced(result.message),
            "",
        ]
    lines += [f"**problem**: {problem}" for problem in run.problems]
    return [*lines, "", "</details>"]


def markdown_report(runs: Sequence[TargetRun]) -> str:
    """A report card to paste into a pull request: verdict, table, collapsed details."""
    verdict = "PASSED" if all(run.conforms for run in runs) else "FAILED"
    versions = _versions(runs)
    lines = [
        f"### tokasm conformance: {verdict}",
        "",
        f"tokasm {versions['tokasm_version']}, corpus {versions['corpus_version']}, "
        f"protocol {versions['protocol_version']}",
        "",
        "| target | implementation | " + " | ".join(OUTCOMES) + " | verdict |",
        "|---|---|" + "---:|" * len(OUTCOMES) + "---|",
    ]
    for run in runs:
        counts = run.summary
        verdict_cell = "✅ conforms" if run.conforms else "❌ nonconforming"
        lines.append(
            f"| `{_cell(run.target)}` | {_cell(run.implementation)} | "
            + " | ".join(str(counts[o]) for o in OUTCOMES)
            + f" | {verdict_cell} |"
        )
    for run in runs:
        lines += _markdown_details(run)
    return "\n".join(lines) + "\n"


def write_markdown(path: Path, runs: Sequence[TargetRun]) -> None:
    """Write ``markdown_report`` to ``path``."""
    path.write_text(markdown_report(runs), encoding="utf-8")
