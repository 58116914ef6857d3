"""``tokasm fuzz``: differential fuzzing of one target against the model, printing a corpus case."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tokasm.cli._console import Console, guarded_run
from tokasm.cli.options import (
    TARGET_HELP,
    at_least_one,
    exit_codes,
    non_negative,
    positive_seconds,
    subcommand,
)
from tokasm.errors import ReportError
from tokasm.fuzz import INSTANCE_NAMES, SHRINK_BUDGET
from tokasm.protocol._client import DEFAULT_TIMEOUT, CommandSubject, split_command
from tokasm.protocol.worker import WorkerSubject
from tokasm.report._render import Destination, write_text_atomically
from tokasm.run.subjects import PythonSubject, resolve_target

if TYPE_CHECKING:
    import argparse

    from tokasm.cli.options import Commands
    from tokasm.fuzz import FuzzReport
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
file (or a symlink) is never replaced unless --force.
A Python TARGET runs in a worker process of its own, as in tokasm check,
so a target that hangs, exits or crashes costs one example; --in-process
runs it in tokasm's own process instead, for a debugger, unguarded: that
trusts the target.
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
        help=f"seconds a call into the target (a --cmd request) may run (default "
        f"{DEFAULT_TIMEOUT:g}); one that runs longer is a testee fault, a disagreement",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run a Python TARGET in tokasm's own process, for pdb and the like: unguarded "
        "(it trusts the target: no timeout, and a target that exits ends the run)",
    )
    parser.add_argument(
        "--save",
        metavar="FILE|DIR",
        help="also write the case to FILE, or into the folder DIR as CASE-ID.yaml "
        "(an existing folder, or a path ending in '/'; a case folder for tokasm check --cases); "
        "a new file, before it is printed; nothing is written when no disagreement is found",
    )
    parser.add_argument(
        "--force", action="store_true", help="let --save replace an existing file, whole"
    )
    parser.set_defaults(run=run)


def _subject(args: argparse.Namespace) -> Subject:
    """The target; a testee is restarted after every fault, each example its own case."""
    if args.cmd is not None:
        return CommandSubject(split_command(args.cmd), args.timeout, breaker=None)
    if args.in_process:
        return PythonSubject(resolve_target(args.target), args.target)
    return WorkerSubject(args.target, args.timeout, breaker=None)


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
    if (Path(save).exists() or Path(save).is_symlink()) and not args.force:
        raise ReportError(f"--save {save!r}: the file exists; pass --force to replace it")


def _save(args: argparse.Namespace, case_id: str, text: str) -> Path:
    """Write the case where --save says: a new file (never through a symlink), or with
    --force a whole replacement (a temporary file, then a rename)."""
    path = Path(args.save) / f"{case_id}.yaml" if _is_folder(args.save) else Path(args.save)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if args.force:
            write_text_atomically(path, text)
            return path
        with path.open("x", encoding="utf-8") as file:  # O_EXCL: no file, no symlink there
            try:
                file.write(text)
            except OSError:
                path.unlink()
                raise
    except FileExistsError:
        raise ReportError(f"--save: {str(path)!r} exists; pass --force to replace it") from None
    except OSError as error:
        raise ReportError(f"--save: cannot write {str(path)!r}: {error}") from error
    return path


def run(args: argparse.Namespace) -> int:
    with guarded_run():
        return _fuzz(args)


def _fuzz(args: argparse.Namespace) -> int:
    from tokasm.fuzz import fuzz  # Hypothesis: not for --help or another command

    _check_save(args)
    subject = _subject(args)
    try:
        report = fuzz(
            subject,
            examples=args.examples,
            seed=args.seed,
            budget=args.budget,
            shrink_budget=args.shrink_budget,
            instances=args.instances,
        )
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
