"""``tokasm check``: run the corpus against targets and print a report card."""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from tokasm import report
from tokasm._display import safe_text
from tokasm.cli import options
from tokasm.cli.options import FILE, FLAG, LISTED, PATH
from tokasm.corpus import PROFILES, profile_gap
from tokasm.errors import CorpusError, ReportError, TargetError, UsageError, XfailError
from tokasm.fuzz import CHECK_EXAMPLES, fuzz_phase
from tokasm.implementations import BACKENDS
from tokasm.protocol import DEFAULT_TIMEOUT, PIPELINE_WINDOW, START_TIMEOUT
from tokasm.run import (
    DEFAULT_PROFILES,
    FAILING,
    PROBE_IDS,
    STREAM_PROBE_ID,
    TargetRun,
    run_cases,
    run_probe,
    skip_reason,
    timed,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from tokasm.cli.options import Commands
    from tokasm.corpus import Case, Corpus
    from tokasm.run import Target

DESCRIPTION = """\
Run the conformance corpus against one or more targets.

With no TARGET, every bundled backend is checked. A TARGET is MODULE:ATTR,
where ATTR is a class or a zero-argument factory returning a fresh assembler
(the current folder is importable; MODULE may be a file's path), or the name
of a bundled backend. Each runs in a worker process of its own: whatever it
does there (exit, crash, hang, eat memory) errors the case it was running,
and the run goes on (docs/guarantees.md).

Output: the tokasm, corpus and protocol versions; each case that did not
pass, with its rules (SPEC.md ids), description, failing step, the event sent
and the expected and actual values; for a target with failures, the rules
most likely broken, worst first; a report card (target x outcome); and a
closing CONFORMANCE PASSED/FAILED line with the counts. tokasm list and
tokasm show CASE print the cases themselves.

Besides the corpus, each target gets two cost probes (docs/cost.md), reported,
selected (-k) and listed (--xfail) like cases. cost.cache-final (CACHE-FINAL):
reads after final must not grow with the message; the bundled naive-join
breaks it by design, an expected failure. cost.stream-linear (STREAM-LINEAR,
a SHOULD): whether an append costs more as the text grows; a finding, shown
on a passed result.

Report paths are checked before any case runs; an old report is deleted when
the first case runs and the new one written whole when the run ends, so an
interrupted run leaves none. PATH '-' sends one report to stdout, and the
rest of the output to stderr. Cases an --xfail list names (for every target)
are expected to fail: one that passes, or a line matching no case, fails the
run, so the list cannot go stale.

The same checks from pytest, one test per case, then cost.cache-final and
fuzz items (works with pytest-xdist):
  python -m pytest --pyargs tokasm.conformance --tokasm-assembler MODULE:ATTR
"""


EXIT_CODES = options.exit_codes(
    "every target conforms",
    "a case failed or errored, an expected failure passed or went stale,\n"
    "     or the fuzz phase found a counterexample",
)


def add_parser(commands: Commands) -> None:
    parser = options.subcommand(
        commands, "check", "run the conformance corpus against targets", DESCRIPTION, EXIT_CODES
    )
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=options.TARGET_HELP)
    profile = (
        "also run this optional profile (repeatable); 'required', the seed's contract, "
        "always runs; 'incremental' needs read_since"
    )
    glob = "run only cases whose id matches this glob (repeatable)"
    options.add_options(
        parser,
        ("--profile", profile, {**LISTED, "choices": PROFILES}),
        ("-k --case", glob, {**LISTED, "metavar": "GLOB"}),
    )
    options.add_case_options(parser)
    cmd = (
        "also check this testee command, started once and spoken to over the line "
        "protocol (repeatable; split like a shell would, e.g. 'node tokasm-testee.js')"
    )
    timeout = (
        f"seconds one call into a target may take (default {DEFAULT_TIMEOUT:g}); a call "
        "that takes longer errors its case (with its stack, for a Python target), the "
        "target's process is killed and a fresh one runs the next case. Starting a testee "
        f"gets at least {START_TIMEOUT:g} s; loading a Python target, 60 s"
    )
    pipeline = (
        "send testees one request at a time, waiting for each response (by default a "
        f"case's requests are written up to {PIPELINE_WINDOW} ahead; spec/PROTOCOL.md)"
    )
    isolate = "deprecated, and the default now: every Python TARGET runs in a worker process"
    options.add_options(
        parser.add_argument_group("protocol testees (spec/PROTOCOL.md)"),
        ("--cmd", cmd, {**LISTED, "metavar": "COMMAND LINE"}),
        ("--timeout", timeout, {**options.SECONDS, "default": DEFAULT_TIMEOUT}),
        ("--no-pipeline", pipeline, FLAG),
        ("--isolate", isolate, FLAG),
    )
    in_process = (
        "run Python targets in tokasm's own process, for a debugger (pdb): UNGUARDED, "
        "it trusts the target (no --timeout; a target that exits, crashes or hangs ends "
        "or stops the run)"
    )
    options.add_options(parser, ("--in-process", in_process, FLAG))
    write_xfail = (
        "write the cases failing now as an --xfail file (ids sorted, reasons as comments; "
        "a reason already in FILE is kept); '-' for stdout"
    )
    options.add_options(
        parser.add_argument_group("reports and expected failures"),
        ("--json", "write a JSON report (schema: spec/report.schema.json); '-' for stdout", PATH),
        ("--junit", "write JUnit XML; '-' for stdout", PATH),
        ("--markdown", "write a Markdown report card for a PR; '-' for stdout", PATH),
        ("--xfail", "expected failures: one case id or glob per line, '# reason' allowed", FILE),
        ("--write-xfail", write_xfail, FILE),
        ("-q --quiet", "no progress line (it is off in CI anyway)", FLAG),
    )
    maxfail = (
        "stop after N unexpected failures, counted across targets (expected failures "
        "do not count); the output says what was not run"
    )
    cost_probe = (
        f"measure CACHE-FINAL and STREAM-LINEAR on each target as the checks "
        f"{' and '.join(PROBE_IDS)} (default on; about 0.3 s each for a Python target, 0.3 to "
        "3 s over the protocol; docs/cost.md)"
    )
    strict_cost = (
        f"fail {STREAM_PROBE_ID} when an append grows with the text (by default a finding)"
    )
    fuzz_examples = (
        f"when every case passes, fuzz each target against the model with N examples "
        f"(default {CHECK_EXAMPLES}, fixed seed; 0 turns it off); a disagreement fails the run "
        "and prints the shrunk counterexample as a corpus case (more: tokasm fuzz)"
    )
    options.add_options(
        parser,
        ("--maxfail", maxfail, options.NUMBER),
        ("--cost-probe", cost_probe, {"action": argparse.BooleanOptionalAction}),
        ("--strict-cost", strict_cost, FLAG),
        (
            "--fuzz-examples",
            fuzz_examples,
            {**options.NUMBER, "type": options.non_negative, "default": CHECK_EXAMPLES},
        ),
    )
    # cost_probe on, set apart from the option: Python 3.10 appends "(default: True)" to the
    # help of a BooleanOptionalAction that has a default of its own.
    parser.set_defaults(run=run, cost_probe=True)


