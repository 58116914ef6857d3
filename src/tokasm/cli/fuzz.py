"""``tokasm fuzz``: differential fuzzing of one target against the model, printing a corpus case."""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from tokasm._display import error_text
from tokasm.cli._console import Console, end_process, guarded_run
from tokasm.cli.options import (
    TARGET_HELP,
    at_least_one,
    exit_codes,
    non_negative,
    positive_seconds,
    subcommand,
)
from tokasm.corpus._load import requirement_ids
from tokasm.errors import EXIT_FAILED, EXIT_USAGE, ReportError, TargetError
from tokasm.fuzz._phase import INSTANCE_NAMES, LEFT_UNABLE, SHRINK_BUDGET
from tokasm.protocol._client import DEFAULT_TIMEOUT, CommandSubject, split_command
from tokasm.report._render import Destination, write_text_atomically
from tokasm.run._watchdog import Watchdog, hang_text
from tokasm.run.subjects import PythonSubject, resolve_target

if TYPE_CHECKING:
    import argparse

    from tokasm.cli.options import Commands
    from tokasm.fuzz._search import FuzzReport
    from tokasm.run.subjects import Subject

__all__ = ["add_parser", "run"]

DESCRIPTION = """\
Run Hypothesis-generated event programs against one target and the spec's
model: interleaved and look-alike ids, empty, whitespace, CR/LF, non-ASCII
and long deltas, finals and re-finals, gets, read_since (if the target has
it) and several instances.

On a disagreement the shrunk counterexample is printed as a corpus case file
(YAML, with the model's answers as 'returns'), exit 1. It is checked before
printing: saved, loaded through the corpus loader and run again, it fails
the same way. Keep it in a case folder of your own with --save DIR (a file
named after the case id) and run it with tokasm check --cases DIR, or write
it with --save FILE. The path is checked before fuzzing starts; an existing
file is kept unless --force.
Without --seed a random seed is used and printed, so any run can be repeated.
"""


EXIT_CODES = exit_codes(
    "no disagreement with the model was found",
    "the target disagreed with the model: the counterexample is printed",
)


def add_parser(commands: Commands) -> None:
    parser = subcommand(
        commands,
        "fuzz",
        "fuzz one target against the model; print a counterexample as a corpus case",
        DESCRIPTION,
        EXIT_CODES,
    )
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("target", nargs="?", metavar="TARGET", help=TARGET_HELP)
    target.add_argument(
        "--cmd", metavar="COMMAND LINE", help="a protocol testee command (spec/PROTOCOL.md)"
    )
    parser.add_argument(
        "--examples",
        type=at_least_one,
        default=500,
        metavar="N",
        help="how many programs to try (default 500)",
    )
    parser.add_argument(
        "--seed", type=non_negative, metavar="N", help="repeat a run (default: random)"
    )
    parser.add_argument(
        "--budget",
        type=positive_seconds,
        metavar="SECONDS",
        help="start no new example after this long (default: no limit); "
        "shrinking a disagreement has its own limit, --shrink-budget",
    )
    parser.add_argument(
        "--shrink-budget",
        type=positive_seconds,
        default=SHRINK_BUDGET,
        metavar="SECONDS",
        help="how long Hypothesis may shrink a disagreement, and the final simplification "
        f"as long again (default {SHRINK_BUDGET:g}): shorter for a quicker, less simple "
        "counterexample",
    )
    parser.add_argument(
        "--instances",
        type=int,
        choices=range(1, len(INSTANCE_NAMES) + 1),
        default=2,
        metavar="N",
        help=f"assemblers per program, 1 to {len(INSTANCE_NAMES)} (default 2)",
    )
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"per-request timeout for a --cmd testee (default {DEFAULT_TIMEOUT:g}); in "
        "process, a call into the target that runs this long (loading it: twice as long) is "
        "reported with its stack and ends the run (exit 1; exit 2 while loading)",
    )
    parser.add_argument(
        "--save",
        metavar="FILE|DIR",
        help="also write the case to FILE, or into the folder DIR as CASE-ID.yaml "
        "(an existing folder, or a path ending in '/'; a case folder for tokasm check --cases); "
        "written whole, before it is printed; nothing is written when no disagreement is found",
    )
    parser.add_argument("--force", action="store_true", help="let --save replace an existing file")
    parser.set_defaults(run=run)


