"""``tokasm check``: run the corpus against targets and print a report card."""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import gc
import sys
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tokasm._clocks import Clocks
from tokasm._display import safe_text
from tokasm._versions import version_line
from tokasm.cli._cases import add_case_options, chosen_cases
from tokasm.cli._console import Console, StdoutDiversion, end_process, guarded_run
from tokasm.cli.options import (
    TARGET_HELP,
    at_least_one,
    exit_codes,
    non_negative,
    positive_seconds,
    subcommand,
)
from tokasm.corpus._load import PROFILES, expand, profile_gap
from tokasm.errors import (
    EXIT_FAILED,
    EXIT_USAGE,
    CorpusError,
    ReportError,
    TargetError,
    UsageError,
    XfailError,
)
from tokasm.fuzz._phase import CHECK_EXAMPLES, fuzz_phase
from tokasm.implementations import BACKENDS
from tokasm.protocol._client import (
    DEFAULT_TIMEOUT,
    PIPELINE_WINDOW,
    START_TIMEOUT,
    CommandSubject,
    prestart,
    split_command,
)
from tokasm.protocol.testee import python_testee_command
from tokasm.report._blame import render_blame
from tokasm.report._progress import Progress, progress_wanted
from tokasm.report._render import (
    NAME_LIMIT,
    ReportPlan,
    json_text,
    junit_text,
    markdown_report,
    render_card,
    render_failures,
    render_verdict,
)
from tokasm.report._xfail import (
    XfailList,
    apply_xfail,
    expected_failures,
    load_xfail,
    render_xfail,
)
from tokasm.run._cost import PROBE_ID, probe_cache_final, probe_result
from tokasm.run._frames import quiet_stray_errors
from tokasm.run._watchdog import Watchdog, hang_text
from tokasm.run.results import FAILING, CaseResult, TargetRun, timed
from tokasm.run.runner import DEFAULT_PROFILES, run_cases
from tokasm.run.subjects import PythonSubject, Subject, resolve_target

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence, Set

    from tokasm.cli.options import Commands
    from tokasm.corpus._load import Case, Corpus

__all__ = ["add_parser", "run"]

#: What the cost probe costs, as docs/cost.md measured it (said in the description and
#: in --cost-probe's help).
PROBE_COST = "about 0.1 s in process, 0.3 to 3 s over the protocol"