def _report_plan(args: argparse.Namespace, corpus: Callable[[], Corpus]) -> report.ReportPlan:
    """Every report asked for, checked before any target loads (keeping --write-xfail's reasons,
    and its lines about the cases of ``corpus()``, the run's, that the run does not check)."""
    keep = None
    if args.write_xfail is not None and str(args.write_xfail) != "-" and args.write_xfail.is_file():
        try:
            keep = report.load_xfail(args.write_xfail)
        except XfailError as error:
            raise ReportError(f"--write-xfail: will not replace it: {error}") from None
    return report.ReportPlan(
        [
            ("--json", args.json, report.json_text),
            ("--junit", args.junit, report.junit_text),
            ("--markdown", args.markdown, report.markdown_report),
            (
                "--write-xfail",
                args.write_xfail,
                lambda runs: report.render_xfail(runs, keep, corpus()),
            ),
        ],
        args.xfail,
        options.case_sources(args),
    )


def _start_targets(args: argparse.Namespace, targets: list[tuple[Target, str | None]]) -> None:
    """Start every target into ``targets``, with its backend's name: a bad one exits 2 at once."""
    window = 1 if args.no_pipeline else PIPELINE_WINDOW
    loading = report.progress_wanted(sys.stderr, args.quiet)  # an SDK's import may take a while
    for name in args.targets or ([] if args.cmd else list(BACKENDS)):
        if loading:
            options.Console(sys.stderr).print(f"loading {safe_text(name, report.NAME_LIMIT)} ...")
        target = options.start_target(args, name, window=window)
        targets.append((target, name if name in BACKENDS else None))
    for line in args.cmd:
        targets.append((options.start_target(args, line, command=True, window=window), None))


