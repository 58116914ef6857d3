"""``tokasm check``: run the corpus against targets and print a report card."""

from __future__ import annotations

import fnmatch
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .._versions import version_line
from ..conformance._fuzz import CHECK_EXAMPLES, fuzz_phase
from ..conformance._progress import Progress, progress_wanted
from ..conformance._protocol_client import (
    DEFAULT_TIMEOUT,
    START_TIMEOUT,
    CommandSubject,
    split_command,
)
from ..conformance._reports import (
    ReportPlan,
    json_text,
    junit_text,
    markdown_report,
    one_line,
    render_card,
    render_failures,
    render_verdict,
)
from ..conformance._xfail import XfailList, apply_xfail, load_xfail, render_xfail
from ..conformance.corpus import PROFILES, load_corpus, profile_gap
from ..conformance.results import TargetRun, timed
from ..conformance.runner import DEFAULT_PROFILES, run_cases
from ..conformance.subjects import PythonSubject, Subject, resolve_target
from ..conformance.testee import python_testee_command
from ..errors import CorpusError, ReportError, TargetError, XfailError
from ..implementations import BACKENDS
from ._console import Console, guarded_run
from .options import TARGET_HELP, exit_codes, non_negative, positive_seconds, subcommand

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence, Set

    from ..conformance.corpus import Case, Corpus
    from .options import Commands

__all__ = ["add_parser", "run"]

DESCRIPTION = """\
Run the conformance corpus against one or more targets.

With no TARGET, every bundled backend is checked. A TARGET is MODULE:ATTR,
where ATTR is a class or a zero-argument factory returning a fresh assembler
(the current folder is importable), or the name of a bundled backend.

Output: a header with the tokasm, corpus and protocol versions; each case
that did not pass, with its id, description, failing step, the event sent and
the expected and actual values (by repr); a report card (target x outcome);
and a closing CONFORMANCE PASSED/FAILED line with the counts. Progress goes
to stderr on a terminal only (never when CI is set, or with --quiet).

For CI: --junit and --json for machines, --markdown for a pull request.
Report paths are checked before any case runs; an old report at a --json,
--junit or --markdown path is deleted first, and each report is written
whole (a temporary file, then a rename) when the run ends, so an
interrupted run leaves none. PATH '-' sends that report to stdout (one at
most), and the rest of the output to stderr.
An implementation with known gaps keeps an --xfail list (one case id or glob
per line, '# reason' allowed): listed cases that fail are expected failures;
a listed case that passes, or a line matching no case, fails the run, so the
list cannot go stale. --write-xfail writes today's failures as such a list.
One --xfail file applies to every target of the run.

The same corpus from pytest, one test per case (works with pytest-xdist):
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
        "--json",
        type=Path,
        metavar="PATH",
        help="write a JSON report (schema: spec/REPORTS.md); '-' for stdout",
    )
    reports.add_argument(
        "--junit", type=Path, metavar="PATH", help="write JUnit XML; '-' for stdout"
    )
    reports.add_argument(
        "--markdown",
        type=Path,
        metavar="PATH",
        help="write a Markdown report card for a PR; '-' for stdout",
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
        help="write the cases failing now as an --xfail file (ids sorted, reasons as comments; "
        "a reason already in FILE is kept); '-' for stdout",
    )
    reports.add_argument(
        "-q", "--quiet", action="store_true", help="no progress line (it is off in CI anyway)"
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


def _select(corpus: Corpus, patterns: list[str]) -> list[Case]:
    if not patterns:
        return list(corpus)
    chosen = [c for c in corpus if any(fnmatch.fnmatchcase(c.id, p) for p in patterns)]
    if not chosen:
        raise CorpusError(f"no case id matches {patterns}")
    return chosen


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


def _refuse_unrunnable_profiles(
    requested: Sequence[str], corpus: Corpus, subjects: Sequence[Subject]
) -> None:
    """An explicitly requested profile a target cannot run is a usage error, not a quiet skip.

    Judged on the whole corpus, as the profile is, whatever ``-k`` selects."""
    for subject in subjects:
        gap = profile_gap(requested, corpus, subject.name, subject.features)
        if gap is not None:
            raise TargetError(f"--profile: {gap}")


def _run_target(
    subject: Subject,
    cases: list[Case],
    profiles: Set[str],
    corpus: Corpus,
    quiet: bool,
    *,
    fuzz_examples: int,
) -> TargetRun:
    start = time.perf_counter()
    results = timed(run_cases(subject, cases, profiles))
    if progress_wanted(sys.stderr, quiet):
        results = Progress(one_line(subject.name), len(cases)).track(results)
    try:
        finished = tuple(results)
        problems = fuzz_phase(subject, finished, fuzz_examples)
    finally:
        subject.close()
    duration = time.perf_counter() - start
    return TargetRun(subject.name, subject.name, finished, corpus.version, problems, duration)


def _report_plan(args: argparse.Namespace) -> ReportPlan:
    """Every report asked for, each destination checked now, before any target loads."""
    keep = _previous_list(args.write_xfail)
    return ReportPlan.checked(
        [
            ("--json", args.json, json_text),
            ("--junit", args.junit, junit_text),
            ("--markdown", args.markdown, markdown_report),
            ("--write-xfail", args.write_xfail, lambda runs: render_xfail(runs, keep)),
        ],
        source=args.xfail,
        kept="--write-xfail",
    )


def _previous_list(path: Path | None) -> XfailList | None:
    """The list --write-xfail replaces, so its reasons are kept; ReportError if unreadable."""
    if path is None or str(path) == "-" or not path.is_file():
        return None
    try:
        return load_xfail(path)
    except XfailError as error:
        raise ReportError(f"--write-xfail: will not replace it: {error}") from None


def run(args: argparse.Namespace) -> int:
    with guarded_run():
        return _check(args)


def _check(args: argparse.Namespace) -> int:
    corpus = load_corpus()
    cases = _select(corpus, args.case)
    reports = _report_plan(args)
    xfail: XfailList | None = load_xfail(args.xfail, corpus) if args.xfail else None
    subjects = _subjects(args)
    stdout = Console(sys.stdout)
    console = Console(sys.stderr) if reports.to_stdout else stdout
    runs: list[TargetRun] = []
    try:
        _refuse_unrunnable_profiles(args.profile, corpus, subjects)
        reports.remove_stale()
        console.print(version_line())
        profiles = DEFAULT_PROFILES | set(args.profile)
        for subject in subjects:
            run_ = _run_target(
                subject, cases, profiles, corpus, args.quiet, fuzz_examples=args.fuzz_examples
            )
            if xfail is not None:
                run_ = apply_xfail(run_, xfail, corpus)
            runs.append(run_)
            details = render_failures(run_)
            if details:
                console.print(details)
    finally:
        for subject in subjects:
            subject.close()
    failures = reports.write(runs, stdout.print)
    console.print(render_card(runs))
    console.print(render_verdict(runs, len(cases)))
    if failures:
        raise ReportError("cannot write report: " + "; ".join(failures))
    return 0 if all(run_.conforms for run_ in runs) else 1