DESCRIPTION = f"""\
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
{PROBE_COST} (--no-cost-probe skips it).
The bundled naive-join breaks it by design: an expected failure.

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
    "     or the fuzz phase found a counterexample; also when an in-process\n"
    "     target hung for --timeout seconds: its case errors with the hung\n"
    "     code's stack, the reports are written, and the run ends there (a\n"
    "     thread cannot be stopped; --isolate runs a target in its own process)",
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
        help=f"per-request timeout (default {DEFAULT_TIMEOUT:g}). For testees (starting and "
        f"hello get at least {START_TIMEOUT:g}) a request that times out errors its case and "
        "the testee is restarted. In process, a call into the target (or its import) that runs "
        "this long (loading it: twice as long) is reported with its stack, as that case's "
        "error (exit 1; exit 2 while loading), and the run ends after writing the reports",
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
        help="run each TARGET in its own testee process "
        "(python -m tokasm.protocol.testee TARGET), so one that hangs costs one case",
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
        help=f"measure CACHE-FINAL on each target as the check {PROBE_ID} (default on; "
        f"{PROBE_COST}; docs/cost.md)",
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


def _select(corpus: list[Case], patterns: list[str], cost_probe: bool) -> tuple[list[Case], bool]:
    """The cases ``-k`` selects, and whether the cost probe runs too (``cost_probe``:
    not turned off). A selection that leaves nothing to run is an error, not a pass."""
    if not patterns:
        return list(corpus), cost_probe

    def chosen(case_id: str) -> bool:
        return any(fnmatch.fnmatchcase(case_id, pattern) for pattern in patterns)

    cases = [case for case in corpus if chosen(case.id)]
    probe = chosen(PROBE_ID)
    if not cases and not probe:
        raise CorpusError(f"no case id matches {patterns}")
    if not cases and not cost_probe:
        raise CorpusError(
            f"-k {' '.join(patterns)} selects only {PROBE_ID}, which --no-cost-probe turns off: "
            "nothing to run"
        )
    return cases, probe and cost_probe


def _command(argv: list[str], args: argparse.Namespace) -> CommandSubject:
    window = 1 if args.no_pipeline else PIPELINE_WINDOW
    return CommandSubject(argv, args.timeout, window=window)


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
    """One ``check`` run, kept up to date so a hung target can still be reported in full.

    The watchdog calls ``hung`` on its own thread while the main thread is stuck
    in target code; it reports what is known, writes the reports and ends the
    process (see ``tokasm.run._watchdog``).
    """

    def __init__(
        self,
        args: argparse.Namespace,
        corpus: Corpus,
        cases: list[Case],
        xfail: XfailList | None,
        reports: ReportPlan,
        *,
        probe: bool,
    ) -> None:
        self.args = args
        self.corpus = corpus
        self.cases = cases
        self.probe = probe  # the cost probe runs after the cases
        self.xfail = xfail
        self.limit = _FailureLimit(args.maxfail)
        self.left = 0  # checks of the current target not run (--maxfail)
        self.reports = reports
        # Printing that a closed pipe or a target closing sys.stdout cannot stop;
        # with a report on stdout ('-'), everything else goes to stderr.
        self.diversion = StdoutDiversion()  # entered only with a report on stdout
        self._stdout = Console(sys.stdout)
        self.console = Console(sys.stderr) if reports.to_stdout else self._stdout
        self.started = Clocks.perf_counter()  # the current target's start
        self.watchdog = Watchdog(args.timeout, self.hung)
        self.subjects: list[Subject] = []
        self.backends: dict[int, str] = {}  # id of a subject -> the bundled backend it is
        self.runs: list[TargetRun] = []
        self.results: list[CaseResult] = []  # the current target's results so far
        self.loading: str | None = None  # the in-process target being imported
        self.fuzzing = False

    def _subject(self, target: str) -> Subject:
        if self.args.isolate:
            return _command(python_testee_command(target), self.args)
        self.loading = target
        try:
            with self.watchdog.loading():
                return PythonSubject(resolve_target(target), target, watchdog=self.watchdog)
        finally:
            self.loading = None

    def start(self) -> None:
        """Start every target up front, so a bad one exits 2 before any case runs."""
        args = self.args
        names: list[str] = args.targets or ([] if args.cmd else list(BACKENDS))
        try:
            for name in names:
                self.subjects.append(self._subject(name))
                if name in BACKENDS:
                    self.backends[id(self.subjects[-1])] = name
            self.subjects.extend(_command(split_command(line), args) for line in args.cmd)
        except TargetError:
            self.close()
            raise

    def close(self) -> None:
        for subject in self.subjects:
            subject.close()

    @property
    def size(self) -> int:
        """Checks per target: the selected cases and the cost probe."""
        return len(self.cases) + self.probe

    def _checks(self, subject: Subject, profiles: Set[str]) -> Iterator[CaseResult]:
        yield from run_cases(subject, self.cases, profiles, debug=self.args.debug)
        if self.probe:
            yield probe_cache_final(subject)

    def run_target(self, subject: Subject, profiles: Set[str]) -> TargetRun:
        args = self.args
        self.results, self.fuzzing = [], False
        self.started = Clocks.perf_counter()
        lists = expected_failures(self.backends.get(id(subject)), self.xfail)
        results = timed(self._checks(subject, profiles))
        if progress_wanted(sys.stderr, args.quiet):
            results = Progress(safe_text(subject.name, NAME_LIMIT), self.size).track(results)
        problems: tuple[str, ...] = ()
        try:
            for result in results:
                self.results.append(result)  # one at a time: hung() reads them
                listed = any(xfail.entry_for(result.case_id) for xfail in lists)
                self.limit.count += result.outcome in FAILING and not listed
                if self.limit.reached:
                    break
            if not self.limit.reached:
                self.fuzzing = True
                corpus_results = tuple(r for r in self.results if r.case_id != PROBE_ID)
                problems = fuzz_phase(subject, corpus_results, args.fuzz_examples)
                self.limit.count += len(problems)
        finally:
            if isinstance(results, Generator):
                results.close()
            subject.close()
        self.left = self.size - len(self.results)
        if isinstance(subject, CommandSubject):  # e.g. a testee that restarted as another
            problems = (*subject.problems, *problems)
        return self.finish_target(subject, tuple(self.results), problems)

    def finish_target(
        self, subject: Subject, results: tuple[CaseResult, ...], problems: tuple[str, ...] = ()
    ) -> TargetRun:
        duration = Clocks.perf_counter() - self.started
        run_ = TargetRun(
            subject.name, subject.name, results, self.corpus.version, problems, duration
        )
        for xfail in expected_failures(self.backends.get(id(subject)), self.xfail):
            run_ = apply_xfail(run_, xfail, self.corpus)
        self.runs.append(run_)
        details = "\n".join(
            filter(None, [render_failures(run_), render_blame(run_, self.corpus.by_id())])
        )
        if details:
            self.console.print(details)
        return run_

    @property
    def stdout(self) -> Console:
        """Where a report on stdout goes (its own way there while targets are diverted)."""
        return self.diversion.report if self.reports.to_stdout else self._stdout

    def _report_stdout(self) -> Callable[[str], None]:
        """How a report on stdout is printed, or refused if a target took its descriptor."""
        if not (self.reports.to_stdout and not self.diversion.intact):
            return self.stdout.print

        def refuse(text: str) -> None:
            raise OSError("a target closed or replaced the descriptor kept for stdout")

        return refuse

    def hung(self, seconds: float, stack: str) -> None:
        """The watchdog's report of a target call that ran ``seconds``: report, then exit."""
        try:
            code = self._report_hang(seconds, stack)
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # the process must end whatever happens here
            code = EXIT_FAILED
        finally:
            self.close()
        end_process(code)

    def _report_hang(self, seconds: float, stack: str) -> int:
        hang = hang_text(seconds, self.args.timeout, stack)
        if self.loading is not None:
            Console(sys.stderr).print(
                f"tokasm check: error: target {self.loading!r}: loading it hung: {hang}"
            )
            return EXIT_USAGE
        current = self.subjects[len(self.runs)]
        if self.fuzzing:
            self.finish_target(current, tuple(self.results), (f"fuzz phase: {hang}",))
        else:
            done = len(self.results)
            if done < len(self.cases):
                self.results.append(CaseResult.of(self.cases[done], "errored", hang))
                self.results.extend(
                    CaseResult.of(case, "skipped", "not run: an earlier case hung")
                    for case in self.cases[done + 1 :]
                )
                if self.probe:
                    self.results.append(probe_result("skipped", "not run: an earlier case hung"))
            else:
                self.results.append(probe_result("errored", hang))
            self.finish_target(current, tuple(self.results))
        for subject in self.subjects[len(self.runs) :]:
            self.finish_target(subject, (), ("not run: an earlier target hung",))
        try:
            return self.conclude()
        except UsageError as error:  # a report that failed: say so, as main() would
            Console(sys.stderr).print(f"tokasm check: error: {error}")
            return EXIT_USAGE

    def conclude(self) -> int:
        """Write every report (each on its own, before anything is printed that a closed
        stdout could stop), then print the card and verdict: the exit code."""
        failures = self.reports.write(self.runs, self._report_stdout())
        self.console.print(render_card(self.runs))
        self.console.print(render_verdict(self.runs, self.size))
        if failures:
            raise ReportError("cannot write report: " + "; ".join(failures))
        return 0 if all(run_.conforms for run_ in self.runs) else 1


