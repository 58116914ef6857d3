"""``tokasm bench``: time scenarios on backends and targets, and answer "is mine quadratic?"."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..bench.contenders import bundled_contenders, protocol_contender, python_contender
from ..bench.plot import check_plot, write_plot
from ..bench.report import format_size, render_matrix, render_table, to_json
from ..bench.scenarios import SCENARIOS
from ..bench.sweep import FULL, QUICK, SweepSettings, run_sweep
from ..conformance._progress import progress_wanted
from ..conformance._protocol_client import DEFAULT_TIMEOUT, CommandSubject, split_command
from ..conformance.subjects import resolve_target
from ..implementations import DEFAULT_BACKEND
from .options import TARGET_HELP, at_least_one, exit_codes, positive_seconds, size_list, subcommand

if TYPE_CHECKING:
    import argparse

    from ..bench.sweep import Contender, ProgressHook
    from ..conformance.subjects import Subject
    from .options import Commands

__all__ = ["add_parser", "run"]

DESCRIPTION = f"""\
Time every scenario on every bundled backend (and the given targets) over a
sweep of stream sizes; print the cost per operation at each size, the scaling
exponent (log-log slope of time against size) with a verdict (constant,
linear, n log n, quadratic) and the peak traced memory as a multiple of the
final text.

A TARGET is MODULE:ATTR (a class or zero-argument factory) or a bundled
backend name; --cmd runs a protocol testee, measured per request. Each run is
the minimum of N interleaved repeats; a size predicted to exceed the time
budget per run is skipped ("skip"), so quadratic backends stop early.
--quick sizes are small: a quadratic cost that is copy-bound shows fully only
in the full sweep. Exit code 1 if an implementation raised during the sweep.

scenarios: {", ".join(SCENARIOS)}
"""


EXIT_CODES = exit_codes(
    "the sweep ran (a cell over the time budget is shown as skipped)",
    "an implementation raised during the sweep (shown as ERROR in the table)",
)


def add_parser(commands: Commands) -> None:
    parser = subcommand(
        commands,
        "bench",
        "benchmark backends and targets: cost, scaling exponent, memory",
        DESCRIPTION,
        EXIT_CODES,
    )
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=TARGET_HELP)
    parser.add_argument(
        "--cmd",
        action="append",
        default=[],
        metavar="COMMAND LINE",
        help="also measure this protocol testee (repeatable); every call is a request, "
        "so give it a larger --budget or smaller --sizes",
    )
    parser.add_argument(
        "--only",
        action="store_true",
        help="measure only the given targets, not every bundled backend beside them",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"sizes {', '.join(map(format_size, QUICK.sizes))}, min of {QUICK.repeats}, "
        f"{QUICK.budget:g} s budget per run: under a minute",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        choices=list(SCENARIOS),
        default=[],
        metavar="NAME",
        help="run only this scenario (repeatable)",
    )
    parser.add_argument(
        "--sizes",
        type=size_list,
        metavar="N,N,...",
        help="stream sizes in deltas, e.g. 1k,10k,100k (default "
        f"{','.join(map(format_size, FULL.sizes))})",
    )
    parser.add_argument("--repeats", type=at_least_one, metavar="N", help="min of N runs")
    parser.add_argument(
        "--budget", type=positive_seconds, metavar="SECONDS", help="skip sizes predicted slower"
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write every figure as JSON")
    parser.add_argument(
        "--plot",
        type=Path,
        metavar="FILE",
        help="write a log-log plot (.png or .svg; needs [plot])",
    )
    parser.add_argument(
        "--markdown", type=Path, metavar="PATH", help="write the tables as Markdown (docs/bench.md)"
    )
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"per-request timeout for --cmd testees (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    parser.set_defaults(run=run)


def _settings(args: argparse.Namespace) -> SweepSettings:
    base = QUICK if args.quick else FULL
    return SweepSettings(
        sizes=args.sizes or base.sizes,
        repeats=args.repeats or base.repeats,
        budget=args.budget or base.budget,
        batch=base.batch,
        memory=not args.no_memory,
    )


def _contenders(args: argparse.Namespace, subjects: list[Subject]) -> list[Contender]:
    """Bundled backends (unless --only), then each target; TargetError for a bad one."""
    contenders = [] if args.only and (args.targets or args.cmd) else bundled_contenders()
    known = {contender.name for contender in contenders}
    for target in args.targets:
        factory = resolve_target(target)
        if target not in known:
            contenders.append(python_contender(target, factory))
            known.add(target)
    for line in args.cmd:
        subject = CommandSubject(split_command(line), args.timeout)
        subjects.append(subject)
        contenders.append(protocol_contender(subject))
    return contenders


def _progress_line() -> ProgressHook:
    """Rewrite one stderr line per measurement step."""
    width = 0

    def show(scenario: str, step: str) -> None:
        nonlocal width
        line = f"bench: {scenario}: {step}"
        width = max(width, len(line))
        sys.stderr.write(f"\r{line:<{width}}")
        sys.stderr.flush()

    return show


def _write_outputs(args: argparse.Namespace, text: str, matrix: str, payload: object) -> None:
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(
            f"# tokasm bench\n\nScaling exponent and verdict per scenario and backend:\n\n"
            f"{matrix}\n\nDetails (time per operation at each size):\n\n```text\n{text}\n```\n",
            encoding="utf-8",
        )


def run(args: argparse.Namespace) -> int:
    subjects: list[Subject] = []
    try:
        return _measure(args, _contenders(args, subjects))
    finally:
        for subject in subjects:
            subject.close()


def _measure(args: argparse.Namespace, contenders: list[Contender]) -> int:
    settings = _settings(args)
    if args.plot:
        check_plot(args.plot)  # fail before measuring, not after
    scenarios = [SCENARIOS[name] for name in args.scenario] or list(SCENARIOS.values())
    if any(contender.per_request for contender in contenders):
        print("protocol testees are measured per request: their costs include the round trip")
    progress = _progress_line() if progress_wanted(sys.stderr, args.quiet) else None
    started = time.perf_counter()
    results = run_sweep(scenarios, contenders, settings, progress)
    if progress:
        sys.stderr.write("\r\033[K")
    text = render_table(results, settings, DEFAULT_BACKEND)
    matrix = render_matrix(results, DEFAULT_BACKEND)
    print(text)
    print()
    print(matrix)
    print(
        f"\n{len(scenarios)} scenarios x {len(contenders)} implementations, "
        f"min of {settings.repeats}, in {time.perf_counter() - started:.0f} s"
    )
    _write_outputs(args, text, matrix, to_json(results, settings, DEFAULT_BACKEND))
    if args.plot:
        write_plot(results, args.plot, DEFAULT_BACKEND)
    failed = [s.contender.name for s in results if s.error]
    if failed:
        print(f"tokasm bench: {', '.join(sorted(set(failed)))} raised; see the table")
        return 1
    return 0
