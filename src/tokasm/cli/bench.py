"""``tokasm bench``: time scenarios on backends and targets, and answer "is mine quadratic?"."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from tokasm import bench
from tokasm.bench import FULL, QUICK, SCENARIOS, format_size
from tokasm.cli import options
from tokasm.cli.options import FILE, FLAG, LISTED, NUMBER, PATH, SECONDS
from tokasm.errors import ReportError
from tokasm.implementations import DEFAULT_BACKEND
from tokasm.protocol import DEFAULT_TIMEOUT
from tokasm.report import Progress, destinations, progress_wanted, write_text_atomically
from tokasm.run import resolve_target

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from tokasm.bench import BenchTarget
    from tokasm.cli.options import Commands
    from tokasm.run import Target

DESCRIPTION = f"""\
Time every scenario on every bundled backend (and the given targets) over a
sweep of stream sizes; print the cost per operation at each size, the scaling
exponent (log-log slope of time against size, with its error), how the cost
of an event grows from a text of 256k characters to one of 16M (--quick: 64k
to 1M), a verdict
(constant, linear, superlinear, quadratic, worse than quadratic; grows for an
operation whose cost grows with the text; inconclusive where the noise allows
two) and the peak traced memory as a multiple of the final text.

Each TARGET is measured in a worker process of its own, with the CPU time of
its thread, in rounds of one short batch per size (the exponent: the slope
through each size's fastest batch); a worker that hangs or dies is killed,
and what happened is that scenario's error. Each run is predicted from the
smaller sizes first, and skipped if over --budget or if it would end past
--max-time. append_to_long and the long texts vary the length of the text,
not the number of deltas. read_since_each_delta (the optional incremental
profile) runs only when named with --scenario: the seed never names read_since.
Off a terminal, one line per finished cell goes to stderr.

scenarios: {", ".join(SCENARIOS)}
"""


EXIT_CODES = options.exit_codes(
    "the sweep ran (what was over --budget or past --max-time is skipped; a hang is stopped)",
    "an implementation raised, died or sent a bad line during the sweep (ERROR in the table)",
)


def add_parser(commands: Commands) -> None:
    parser = options.subcommand(
        commands,
        "bench",
        "benchmark backends and targets: cost, scaling exponent, memory",
        DESCRIPTION,
        EXIT_CODES,
    )
    named = {**LISTED, "choices": list(SCENARIOS), "metavar": "NAME"}
    size_list = {"type": options.size_list, "metavar": "N,N,..."}
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=options.TARGET_HELP)
    quick = (
        f"sizes {', '.join(map(format_size, QUICK.sizes))}, up to {QUICK.repeats} rounds, "
        f"{QUICK.budget:g} s budget per run, --max-time {QUICK.max_time:g}"
    )
    sizes = ",".join(map(format_size, FULL.sizes))
    cmd = "also measure this protocol testee (repeatable), per request in wall time"
    timeout = (
        f"per-request timeout of --cmd testees (default {DEFAULT_TIMEOUT:g}); loading a target "
        "may take twice as long"
    )
    max_time = f"start nothing predicted to end later than this (default {FULL.max_time:g})"
    options.add_options(
        parser,
        ("--cmd", cmd, {**LISTED, "metavar": "COMMAND LINE"}),
        ("--only", "measure only the given targets, no bundled backend", FLAG),
        ("--quick", quick, FLAG),
        ("--scenario", "run only this scenario (repeatable)", named),
        ("--sizes", f"stream sizes in deltas, e.g. 1k,10k,100k (default {sizes})", size_list),
        ("--repeats", "up to N rounds", NUMBER),
        ("--budget", f"skip a run predicted slower than this (default {FULL.budget:g})", SECONDS),
        ("--max-time", max_time, SECONDS),
        ("--no-memory", "skip the tracemalloc runs", FLAG),
        ("--json", "write every figure as JSON; '-' for stdout", PATH),
        ("--plot", "write a log-log plot (.png or .svg; needs [plot])", FILE),
        ("--markdown", "write the tables as Markdown (docs/bench.md); '-' for stdout", PATH),
        ("--timeout", timeout, {**SECONDS, "default": DEFAULT_TIMEOUT}),
        ("--in-process", "measure Python targets in this process, for a debugger: UNGUARDED", FLAG),
        ("-q --quiet", "no progress: no live line, no per-cell log", FLAG),
    )
    parser.set_defaults(run=run)


def _bench_targets(args: argparse.Namespace, targets: list[Target]) -> list[BenchTarget]:
    """Bundled backends (unless --only), then each target; TargetError for a bad one."""
    only = args.only and (args.targets or args.cmd)
    bench_targets = [] if only else bench.bundled_targets(args.in_process)
    known = {bench_target.name for bench_target in bench_targets}
    for target in dict.fromkeys(args.targets):
        if target not in known and args.in_process:
            bench_targets.append(bench.python_target(target, resolve_target(target)))
        elif target not in known:
            bench_targets.append(bench.load_target(target, args.timeout))
    for line in args.cmd:
        targets.append(options.start_target(args, line, command=True))
        bench_targets.append(bench.protocol_target(targets[-1]))
    return bench_targets


def _check_report_paths(args: argparse.Namespace) -> None:
    """ReportError before measuring: a report that cannot be written, two on one file or '-'."""
    if args.plot:
        bench.check_plot(args.plot)
    reports = ("--json", "--markdown", "--plot")
    given = [(option, path) for option in reports if (path := getattr(args, option[2:]))]
    for option, path in given:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ReportError(
                f"{option} {str(path)!r}: cannot create its folder: {error}"
            ) from None
    destinations(given)


def _write(path: Path, text: str, stdout: options.Console) -> None:
    """A report written whole to ``path``, or to stdout for '-'."""
    if str(path) == "-":
        stdout.print(text)
    else:
        write_text_atomically(path, text + "\n")


def run(args: argparse.Namespace) -> int:
    targets: list[Target] = []
    try:
        _check_report_paths(args)
        return _measure(args, _bench_targets(args, targets))
    finally:
        for target in targets:
            target.close()


def _measure(args: argparse.Namespace, bench_targets: list[BenchTarget]) -> int:
    names = ("sizes", "repeats", "budget", "max_time")
    given = {name: value for name in names if (value := getattr(args, name))}
    settings = replace(QUICK if args.quick else FULL, memory=not args.no_memory, **given)
    scenarios = [SCENARIOS[name] for name in args.scenario] or [
        scenario for scenario in SCENARIOS.values() if not scenario.needs_read_since
    ]  # a method the seed never names is called only when asked for
    # a reader gone (``| head``) costs the rest of the output, no report and not the status;
    # with a report on stdout ('-'), the tables go to stderr
    stdout = options.Console(sys.stdout)
    console = options.Console(sys.stderr) if "-" in (str(args.json), str(args.markdown)) else stdout
    if any(bench_target.per_request for bench_target in bench_targets):
        console.print(
            "protocol testees are measured per request: their costs include the round trip"
        )
    started = time.perf_counter()
    line = Progress("bench") if progress_wanted(sys.stderr, args.quiet) else None

    def progress(text: str, finished: bool) -> None:
        """On a terminal, the step under way; else a line per finished cell (a log keeps all)."""
        if line and not finished:
            line.draw(f"bench: {text}")
        elif finished and not line:
            print(f"bench: {text} [{time.perf_counter() - started:.0f} s]", file=sys.stderr)

    try:
        sweep = None if args.quiet else progress
        results = bench.run_sweep(scenarios, bench_targets, settings, sweep, args.timeout)
    finally:
        if line:
            line.erase()
    text = bench.render_table(results, settings, DEFAULT_BACKEND)
    matrix = bench.render_matrix(results, DEFAULT_BACKEND)
    fewest = min((len(p.batches) for s in results for p in s.points), default=settings.repeats)
    runs = "" if fewest == settings.repeats else f"{fewest} to "
    stopped = bench.over_max_time(results) and f", stopped by --max-time {settings.max_time:g} s"
    console.print(
        f"{text}\n\n{matrix}\n\n{len(scenarios)} scenarios x {len(bench_targets)} implementations, "
        f"min of {runs}{settings.repeats}, in {time.perf_counter() - started:.0f} s{stopped or ''}"
    )
    try:
        if args.json:
            payload = bench.to_json(results, settings, DEFAULT_BACKEND)
            _write(args.json, json.dumps(payload, indent=2), stdout)
        if args.markdown:
            _write(
                args.markdown,
                f"# tokasm bench\n\nScaling exponent and verdict per scenario and backend:\n\n"
                f"{matrix}\n\nDetails (time per operation at each size):\n\n```text\n{text}\n```",
                stdout,
            )
        if args.plot:
            bench.write_plot(results, args.plot, DEFAULT_BACKEND)
    except OSError as error:
        raise ReportError(f"cannot write report: {error}") from None
    if failed := sorted({s.bench_target.name for s in results if s.error}):
        console.print(f"tokasm bench: {', '.join(failed)} raised or died; see the table")
        return 1
    return 0
