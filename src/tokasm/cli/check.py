"""``tokasm check``: run the corpus against targets and print a report card."""

from __future__ import annotations

import argparse
import fnmatch
import sys
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .._versions import version_line
from ..conformance._blame import render_blame
from ..conformance._cost import PROBE_ID, probe_cache_final
from ..conformance._fuzz import CHECK_EXAMPLES, fuzz_phase
from ..conformance._progress import Progress, progress_wanted
from ..conformance._protocol_client import (
    DEFAULT_TIMEOUT,
    START_TIMEOUT,
    CommandSubject,
    split_command,
)
from ..conformance._reports import (
    render_card,
    render_failures,
    render_verdict,
    write_json,
    write_junit,
    write_markdown,
)
from ..conformance._xfail import XfailList, apply_xfail, load_xfail, parse_xfail, write_xfail
from ..conformance.corpus import PROFILES, load_corpus
from ..conformance.results import FAILING, TargetRun
from ..conformance.runner import DEFAULT_PROFILES, run_cases
from ..conformance.subjects import PythonSubject, Subject, resolve_target
from ..conformance.testee import python_testee_command
from ..errors import CorpusError, ReportError, TargetError
from ..implementations import BACKENDS, EXPECTED_FAILURES
from .options import (
    TARGET_HELP,
    at_least_one,
    exit_codes,
    non_negative,
    positive_seconds,
    subcommand,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence, Set

    from ..conformance.corpus import Case, Corpus
    from ..conformance.results import CaseResult
    from .options import Commands

__all__ = ["add_parser", "run"]

DESCRIPTION = """\
Run the conformance corpus against one or more targets.

With no TARGET, every bundled backend is checked. A TARGET is MODULE:ATTR,
where ATTR is a class or a zero-argument factory returning a fresh assembler
(the current folder is importable), or the name of a bundled backend.

Output: a header with the tokasm, corpus and protocol versions; each case
that did not pass, with its id, the rules (SPEC.md ids) it lists, its
description, failing step, the event sent and the expected and actual values
(by repr); for a target with failures, the rules most likely broken, worst
first ("breaks AFTER-REFINAL: 10 cases, first: ..."); a report card (target x
outcome); and a closing CONFORMANCE PASSED/FAILED line with the counts.
Progress goes to stderr on a terminal only (never when CI is set, or with
--quiet). tokasm list and tokasm show CASE print the cases themselves.

Besides the corpus, each target gets the cost probe cost.cache-final
(CACHE-FINAL, docs/cost.md): reads after final must not grow with the number
of parts. It is reported, selected (-k) and listed (--xfail) like a case;
about 0.1 s in process and 2 s over the protocol (--no-cost-probe skips it).
The bundled naive-join breaks it by design: an expected failure.

For CI: --junit and --json for machines, --markdown for a pull request.
An implementation with known gaps keeps an --xfail list (one case id or glob
per line, '# reason' allowed): listed cases that fail are expected failures;
a listed case that passes, or a line matching no case, fails the run, so the
list cannot go stale. --write-xfail writes today's failures as such a list.
One --xfail file applies to every target of the run.

The same checks from pytest, one test per case, then cost.cache-final and
fuzz items (works with pytest-xdist):
  python -m pytest --pyargs tokasm.conformance --assembler MODULE:ATTR
"""


EXIT_CODES = exit_codes(
    "every target conforms",
    "a case failed or errored, an expected failure passed or went stale,\n"
    "     or the fuzz phase found a counterexample",
)


def add_parser(commands: Commands) -> None:
    parser = subcommand(
        commands, "check", "run the conformance corpus against targets", DESCRIPTION, EXIT_CODES
    )
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=TARGET_HELP)
    parser.add_argument(
        "--profile",
        action="append",
        choices=PROFILES,
        default=[],
        help="also run this optional profile (repeatable); 'required' always runs, "
        "'incremental' runs on targets that have read_since",
    )
    parser.add_argument(
        "-k",
        "--case",
        action="append",
        default=[],
        metavar="GLOB",
        help="run only cases whose id matches this glob (repeatable)",
    )
    testees = parser.add_argument_group("protocol testees (spec/PROTOCOL.md)")
    testees.add_argument(
        "--cmd",
        action="append",
        default=[],
        metavar="COMMAND LINE",
        help="also check this testee command, started once and spoken to over the line "
        "protocol (repeatable; split like a shell would, e.g. 'node tokasm-testee.js')",
    )
    testees.add_argument(
        "--timeout",
        type=positive_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"per-request timeout for testees (default {DEFAULT_TIMEOUT:g}; starting and "
        f"hello get at least {START_TIMEOUT:g}); a request that times out errors its case "
        "and the testee is restarted",
    )
    testees.add_argument(
        "--isolate",
        action="store_true",
        help="run each TARGET in its own testee process "
        "(python -m tokasm.conformance.testee TARGET), so one that hangs costs one case",
    )
    reports = parser.add_argument_group("reports and expected failures")
    reports.add_argument(
        "--json", type=Path, metavar="PATH", help="write a JSON report (schema: spec/REPORTS.md)"
    )
    reports.add_argument("--junit", type=Path, metavar="PATH", help="write JUnit XML")
    reports.add_argument(
        "--markdown", type=Path, metavar="PATH", help="write a Markdown report card for a PR"
    )
    reports.add_argument(
        "--xfail",
        type=Path,
        metavar="FILE",
        help="expected failures: one case id or glob per line, '# reason' allowed",
    )
    reports.add_argument(
        "--write-xfail",
        type=Path,
        metavar="FILE",
        help="write the cases failing now as an --xfail file (ids sorted, reasons as comments)",
    )
    reports.add_argument(
        "-q", "--quiet", action="store_true", help="no progress line (it is off in CI anyway)"
    )
    parser.add_argument(
        "--maxfail",
        type=at_least_one,
        metavar="N",
        help="stop after N unexpected failures, counted across targets (expected failures "
        "do not count); the output says what was not run",
    )
    parser.add_argument(
        "--cost-probe",
        action=argparse.BooleanOptionalAction,
        default=True,
        help=f"measure CACHE-FINAL on each target as the check {PROBE_ID} (default on; "
        "about 0.1 s in process, 2 s over the protocol; docs/cost.md)",
    )
    parser.add_argument(
        "--fuzz-examples",
        type=non_negative,
        default=CHECK_EXAMPLES,
        metavar="N",
        help=f"when every case passes, fuzz each target against the model with N examples "
        f"(default {CHECK_EXAMPLES}, fixed seed; 0 turns it off); a disagreement fails the run "
        "and prints the shrunk counterexample as a corpus case (more: tokasm fuzz)",
    )
    parser.set_defaults(run=run)