def _refuse_unrunnable_profiles(
    requested: Sequence[str], chosen: Sequence[Case], subjects: Sequence[Subject]
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
    with guarded_run():
        return _check(args)


def _check(args: argparse.Namespace) -> int:
    reports = _report_plan(args)  # a bad report path is refused before the corpus is read
    return _checked(args, reports)


def _checked(args: argparse.Namespace, reports: ReportPlan) -> int:
    for line in args.cmd:  # testees boot while the corpus is read
        with contextlib.suppress(TargetError):  # said when the session starts the targets
            prestart(split_command(line))
    corpus, chosen = chosen_cases(args)
    cases, probe = _select(chosen, args.case, args.cost_probe)
    expand(cases)  # now, while testees boot, not between their requests
    xfail: XfailList | None = load_xfail(args.xfail, corpus) if args.xfail else None
    session = _Session(args, corpus, cases, xfail, reports, probe=probe)
    quiet_stray_errors()
    # With a report on stdout ('-'), what a target writes there goes to stderr instead.
    diverted = session.diversion if reports.to_stdout else contextlib.nullcontext()
    opening = version_line()  # now: the corpus's VERSION file is read before any target loads
    with _frozen(), diverted:
        with session.watchdog:
            session.start()
            try:
                _refuse_unrunnable_profiles(args.profile, chosen, session.subjects)
                reports.remove_stale()
                session.console.print(opening)
                _run_targets(session, DEFAULT_PROFILES | set(args.profile))
            finally:
                session.close()
        return session.conclude()


@contextlib.contextmanager
def _frozen() -> Generator[None, None, None]:
    """Everything made so far, the expanded corpus above all, kept out of the garbage
    collector's walks while the targets run (it lives as long as the run, and each full
    collection walked its 70,000 steps: a check fuzzing seven targets took 12% less time).
    Thawed at the end, so a program that calls ``main`` again keeps none of its garbage; left
    alone in a program that froze objects of its own (thawing would thaw those too)."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


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
