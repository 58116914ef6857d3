"""``tokasm check``: run the corpus against targets and print a report card."""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from tokasm._display import safe_text
from tokasm.corpus import PROFILES, expand, profile_gap
from tokasm.errors import (
    CorpusError,
    ReportError,
    TargetError,
    UsageError,
    XfailError,
)
from tokasm.fuzz import CHECK_EXAMPLES, fuzz_phase
from tokasm.implementations import BACKENDS
from tokasm.protocol import (
    DEFAULT_TIMEOUT,
    PIPELINE_WINDOW,
    START_TIMEOUT,
    CommandTarget,
    WorkerTarget,
    split_command,
)
from tokasm.report import (
    NAME_LIMIT,
    Progress,
    ReportPlan,
    XfailList,
    apply_xfail,
    expected_failures,
    json_text,
    junit_text,
    load_xfail,
    markdown_report,
    progress_wanted,
    render_blame,
    render_card,
    render_failures,
    render_verdict,
    render_xfail,
)
from tokasm.run import (
    DEFAULT_PROFILES,
    FAILING,
    PROBE_IDS,
    STREAM_PROBE_ID,
    CaseResult,
    PythonTarget,
    Target,
    TargetRun,
    resolve_target,
    run_cases,
    run_probe,
    skip_reason,
    timed,
)