def _subject(args: argparse.Namespace, watchdog: Watchdog, loading: list[str]) -> Subject:
    if args.cmd is not None:
        return CommandSubject(split_command(args.cmd), args.timeout)
    target: str = args.target
    loading.append(target)
    try:
        with watchdog.loading():
            return PythonSubject(resolve_target(target), target, watchdog=watchdog)
    finally:
        loading.clear()


def _hung(args: argparse.Namespace, loading: list[str], seconds: float, stack: str) -> None:
    """The watchdog's report of an in-process call that ran ``seconds``: one line, its stack,
    and the end of the process (a thread cannot be stopped)."""
    try:
        hang = hang_text(seconds, args.timeout, stack)
        if loading:
            Console(sys.stderr).print(
                f"tokasm fuzz: error: target {loading[0]!r}: loading it hung: {hang}"
            )
        else:
            Console(sys.stderr).print(f"tokasm fuzz: target {args.target!r} hung: {hang}")
    finally:
        end_process(EXIT_USAGE if loading else EXIT_FAILED)


def _counterexample_text(report: FuzzReport) -> str:
    """The case file, headed by comments saying what failed, so all of it can be saved."""
    found = report.counterexample
    assert found is not None
    notes = [report.summary(), *found.result.message.splitlines()]
    if found.reproduced:
        notes.append("Saved as a corpus case and loaded back, this case fails the same way:")
    else:
        notes.append("WARNING: saved and loaded back, this case passed; is the target flaky?")
    header = "".join(f"# {line}\n" for line in notes)
    return header + found.yaml


def _is_folder(save: str) -> bool:
    return save.endswith(("/", os.sep)) or Path(save).is_dir()


def _check_save(args: argparse.Namespace) -> None:
    """--save checked before any fuzzing: a file must be writable there and, without
    --force, not exist yet; a folder must be a folder, or creatable."""
    save: str | None = args.save
    if save is None:
        return
    if save == "-":
        raise ReportError("--save: the case is printed to stdout already; give a file name")
    if _is_folder(save):
        existing = next(p for p in (Path(save).absolute(), *Path(save).absolute().parents)
                        if p.exists())  # fmt: skip
        if not existing.is_dir():
            raise ReportError(f"--save {save!r}: {str(existing)!r} is not a folder")
        return
    Destination.checked("--save", Path(save))
    if Path(save).exists() and not args.force:
        raise ReportError(f"--save {save!r}: the file exists; pass --force to replace it")


def _save(args: argparse.Namespace, case_id: str, text: str) -> Path:
    """Write the case where --save says, whole (a temporary file, then a rename)."""
    path = Path(args.save) / f"{case_id}.yaml" if _is_folder(args.save) else Path(args.save)
    if path.exists() and not args.force and _is_folder(args.save):
        raise ReportError(f"--save: {str(path)!r} exists; pass --force to replace it")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(path, text)
    except OSError as error:
        raise ReportError(f"--save: cannot write {str(path)!r}: {error}") from error
    return path


def run(args: argparse.Namespace) -> int:
    with guarded_run():
        return _fuzz(args)


def _fuzz(args: argparse.Namespace) -> int:
    from tokasm.fuzz._search import fuzz  # Hypothesis: not for --help or another command

    _check_save(args)
    requirement_ids()  # read now: a counterexample names them after the target ran
    loading: list[str] = []  # the in-process target being imported
    with Watchdog(args.timeout, partial(_hung, args, loading)) as watchdog:
        subject = _subject(args, watchdog, loading)
        try:
            report = fuzz(
                subject,
                examples=args.examples,
                seed=args.seed,
                budget=args.budget,
                shrink_budget=args.shrink_budget,
                instances=args.instances,
            )
        except LEFT_UNABLE as error:
            raise TargetError(
                f"target {subject.name!r}: fuzzing could not go on after it ran: "
                f"{error_text(error)} (does it use up file descriptors, or lower the recursion "
                "limit?)"
            ) from None
        finally:
            subject.close()
    console = Console(sys.stdout)
    if report.counterexample is None:
        console.print(f"tokasm fuzz: {report.summary()}")
        return 0
    text = _counterexample_text(report)
    failure = None
    saved = None
    if args.save is not None:  # before printing: a reader that went away cannot cost the file
        try:
            saved = _save(args, report.counterexample.result.case_id, text)
        except ReportError as error:
            failure = error
    console.print(text.removesuffix("\n"))
    if failure is not None:
        raise failure
    if saved is not None:
        console.print(f"# saved to {saved}")
    return 1