def _select(corpus: Corpus, patterns: list[str]) -> tuple[list[Case], bool]:
    """The cases ``-k`` selects, and whether it selects the cost probe too."""
    if not patterns:
        return list(corpus), True

    def chosen(case_id: str) -> bool:
        return any(fnmatch.fnmatchcase(case_id, pattern) for pattern in patterns)

    cases = [case for case in corpus if chosen(case.id)]
    probe = chosen(PROBE_ID)
    if not cases and not probe:
        raise CorpusError(f"no case id matches {patterns}")
    return cases, probe


def _subject(target: str, args: argparse.Namespace) -> Subject:
    if args.isolate:
        return CommandSubject(python_testee_command(target), args.timeout)
    return PythonSubject(resolve_target(target), target)


def _subjects(args: argparse.Namespace) -> list[Subject]:
    """Start every target up front, so a bad one exits 2 before any case runs."""
    names: list[str] = args.targets or ([] if args.cmd else list(BACKENDS))
    subjects: list[Subject] = []
    try:
        subjects.extend(_subject(name, args) for name in names)
        subjects.extend(CommandSubject(split_command(line), args.timeout) for line in args.cmd)
    except TargetError:
        for subject in subjects:
            subject.close()
        raise
    return subjects


@dataclass
class _Selection:
    """What runs on every target: the cases, their profiles, and whether the cost probe does."""

    corpus: Corpus
    cases: list[Case]
    profiles: Set[str]
    probe: bool
    quiet: bool
    fuzz_examples: int

    @property
    def size(self) -> int:
        return len(self.cases) + self.probe


