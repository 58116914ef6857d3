"""Render runs (terminal, JSON per spec/report.schema.json, JUnit, Markdown), every text of a
target's escaped and capped; write report files whole; draw the progress line."""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeAlias

from tokasm._display import error_text, safe_block, safe_text
from tokasm._versions import PROTOCOL_VERSION, __version__
from tokasm.errors import ReportError
from tokasm.run.results import FAILING, OUTCOMES, summarize

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from tokasm.run.results import CaseResult, TargetRun

__all__ = [
    "NAME_LIMIT", "Progress", "ReportPlan", "destination", "destinations", "json_report",
    "json_text", "junit_text", "markdown_report", "progress_wanted", "refuse_case_file",
    "render_card", "render_failures", "render_verdict", "write_text_atomically",
]  # fmt: skip

#: Version of the JSON report's shape (``report_version``); 2 added times and target ids.
REPORT_VERSION = 2
#: Characters kept of a one-line text in a report: a target name, a description.
NAME_LIMIT = 300
#: Characters kept of each text in a failure record of the JSON report.
_FAILURE_TEXT_LIMIT = 2000
#: Outcomes the failure listings leave out.
_QUIET = ("passed", "skipped")
#: JUnit element for each non-passing outcome; xfailed is a skip, as pytest writes it.
_JUNIT_ELEMENT = {
    "failed": "failure",
    "xpassed": "failure",
    "errored": "error",
    "skipped": "skipped",
    "xfailed": "skipped",
}
# A trailing parenthesised part of a target name, e.g. ``tokasm-node (node v20.20.2)``:
# the runtime, which changes on every upgrade while the target stays the same.
_RUNTIME = re.compile(r"(?P<name>.*?\S)\s*\((?P<runtime>[^()]*)\)")


def _sanitized(runs: Sequence[TargetRun]) -> list[TargetRun]:
    """``runs`` with every text escaped and capped, ready for any report or the terminal."""
    return [
        replace(
            run,
            target=safe_text(run.target, NAME_LIMIT),
            implementation=safe_text(run.implementation, NAME_LIMIT),
            results=tuple(
                replace(
                    r,
                    case_id=safe_text(r.case_id, NAME_LIMIT),
                    description=safe_text(r.description, NAME_LIMIT),
                    message=safe_block(r.message),
                    note=safe_block(r.note),
                    source=None if r.source is None else safe_text(r.source, NAME_LIMIT),
                    requirements=tuple(safe_text(rid, NAME_LIMIT) for rid in r.requirements),
                )
                for r in run.results
            ),
            problems=tuple(map(safe_block, run.problems)),
        )
        for run in runs
    ]


def stable_names(runs: Sequence[TargetRun]) -> list[tuple[str, str]]:
    """Each run's ``(id, runtime)``: its name without a trailing ``(...)``, an id CI keys its
    history on across runtime upgrades; its whole name where another run has that id (two
    runtimes of one testee, in one run, must not merge)."""
    split = [_RUNTIME.fullmatch(run.target) for run in runs]
    named = [
        (found["name"], found["runtime"].strip()) if found else (run.target, "")
        for found, run in zip(split, runs, strict=True)
    ]
    ids = [name for name, _ in named]
    return [
        (name if ids.count(name) == 1 else run.target, runtime)
        for (name, runtime), run in zip(named, runs, strict=True)
    ]


def _verdict(run: TargetRun) -> str:
    if not run.conforms:
        return "nonconforming"
    return "expected failures only" if run.summary["xfailed"] else "conforms"


def render_card(runs: Sequence[TargetRun]) -> str:
    """A target x outcome table, one row per target, with a verdict column."""
    runs = _sanitized(runs)
    width = max([len("target"), *(len(run.target) for run in runs)])
    header = f"{'target':<{width}}  " + " ".join(f"{o:>7}" for o in OUTCOMES) + "  verdict"
    rows = [header, "-" * len(header)]
    for run in runs:
        cells = " ".join(f"{run.summary[o]:>7}" for o in OUTCOMES)
        verdict = _verdict(run) if run.conforms else "NONCONFORMING"
        rows.append(f"{run.target:<{width}}  {cells}  {verdict}")
    return "\n".join(rows)


