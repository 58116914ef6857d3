"""``tokasm list`` (a line per case) and ``tokasm show`` (a case's steps): what the corpus
checks, before running anything; both include the cost probes, named like cases."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from tokasm._display import show
from tokasm.cli import options
from tokasm.corpus import Raises
from tokasm.implementations import DEFAULT_BACKEND
from tokasm.run import PROBE_IDS, PROBE_STEPS, probe_named

if TYPE_CHECKING:
    import argparse

    from tokasm.cli.options import Commands
    from tokasm.corpus import Case, Step

EXIT_CODES = options.exit_codes("listed or shown", "not used (nothing is checked)")

#: Steps ``show`` prints at each end of a long case unless ``--steps`` says otherwise.
HEAD_STEPS = 20
TAIL_STEPS = 5


def run_list(args: argparse.Namespace) -> int:
    corpus, chosen = options.chosen_cases(args)
    cases, probes = options.select(chosen, args.globs)
    rows = [(c.id, c.profile, str(c.step_count), ", ".join(c.requirements)) for c in cases]
    # the cost probes, named like cases (-k and --xfail name them alike), with their rules
    rows += [(p, "required", "probe", probe_named(p, "passed").requirements[0]) for p in probes]
    header = ("id", "profile", "steps", "requirements")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(3)]
    lines = [
        f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]}"
        for r in [header, *rows]
    ]
    count, total = len(cases) + len(probes), len(chosen) + len(PROBE_IDS)
    lines.append(f"{count} of {total} checks (corpus {corpus.version} and the cost probes)")
    options.Console(sys.stdout).print("\n".join(lines))
    return 0


def _step_line(step: Step) -> str:
    expect = step.expect
    assert expect is not None  # a corpus step always says what it must do
    wanted = f"raises {expect.kind}" if isinstance(expect, Raises) else show(expect.value)
    return f"  step {step.where} on {step.instance!r}: {step.describe()}  -> {wanted}"


def _render_case(case: Case, limit: int) -> str:
    steps = case.steps
    lines = [
        f"{case.id} - {case.description}",
        f"  requirements: {', '.join(case.requirements) or '(none)'}",
        f"  profile: {case.profile}",
        f"  source: {case.source}",
        f"  instances: {', '.join(repr(name) for name in case.instances)}",
    ]
    if case.events_in_process:
        lines.append(f"  events in process: {case.events_in_process} (spec/CASES.md)")
    lines.append(f"  steps ({len(steps)}; each must return what follows '->'):")
    hidden = len(steps) - limit - TAIL_STEPS if limit else 0
    if hidden > 0:
        lines += [_step_line(step) for step in steps[:limit]]
        lines.append(f"  ... {hidden} more steps (--steps 0 shows all) ...")
        steps = steps[-TAIL_STEPS:]
    lines += [_step_line(step) for step in steps]
    return "\n".join(lines)


def run_show(args: argparse.Namespace) -> int:
    cases, probes = options.select(options.chosen_cases(args)[1], args.ids)
    blocks = [_render_case(case, args.steps) for case in cases]
    if probes:
        blocks.append(PROBE_STEPS)  # both probes, each under its id
    options.Console(sys.stdout).print("\n\n".join(blocks))
    return 0


def add_parser(commands: Commands) -> None:
    listing = options.subcommand(
        commands,
        "list",
        "list the corpus cases: id, profile, steps, requirements",
        "List the conformance checks: every corpus case, and the cost probes.\n\n"
        "Each line: case id, profile, number of steps (after expanding repeats),\n"
        "and the requirement ids (spec/SPEC.md) it checks. GLOB selects as\n"
        f"tokasm check -k does, e.g. 'after.*'. Try: tokasm check {DEFAULT_BACKEND} -k 'after.*'",
        EXIT_CODES,
    )
    listing.add_argument(
        "globs", nargs="*", metavar="GLOB", help="only case ids matching this glob (repeatable)"
    )
    options.add_case_options(listing)
    listing.set_defaults(run=run_list)
    showing = options.subcommand(
        commands,
        "show",
        "print a case expanded: requirements, source, every step",
        "Print a case as the runner runs it: its requirements, the file it comes\n"
        "from, its instances and each step with what it must return (by repr).\n"
        "CASE is a case id or a glob; several matches are shown one after another.",
        EXIT_CODES,
    )
    showing.add_argument("ids", nargs="+", metavar="CASE", help="case id or glob")
    showing.add_argument(
        "--steps",
        type=options.non_negative,
        default=HEAD_STEPS,
        metavar="N",
        help=f"for a long case, the first N steps and the last {TAIL_STEPS} "
        f"(default {HEAD_STEPS}; 0 shows all)",
    )
    options.add_case_options(showing)
    showing.set_defaults(run=run_show)