@dataclass
class _FailureLimit:
    """``--maxfail``: unexpected failures counted across targets (no limit when None)."""

    limit: int | None
    count: int = 0

    @property
    def reached(self) -> bool:
        return self.limit is not None and self.count >= self.limit


def _checks(subject: Subject, selection: _Selection) -> Iterator[CaseResult]:
    yield from run_cases(subject, selection.cases, selection.profiles)
    if selection.probe:
        yield probe_cache_final(subject)


def _expected_failures(target: str, user: XfailList | None) -> list[XfailList]:
    """The lists judging ``target``: a bundled backend's own gaps, then the user's --xfail."""
    lists = []
    if target in EXPECTED_FAILURES:
        source = f"tokasm.implementations.EXPECTED_FAILURES[{target!r}]"
        lists.append(parse_xfail(EXPECTED_FAILURES[target], source))
    if user is not None:
        lists.append(user)
    return lists


def _run_target(
    subject: Subject, selection: _Selection, lists: list[XfailList], limit: _FailureLimit
) -> tuple[TargetRun, int]:
    """Run the selection, then the fuzz phase; the run and how many checks did not run."""
    results = _checks(subject, selection)
    if progress_wanted(sys.stderr, selection.quiet):
        results = Progress(subject.name, selection.size).track(results)
    finished: list[CaseResult] = []
    problems: tuple[str, ...] = ()
    try:
        for result in results:
            finished.append(result)
            listed = any(xfail.entry_for(result.case_id) for xfail in lists)
            limit.count += result.outcome in FAILING and not listed
            if limit.reached:
                break
        if not limit.reached:
            corpus_results = [r for r in finished if r.case_id != PROBE_ID]
            problems = fuzz_phase(subject, corpus_results, selection.fuzz_examples)
            limit.count += len(problems)
    finally:
        if isinstance(results, Generator):
            results.close()
        subject.close()
    corpus = selection.corpus
    run = TargetRun(subject.name, subject.name, tuple(finished), corpus.version, problems)
    for xfail in lists:
        run = apply_xfail(run, xfail, corpus)
    return run, selection.size - len(finished)


def _not_run(limit: _FailureLimit, stopped: str, left: int, unstarted: list[str]) -> str:
    parts = [f"{left} checks of {stopped} and its fuzz phase"] if left else []
    if unstarted:
        parts.append(f"targets {', '.join(unstarted)}")
    return f"stopped after {limit.count} unexpected failures (--maxfail {limit.limit}); " + (
        f"not run: {'; '.join(parts)}" if parts else "everything selected had run"
    )


def _write_reports(args: argparse.Namespace, runs: Sequence[TargetRun]) -> None:
    writers: list[tuple[Path | None, Callable[[Path, Sequence[TargetRun]], None]]] = [
        (args.json, write_json),
        (args.junit, write_junit),
        (args.markdown, write_markdown),
        (args.write_xfail, write_xfail),
    ]
    for path, write in writers:
        if path is not None:
            write(path, runs)


def run(args: argparse.Namespace) -> int:
    corpus = load_corpus()
    cases, probe = _select(corpus, args.case)
    user_xfail = load_xfail(args.xfail) if args.xfail else None
    subjects = _subjects(args)
    print(version_line())
    selection = _Selection(
        corpus,
        cases,
        DEFAULT_PROFILES | set(args.profile),
        probe and args.cost_probe,
        args.quiet,
        args.fuzz_examples,
    )
    limit = _FailureLimit(args.maxfail)
    runs: list[TargetRun] = []
    by_id = corpus.by_id()
    for index, subject in enumerate(subjects):
        lists = _expected_failures(subject.name, user_xfail)
        run_, left = _run_target(subject, selection, lists, limit)
        runs.append(run_)
        details = "\n".join(filter(None, [render_failures(run_), render_blame(run_, by_id)]))
        if details:
            print(details)
        if limit.reached:
            unstarted = subjects[index + 1 :]
            for other in unstarted:
                other.close()
            print(_not_run(limit, run_.target, left, [other.name for other in unstarted]))
            break
    print(render_card(runs))
    try:
        _write_reports(args, runs)
    except OSError as error:
        raise ReportError(f"cannot write report: {error}") from error
    print(render_verdict(runs, selection.size))
    return 0 if all(run_.conforms for run_ in runs) else 1