def render_failures(run: TargetRun) -> str:
    """Every non-passing, non-skipped case of one run; an expected failure in one line."""
    (run,) = _sanitized([run])
    blocks, xfails, notes = [], [], []
    for result in run.results:
        name = f"{run.target}::{result.case_id}"
        if result.requirements:
            name += f" [{', '.join(result.requirements)}]"
        lines = result.message.splitlines()
        if result.outcome == "xfailed":
            xfails.append(f"XFAIL {name} - {lines[0]} {lines[-1]}")
        elif result.outcome not in _QUIET:
            source = f" [from {result.source}]" if result.source else ""
            blocks.append(
                f"{result.outcome.upper()} {name} - {result.description}{source}\n"
                + "\n".join(f"  {line}" for line in lines)
            )
        if result.note:
            notes.append(f"NOTE {name} - {result.note}")
    problems = [f"PROBLEM {run.target}: {problem}" for problem in run.problems]
    return "\n".join([*blocks, *xfails, *problems, *notes])


def render_verdict(runs: Sequence[TargetRun], case_count: int) -> str:
    """The closing line, protobuf style: ``CONFORMANCE PASSED: ... N unexpected failures``."""
    runs = _sanitized(runs)
    totals = summarize(result for run in runs for result in run.results)
    unexpected = sum(totals[o] for o in FAILING) + sum(len(run.problems) for run in runs)
    failing = [run.target for run in runs if not run.conforms]
    excused = [run.target for run in runs if run.summary["xfailed"]]
    head = f"PASSED: {len(runs) - len(excused)} of {len(runs)} targets conform"
    if excused:  # never counted as conforming: they pass only through a list
        head += f", {len(excused)} with expected failures only ({', '.join(excused)})"
    if failing:
        head = f"FAILED: {len(failing)} of {len(runs)} targets nonconforming ({', '.join(failing)})"
    scope = f"corpus {runs[0].corpus_version}, {case_count} cases" if runs else "no targets"
    return (
        f"CONFORMANCE {head}; {scope}: {totals['passed']} successes, {totals['skipped']} "
        f"skipped, {totals['xfailed']} expected failures, {unexpected} unexpected failures"
    )


def _versions(runs: Sequence[TargetRun]) -> dict[str, Any]:
    return {
        "report_version": REPORT_VERSION,
        "tokasm_version": __version__,
        "corpus_version": runs[0].corpus_version if runs else "",
        "protocol_version": PROTOCOL_VERSION,
    }