def run(args: argparse.Namespace) -> int:
    if args.strict_cost and not args.cost_probe:
        raise UsageError("--strict-cost needs the cost probe: leave out --no-cost-probe")
    # a bad report path is refused before the corpus is read (the reports are written after)
    reports = _report_plan(args, lambda: corpus)
    targets: list[tuple[Target, str | None]] = []
    try:
        # the corpus loads while the targets start, here: an --in-process import is for pdb
        with ThreadPoolExecutor(1) as pool:
            loading = pool.submit(options.chosen_cases, args)
            _start_targets(args, targets)
            corpus, chosen = loading.result()
        check = _Check(args, corpus, chosen, reports.to_stdout)
        xfail = report.load_xfail(args.xfail, corpus) if args.xfail else None
        for target, _ in targets:  # a profile asked for that a target cannot run: not a skip
            if gap := profile_gap(args.profile, chosen, target.name, target.features):
                raise TargetError(f"--profile: {gap}")
            why = [skip_reason(case, check.profiles, target.features) for case in check.cases]
            if not check.probes and all(why):  # every case a skip: no silent pass
                said = "; ".join(sorted(set(filter(None, why))))
                raise CorpusError(f"nothing selected runs on {target.name}: {said}")
        reports.remove_stale()
        check.console.print(options.version_line())
        for index, (target, backend) in enumerate(targets):
            left = check.run_target(target, report.expected_failures(backend, xfail))
            if check.failures >= check.maxfail:
                unstarted = [other.name for other, _ in targets[index + 1 :]]
                parts = [f"{left} checks of {target.name} and its fuzz phase"] if left else []
                parts += [f"targets {', '.join(unstarted)}"] if unstarted else []
                check.console.print(
                    f"stopped after {check.failures} unexpected failures (--maxfail "
                    f"{check.maxfail}); "
                    + (f"not run: {'; '.join(parts)}" if parts else "everything selected had run")
                )
                break
    finally:
        for target, _ in targets:
            target.close()
    failures = reports.write(check.runs, check.stdout.print)
    check.console.print(report.render_card(check.runs))
    check.console.print(report.render_verdict(check.runs, len(check.cases) + len(check.probes)))
    if failures:
        raise ReportError("cannot write report: " + "; ".join(failures))
    return 0 if all(done.conforms for done in check.runs) else 1


class _Check:
    """One ``check`` run: what it runs, the unexpected failures so far, the results."""

    def __init__(
        self, args: argparse.Namespace, corpus: Corpus, chosen: list[Case], to_stdout: bool
    ) -> None:
        """CorpusError, not a pass, if ``-k`` leaves nothing to run."""
        self.args, self.corpus = args, corpus
        self.cases, probes = options.select(chosen, args.case)
        if not self.cases and not args.cost_probe:
            raise CorpusError(
                f"-k {' '.join(args.case)} selects only {', '.join(probes)}, which "
                "--no-cost-probe turns off: nothing to run"
            )
        self.probes = probes if args.cost_probe else []  # they run after the cases
        self.profiles = DEFAULT_PROFILES | set(args.profile)
        self.maxfail: float = args.maxfail or math.inf
        self.failures = 0  # unexpected ones, across targets (--maxfail)
        self.runs: list[TargetRun] = []
        # With a report on stdout ('-'), everything else goes to stderr.
        self.stdout = options.Console(sys.stdout)
        self.console = options.Console(sys.stderr) if to_stdout else self.stdout

    def run_target(self, target: Target, lists: list[report.XfailList]) -> int:
        """Every check (until --maxfail) and the fuzz phase, printing what did not pass; the
        number of checks --maxfail left unrun."""
        args, results = self.args, []
        problems: tuple[str, ...] = ()
        size = len(self.cases) + len(self.probes)
        started = time.perf_counter()
        probes = (run_probe(probe, target, strict=args.strict_cost) for probe in self.probes)
        cases = run_cases(target, self.cases, self.profiles, debug=args.debug)
        checks = timed(itertools.chain(cases, probes))
        if report.progress_wanted(sys.stderr, args.quiet):
            checks = report.Progress(safe_text(target.name, report.NAME_LIMIT), size).track(checks)
        try:
            for result in checks:
                results.append(result)
                listed = any(xfail.entry_for(result.case_id) for xfail in lists)
                self.failures += result.outcome in FAILING and not listed
                if self.failures >= self.maxfail:
                    break
            else:  # the fuzz phase looks for what the corpus missed: after a clean run only
                ran = [r for r in results if r.case_id not in PROBE_IDS]
                incremental = "incremental" in self.profiles
                problems = fuzz_phase(target, ran, args.fuzz_examples, incremental=incremental)
                self.failures += len(problems)
        finally:
            target.close()
        # a testee's own problems first, e.g. one that restarted as another
        problems = (*getattr(target, "problems", ()), *problems)
        duration = time.perf_counter() - started
        # a name an earlier target has (a testee may announce any) is told apart: "name #2"
        taken, name = {run.target for run in self.runs}, target.name
        numbered = (f"{name} #{number}" for number in itertools.count(2))
        label = next(label for label in itertools.chain([name], numbered) if label not in taken)
        done = TargetRun(
            label, target.name, tuple(results), self.corpus.version, problems, duration
        )
        for xfail in lists:
            done = report.apply_xfail(done, xfail, self.corpus)
        self.runs.append(done)
        blamed = report.render_blame(done, self.corpus.by_id())
        details = "\n".join(filter(None, [report.render_failures(done), blamed]))
        if details:
            self.console.print(details)
        return size - len(results)
