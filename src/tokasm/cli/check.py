"""``tokasm check``: run the corpus against targets and print a report card."""

from __future__ import annotations

import fnmatch
import sys
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
    render_card,
    render_failures,
    render_verdict,
    write_json,
    write_junit,
    write_markdown,
)
from ..conformance._xfail import XfailList, apply_xfail, load_xfail, write_xfail
from ..conformance.corpus import PROFILES, load_corpus
from ..conformance.results import TargetRun
from ..conformance.runner import DEFAULT_PROFILES, run_cases
from ..conformance.subjects import PythonSubject, Subject, resolve_target
from ..conformance.testee import python_testee_command
from ..errors import CorpusError, ReportError, TargetError
from ..implementations import BACKENDS
from .options import TARGET_HELP, exit_codes, non_negative, positive_seconds, subcommand

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence, Set

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


def _run_target(
    subject: Subject,
    cases: list[Case],
    profiles: Set[str],
    corpus: Corpus,
    quiet: bool,
    *,
    fuzz_examples: int,
) -> TargetRun:
    results = run_cases(subject, cases, profiles)
    if progress_wanted(sys.stderr, quiet):
        results = Progress(subject.name, len(cases)).track(results)
    try:
        finished = tuple(results)
        problems = fuzz_phase(subject, finished, fuzz_examples)
    finally:
        subject.close()
    return TargetRun(subject.name, subject.name, finished, corpus.version, problems)


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
    cases = _select(corpus, args.case)
    xfail: XfailList | None = load_xfail(args.xfail) if args.xfail else None
    subjects = _subjects(args)
    print(version_line())
    profiles = DEFAULT_PROFILES | set(args.profile)
    runs: list[TargetRun] = []
    for subject in subjects:
        run_ = _run_target(
            subject, cases, profiles, corpus, args.quiet, fuzz_examples=args.fuzz_examples
        )
        if xfail is not None:
            run_ = apply_xfail(run_, xfail, corpus)
        runs.append(run_)
        details = render_failures(run_)
        if details:
            print(details)
    print(render_card(runs))
    try:
        _write_reports(args, runs)
    except OSError as error:
        raise ReportError(f"cannot write report: {error}") from error
    print(render_verdict(runs, len(cases)))
    return 0 if all(run_.conforms for run_ in runs) else 1