def _capped(value: object) -> object:
    """JSON data with every string in it escaped and capped, as a message is."""
    if isinstance(value, str):
        return safe_block(value, _FAILURE_TEXT_LIMIT)
    if isinstance(value, dict):
        return {safe_text(key, NAME_LIMIT): _capped(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_capped(item) for item in value]
    return value


def _case_json(result: CaseResult) -> dict[str, Any]:
    return {
        "id": result.case_id,
        "description": result.description,
        "outcome": result.outcome,
        "message": result.message,
        "requirements": list(result.requirements),
        "source": result.source or "bundled",
        "time": round(result.duration, 6),
        **({} if result.failure is None else {"failure": _capped(vars(result.failure))}),
        **({"note": result.note} if result.note else {}),
    }


def json_report(runs: Sequence[TargetRun]) -> dict[str, Any]:
    """The ``--json`` document: versions, overall verdict and one entry per target run."""
    runs = _sanitized(runs)
    return {
        **_versions(runs),
        "conforms": all(run.conforms for run in runs),
        "summary": summarize(result for run in runs for result in run.results),
        "time": round(sum(run.duration for run in runs), 6),
        "runs": [
            {
                "target": run.target,
                "target_id": target_id,
                "runtime": runtime,
                "implementation": run.implementation,
                **_versions([run]),
                "conforms": run.conforms,
                "summary": run.summary,
                "time": round(run.duration, 6),
                "cases": [_case_json(result) for result in run.results],
                "problems": list(run.problems),
            }
            for run, (target_id, runtime) in zip(runs, stable_names(runs), strict=True)
        ],
    }


def json_text(runs: Sequence[TargetRun]) -> str:
    return json.dumps(json_report(runs), indent=2, ensure_ascii=False) + "\n"


def _junit_suite(parent: ET.Element, run: TargetRun, target_id: str, runtime: str) -> None:
    suite = ET.SubElement(parent, "testsuite", name=target_id)
    properties = ET.SubElement(suite, "properties")
    named = {**_versions([run]), "target": run.target, "implementation": run.implementation}
    for name, value in {**named, **({"runtime": runtime} if runtime else {})}.items():
        ET.SubElement(properties, "property", name=name, value=str(value))
    classname = f"tokasm.{target_id}"
    for result in run.results:
        time = f"{result.duration:.3f}"
        case = ET.SubElement(suite, "testcase", classname=classname, name=result.case_id, time=time)
        if result.note:
            ET.SubElement(case, "system-out").text = result.note
        tag = _JUNIT_ELEMENT.get(result.outcome)
        if tag is not None:
            first = (result.message.splitlines() or [result.outcome])[0]
            message = f"{result.description}: {first}"
            child = ET.SubElement(case, tag, type=result.outcome, message=message)
            if tag != "skipped":
                child.text = f"{result.description}\n{result.message}"
    for number, problem in enumerate(run.problems, 1):
        case = ET.SubElement(suite, "testcase", classname=classname, name=f"problem-{number}")
        ET.SubElement(case, "failure", type="problem", message=problem).text = problem
    _count(suite, "testcase", run.duration)


def _count(element: ET.Element, cases: str, seconds: float) -> None:
    """JUnit's counts on ``element``, of the testcases at ``cases`` below it, and its time."""
    element.set("tests", str(len(element.findall(cases))))
    for attribute, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
        element.set(attribute, str(len(element.findall(f"{cases}/{tag}"))))
    element.set("time", f"{seconds:.3f}")


def junit_text(runs: Sequence[TargetRun]) -> str:
    """JUnit XML: one ``testsuite`` per target, one ``testcase`` per case (name = case id)."""
    root = ET.Element("testsuites", name="tokasm conformance")
    runs = _sanitized(runs)
    for run, (target_id, runtime) in zip(runs, stable_names(runs), strict=True):
        _junit_suite(root, run, target_id, runtime)
    _count(root, "testsuite/testcase", sum(run.duration for run in runs))
    ET.indent(root)
    return f"<?xml version='1.0' encoding='utf-8'?>\n{ET.tostring(root, encoding='unicode')}\n"


def _fence(text: str, shortest: int) -> str:
    """Backticks enough to enclose ``text``: more than its longest run of them."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    return "`" * max(shortest, longest + 1)


def _code_cell(text: str) -> str:
    """``text`` as inline code in a table cell: nothing in it is Markdown or HTML."""
    escaped = text.replace("|", "\\|")
    pad = " " if escaped[:1] == "`" or escaped[-1:] == "`" else ""
    return f"{_fence(text, 1)}{pad}{escaped}{pad}{_fence(text, 1)}"


def _markdown_details(run: TargetRun) -> list[str]:
    shown = [r for r in run.results if r.outcome not in _QUIET]
    notes = [r for r in run.results if r.note]
    parts = [
        *(
            (f"**{r.outcome}** `{r.case_id}`: {html.escape(r.description)}", r.message)
            for r in shown
        ),
        *(("**problem**:", problem) for problem in run.problems),
        *((f"**note** `{r.case_id}`:", r.note) for r in notes),
    ]
    if not parts:
        return []
    lines = [
        "",
        f"<details><summary><code>{html.escape(run.target)}</code>: "
        f"{len(shown)} not passing, {len(run.problems)} problems</summary>",
        "",
    ]
    for head, text in parts:  # a fence longer than any backtick run inside
        lines += [head, "", f"{_fence(text, 3)}text\n{text}\n{_fence(text, 3)}", ""]
    return [*lines, "", "</details>"]


def markdown_report(runs: Sequence[TargetRun]) -> str:
    """A report card to paste into a pull request: verdict, table, collapsed details."""
    runs = _sanitized(runs)
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
        cells = " | ".join(str(run.summary[o]) for o in OUTCOMES)
        mark = "✅" if run.conforms else "❌"
        lines.append(
            f"| {_code_cell(run.target)} | {_code_cell(run.implementation)} | {cells} | "
            f"{mark} {_verdict(run)} |"
        )
    for run in runs:
        lines += _markdown_details(run)
    return "\n".join(lines) + "\n"


def _is_special(path: Path) -> bool:
    """An existing file that is not a regular one (``/dev/null``, a FIFO): written in place."""
    try:
        return not stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def write_text_atomically(path: Path, text: str) -> None:
    """Write ``text`` so a reader sees the old file or the whole new one (a device: in place)."""
    data = text.encode("utf-8", errors="backslashreplace")
    real = Path(os.path.realpath(path))
    if _is_special(real):
        real.write_bytes(data)
        return
    temporary = real.with_name(f".{real.name}.{os.urandom(4).hex()}.tmp")
    stream = temporary.open("xb")  # a new file, with the mode the umask gives
    try:
        with stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        with contextlib.suppress(FileNotFoundError):  # a file replaced keeps its mode
            shutil.copymode(real, temporary)
        os.replace(temporary, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def destination(option: str, given: Path) -> Path | None:
    """``given`` checked now (ReportError, exit 2, unless writable), or None for ``-``: stdout."""
    if str(given) == "-":
        return None
    real = Path(os.path.realpath(given))
    why = None
    if real.is_dir():
        why = "is a folder; give a file name"
    elif not real.parent.is_dir():
        why = f"folder {str(real.parent)!r} does not exist"
    elif real.exists() and not os.access(real, os.W_OK):
        why = "is not writable" if _is_special(real) else "exists and is read-only"
    elif not _is_special(real):
        try:  # the truth about the folder, whoever runs this (root ignores permissions)
            tempfile.NamedTemporaryFile(dir=real.parent, prefix=f".{real.name}.").close()
        except OSError as error:
            why = f"cannot create a file in its folder: {error.strerror or error}"
    if why:
        raise ReportError(f"{option} {str(given)!r}: {why}")
    return real


def destinations(requests: Iterable[tuple[str, Path]]) -> list[tuple[str, Path | None]]:
    """Each report's ``destination``; ReportError if two name one file or both go to stdout."""
    seen: dict[Path | None, str] = {}
    for option, given in requests:
        path = destination(option, given)
        if (other := seen.setdefault(path, option)) != option:
            same = "name the same file" if path else "both go to stdout ('-')"
            raise ReportError(f"{option} and {other} {same}")
    return [(option, path) for path, option in seen.items()]


def refuse_case_file(option: str, given: Path, cases: Sequence[Path]) -> None:
    """ReportError if writing ``given`` would replace or add a case file of ``cases`` (a run's)."""
    path = Path(os.path.realpath(given))
    for case in cases:
        real = Path(os.path.realpath(case))
        if path == real or (path.parent == real and path.suffix == ".yaml"):
            raise ReportError(
                f"{option} {str(given)!r} is a case file the run loads, of {str(case)!r}"
            )


_KEPT = "--write-xfail"  # the one report that may be the list read, and is never deleted
#: Renders finished runs as one report's text.
Render: TypeAlias = "Callable[[Sequence[TargetRun]], str]"


class ReportPlan:
    """Every report asked for, checked before the run (ReportError, exit 2): only --write-xfail,
    the file people edit, may name the list read, ``source``, and is never deleted as stale;
    none may be a file that ``cases`` (the folders and files of cases read) loads."""

    def __init__(
        self,
        requests: Sequence[tuple[str, Path | None, Render]],
        source: Path | None,
        cases: Sequence[Path],
    ) -> None:
        renders = {option: render for option, _, render in requests}
        given = [(option, path) for option, path, _ in requests if path is not None]
        self.wanted = [(option, path, renders[option]) for option, path in destinations(given)]
        self.to_stdout = any(path is None for _, path, _ in self.wanted)
        for option, path, _ in self.wanted:
            if path is None:
                continue
            if source is not None and path == Path(os.path.realpath(source)) and option != _KEPT:
                raise ReportError(f"{option} names the same file as the list read, {str(source)!r}")
            refuse_case_file(option, path, cases)

    def remove_stale(self) -> None:
        """Delete earlier reports, so a run that does not finish leaves none behind."""
        for option, path, _ in self.wanted:
            if path is not None and option != _KEPT and not _is_special(path):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()

    def write(self, runs: Sequence[TargetRun], stdout: Callable[[str], None]) -> list[str]:
        """Write each report (``-`` through ``stdout``); what failed, a line each."""
        failures = []
        for option, path, render in self.wanted:
            try:
                text = render(runs)
                if path is None:
                    stdout(text.removesuffix("\n"))
                else:
                    write_text_atomically(path, text)
            except Exception as error:  # a report's own failure, whatever it is
                failures.append(f"{option} {path or '-'}: {error_text(error)}")
        return failures


def progress_wanted(stream: TextIO, quiet: bool = False) -> bool:
    """Whether a live line belongs on ``stream``: a TTY, not under CI, not ``--quiet``."""
    return not quiet and not os.environ.get("CI") and stream.isatty()


class Progress:
    """A line on ``stream`` (stderr) rewritten in place, for long runs."""

    def __init__(self, label: str, total: int = 0, stream: TextIO | None = None) -> None:
        self.label, self.total, self._width = label, total, 0
        self.stream = sys.stderr if stream is None else stream

    def draw(self, line: str) -> None:
        self._width = max(self._width, len(line))
        self.stream.write(f"\r{line:<{self._width}}")
        self.stream.flush()

    def erase(self) -> None:
        self.stream.write("\r" + " " * self._width + "\r")
        self.stream.flush()

    def track(self, results: Iterable[CaseResult]) -> Iterator[CaseResult]:
        """Pass ``results`` through, counting them (``target: 12/40 cases, 1 failing``)."""
        failing = 0
        self.draw(f"{self.label}: 0/{self.total} cases")
        try:
            for done, result in enumerate(results, 1):
                failing += result.outcome in FAILING
                shown = f", {failing} failing" if failing else ""
                self.draw(f"{self.label}: {done}/{self.total} cases{shown}")
                yield result
        finally:
            self.erase()