from ._cases import add_case_options, chosen_cases
from ._console import Console
from .options import (
    TARGET_HELP,
    at_least_one,
    exit_codes,
    non_negative,
    positive_seconds,
    subcommand,
    version_line,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence, Set

    from tokasm.cli.options import Commands
    from tokasm.corpus import Case, Corpus

__all__ = ["add_parser", "run"]

#: What the cost probe costs, as docs/cost.md measured it (said in the description and
#: in --cost-probe's help).
PROBE_COST = "about 0.3 s each for a Python target, 0.3 to 3 s over the protocol"

DESCRIPTION = f"""\
Run the conformance corpus against one or more targets.

With no TARGET, every bundled backend is checked. A TARGET is MODULE:ATTR,
where ATTR is a class or a zero-argument factory returning a fresh assembler
(the current folder is importable; MODULE may be a file's path), or the name
of a bundled backend. Each runs in a worker process of its own: whatever it
does there (exit, crash, hang, eat memory) errors the case it was running,
and the run goes on (docs/guarantees.md). --in-process runs it in tokasm's
own process instead, for a debugger, trusting it.

Output: a header with the tokasm, corpus and protocol versions; each case
that did not pass, with its id, the rules (SPEC.md ids) it lists, its
description, failing step, the event sent and the expected and actual values
(by repr); for a target with failures, the rules most likely broken, worst
first ("breaks AFTER-REFINAL: 10 cases, first: ..."); a report card (target x
outcome); and a closing CONFORMANCE PASSED/FAILED line with the counts.
Progress goes to stderr on a terminal only (never when CI is set, or with
--quiet). tokasm list and tokasm show CASE print the cases themselves.

Besides the corpus, each target gets two cost probes (docs/cost.md), reported,
selected (-k) and listed (--xfail) like cases; {PROBE_COST}
(--no-cost-probe skips both). cost.cache-final (CACHE-FINAL): reads after
final must not grow with the message; the bundled naive-join breaks it by
design, an expected failure. cost.stream-linear (STREAM-LINEAR, a SHOULD):
whether an append costs more as the message's text grows; a finding, shown
on a passed result, which fails only with --strict-cost.

For CI: --junit and --json for machines, --markdown for a pull request.
Report paths are checked before any case runs; an old report at a --json,
--junit or --markdown path is deleted when the first case runs, and each
report is written whole (a temporary file, then a rename) when the run ends,
so an interrupted run leaves none. PATH '-' sends that report to stdout (one
at most), and the rest of the output to stderr.
An implementation with known gaps keeps an --xfail list (one case id or glob
per line, '# reason' allowed): listed cases that fail are expected failures;
a listed case that passes, or a line matching no case, fails the run, so the
list cannot go stale. --write-xfail writes today's failures as such a list.
One --xfail file applies to every target of the run.

The same checks from pytest, one test per case, then cost.cache-final and
fuzz items (works with pytest-xdist):
  python -m pytest --pyargs tokasm.conformance --tokasm-assembler MODULE:ATTR
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
    add_case_options(parser)
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
        help=f"seconds one call into a target may take (default {DEFAULT_TIMEOUT:g}); a call "
        "that takes longer errors its case (with its stack, for a Python target), the "
        "target's process is killed and a fresh one runs the next case. Starting a testee "
        f"gets at least {START_TIMEOUT:g} s; loading a Python target, 60 s",
    )
    testees.add_argument(
        "--no-pipeline",
        action="store_true",
        help="send testees one request at a time, waiting for each response (by default a "
        f"case's requests are written up to {PIPELINE_WINDOW} ahead; spec/PROTOCOL.md)",
    )
    testees.add_argument(
        "--isolate",
        action="store_true",
        help="deprecated, and the default now: every Python TARGET runs in a worker process",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run Python targets in tokasm's own process, for a debugger (pdb): UNGUARDED, "
        "it trusts the target (no --timeout; a target that exits, crashes or hangs ends "
        "or stops the run)",
    )
    reports = parser.add_argument_group("reports and expected failures")
    reports.add_argument(
        "--json",
        type=Path,
        metavar="PATH",
        help="write a JSON report (schema: spec/report.schema.json); '-' for stdout",
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
        "--maxfail",
        type=at_least_one,
        metavar="N",
        help="stop after N unexpected failures, counted across targets (expected failures "
        "do not count); the output says what was not run",
    )
    parser.add_argument(
        "--cost-probe",
        action=argparse.BooleanOptionalAction,
        help=f"measure CACHE-FINAL and STREAM-LINEAR on each target as the checks "
        f"{' and '.join(PROBE_IDS)} (default on; {PROBE_COST}; docs/cost.md)",
    )
    parser.add_argument(
        "--strict-cost",
        action="store_true",
        help=f"fail {STREAM_PROBE_ID} when an append grows with the text (by default a finding)",
    )
    # On, set apart from the option: Python 3.10 appends "(default: True)" to the help of
    # a BooleanOptionalAction that has a default of its own.
    parser.set_defaults(cost_probe=True)
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


def _select(
    corpus: list[Case], patterns: list[str], cost_probe: bool
) -> tuple[list[Case], list[str]]:
    """The cases ``-k`` selects, and the cost probes that run too (``cost_probe``: not
    turned off). A selection that leaves nothing to run is an error, not a pass."""

    def chosen(case_id: str) -> bool:
        return not patterns or any(fnmatch.fnmatchcase(case_id, p) for p in patterns)

    cases = [case for case in corpus if chosen(case.id)]
    probes = [probe for probe in PROBE_IDS if chosen(probe)]
    if not cases and not probes:
        raise CorpusError(f"no case id matches {patterns}")
    if not cases and not cost_probe:
        raise CorpusError(
            f"-k {' '.join(patterns)} selects only {', '.join(probes)}, which --no-cost-probe "
            "turns off: nothing to run"
        )
    return cases, probes if cost_probe else []


def _command(argv: list[str], args: argparse.Namespace) -> CommandTarget:
    window = 1 if args.no_pipeline else PIPELINE_WINDOW
    return CommandTarget(argv, args.timeout, window=window)


#: The outcomes after which the fuzz phase runs (it looks for what the corpus missed).
_CLEAN = ("passed", "skipped")


@dataclass
class _FailureLimit:
    """``--maxfail``: unexpected failures counted across targets (no limit when None)."""

    limit: int | None
    count: int = 0

    @property
    def reached(self) -> bool:
        return self.limit is not None and self.count >= self.limit


def _not_run(limit: _FailureLimit, stopped: str, left: int, unstarted: list[str]) -> str:
    parts = [f"{left} checks of {stopped} and its fuzz phase"] if left else []
    if unstarted:
        parts.append(f"targets {', '.join(unstarted)}")
    return f"stopped after {limit.count} unexpected failures (--maxfail {limit.limit}); " + (
        f"not run: {'; '.join(parts)}" if parts else "everything selected had run"
    )


class _Session:
    """One ``check`` run: its targets, their results, and the reports."""

    def __init__(
        self, args: argparse.Namespace, corpus: Corpus, reports: ReportPlan, targets: _Targets
    ) -> None:
        self.args = args
        self.corpus = corpus
        self.cases: list[Case] = []
        self.probes: list[str] = []  # the cost probes that run after the cases
        self.xfail: XfailList | None = None
        self.limit = _FailureLimit(args.maxfail)
        self.left = 0  # checks of the current target not run (--maxfail)
        self.reports = reports
        # With a report on stdout ('-'), everything else goes to stderr.
        self.stdout = Console(sys.stdout)
        self.console = Console(sys.stderr) if reports.to_stdout else self.stdout
        self.subjects, self.backends = targets
        self.runs: list[TargetRun] = []

    def close(self) -> None:
        for subject in self.subjects:
            subject.close()

    @property
    def size(self) -> int:
        """Checks per target: the selected cases and the cost probe."""
        return len(self.cases) + len(self.probes)

    def _checks(self, subject: Target, profiles: Set[str]) -> Iterator[CaseResult]:
        debug = self.args.debug
        if isinstance(subject, WorkerTarget):
            for case in self.cases:
                reason = skip_reason(case, profiles, subject.features)
                yield (
                    CaseResult.of(case, "skipped", reason)
                    if reason
                    else subject.run_case(case, debug=debug)
                )
            for probe in self.probes:
                yield subject.probe(probe, strict=self.args.strict_cost)
            return
        yield from run_cases(subject, self.cases, profiles, debug=debug)
        for probe in self.probes:
            yield run_probe(probe, subject, strict=self.args.strict_cost)

    def run_target(self, subject: Target, profiles: Set[str]) -> TargetRun:
        args = self.args
        results: list[CaseResult] = []
        started = time.perf_counter()
        lists = expected_failures(self.backends.get(id(subject)), self.xfail)
        checks = timed(self._checks(subject, profiles))
        if progress_wanted(sys.stderr, args.quiet):
            checks = Progress(safe_text(subject.name, NAME_LIMIT), self.size).track(checks)
        problems: tuple[str, ...] = ()
        try:
            for result in checks:
                results.append(result)
                listed = any(xfail.entry_for(result.case_id) for xfail in lists)
                self.limit.count += result.outcome in FAILING and not listed
                if self.limit.reached:
                    break
            if not self.limit.reached:
                corpus_results = tuple(r for r in results if r.case_id not in PROBE_IDS)
                if not isinstance(subject, WorkerTarget):
                    problems = fuzz_phase(subject, corpus_results, args.fuzz_examples)
                elif args.fuzz_examples and all(r.outcome in _CLEAN for r in corpus_results):
                    problems = subject.fuzz(args.fuzz_examples)  # in the worker, in process
                self.limit.count += len(problems)
        finally:
            subject.close()
        self.left = self.size - len(results)
        if isinstance(subject, CommandTarget):  # e.g. a testee that restarted as another
            problems = (*subject.problems, *problems)
        duration = time.perf_counter() - started
        run_ = TargetRun(
            subject.name, subject.name, tuple(results), self.corpus.version, problems, duration
        )
        for xfail in lists:
            run_ = apply_xfail(run_, xfail, self.corpus)
        self.runs.append(run_)
        details = "\n".join(
            filter(None, [render_failures(run_), render_blame(run_, self.corpus.by_id())])
        )
        if details:
            self.console.print(details)
        return run_

    def conclude(self) -> int:
        """Write every report, then print the card and verdict: the exit code."""
        failures = self.reports.write(self.runs, self.stdout.print)
        self.console.print(render_card(self.runs))
        self.console.print(render_verdict(self.runs, self.size))
        if failures:
            raise ReportError("cannot write report: " + "; ".join(failures))
        return 0 if all(run_.conforms for run_ in self.runs) else 1


def _refuse_unrunnable_profiles(
    requested: Sequence[str], chosen: Sequence[Case], subjects: Sequence[Target]
) -> None:
    """An explicitly requested profile a target cannot run is a usage error, not a quiet skip.

    Judged on every case the run covers, as the profile is, whatever ``-k`` selects."""
    for subject in subjects:
        gap = profile_gap(requested, chosen, subject.name, subject.features)
        if gap is not None:
            raise TargetError(f"--profile: {gap}")


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
    reports = _report_plan(args)  # a bad report path is refused before the corpus is read
    return _checked(args, reports)


#: The started targets, and for each one that is a bundled backend, its name (by ``id``).
_Targets: TypeAlias = "tuple[list[Target], dict[int, str]]"


def _start_targets(args: argparse.Namespace) -> _Targets:
    """Start every target up front, so a bad one exits 2 before any case runs."""
    subjects: list[Target] = []
    backends: dict[int, str] = {}
    window = 1 if args.no_pipeline else PIPELINE_WINDOW
    loading = progress_wanted(sys.stderr, args.quiet)  # an SDK's import may take a while
    try:
        for name in args.targets or ([] if args.cmd else list(BACKENDS)):
            if loading:
                Console(sys.stderr).print(f"loading {safe_text(name, NAME_LIMIT)} ...")
            if args.in_process:
                subjects.append(PythonTarget(resolve_target(name), name))
            else:
                subjects.append(WorkerTarget(name, args.timeout, window=window))
            if name in BACKENDS:
                backends[id(subjects[-1])] = name
        subjects.extend(_command(split_command(line), args) for line in args.cmd)
    except TargetError:
        for subject in subjects:
            subject.close()
        raise
    return subjects, backends


def _checked(args: argparse.Namespace, reports: ReportPlan) -> int:
    if args.in_process:  # the target's import is the user's to debug: in the main thread
        targets = _start_targets(args)
        corpus, chosen = chosen_cases(args)
    else:  # workers start and import their targets while the corpus loads
        with ThreadPoolExecutor(1) as pool:
            starting = pool.submit(_start_targets, args)
            try:
                corpus, chosen = chosen_cases(args)
            except UsageError:
                with contextlib.suppress(TargetError):
                    for subject in starting.result()[0]:
                        subject.close()
                raise
            targets = starting.result()
    session = _Session(args, corpus, reports, targets)
    try:
        session.cases, session.probes = _select(chosen, args.case, args.cost_probe)
        if args.in_process:
            expand(session.cases)
        session.xfail = load_xfail(args.xfail, corpus) if args.xfail else None
        _refuse_unrunnable_profiles(args.profile, chosen, session.subjects)
        reports.remove_stale()
        session.console.print(version_line())
        _run_targets(session, DEFAULT_PROFILES | set(args.profile))
    finally:
        session.close()
    return session.conclude()


def _run_targets(session: _Session, profiles: Set[str]) -> None:
    """Each target in turn, until the --maxfail limit is reached."""
    for index, subject in enumerate(session.subjects):
        run_ = session.run_target(subject, profiles)
        if session.limit.reached:
            unstarted = session.subjects[index + 1 :]
            for other in unstarted:
                other.close()
            names = [other.name for other in unstarted]
            session.console.print(_not_run(session.limit, run_.target, session.left, names))
            break
