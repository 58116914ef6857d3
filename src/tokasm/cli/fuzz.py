"""``tokasm fuzz``: differential fuzzing of one target against the model, printing a corpus case."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tokasm.cli import options
from tokasm.cli.options import FLAG, NUMBER, SECONDS
from tokasm.corpus.steps import READ_SINCE
from tokasm.errors import ReportError, TargetError, UsageError
from tokasm.fuzz import INSTANCE_NAMES, SHRINK_BUDGET
from tokasm.protocol import DEFAULT_TIMEOUT
from tokasm.report import destination, write_text_atomically

if TYPE_CHECKING:
    import argparse

    from tokasm.cli.options import Commands

DESCRIPTION = """\
Run Hypothesis-generated event programs against one target and the spec's model.
On a disagreement the shrunk counterexample is printed as a corpus case file (the
model's answers as 'returns'), checked to fail the same way once loaded back; exit 1.
--save DIR keeps it as DIR/CASE-ID.yaml for tokasm check --cases DIR; an existing
file is never replaced unless --force. A Python TARGET runs in a worker process, so
one that hangs, exits or crashes costs one example; --in-process runs it in tokasm's
own process for a debugger, unguarded. Without --seed a random seed is used and
printed, so any run can be repeated. Programs call apply and get, as the seed
does; --profile incremental adds read_since.
"""


EXIT_CODES = options.exit_codes(
    "no disagreement with the model was found",
    "the target disagreed with the model: the counterexample is printed",
)


def add_parser(commands: Commands) -> None:
    parser = options.subcommand(
        commands,
        "fuzz",
        "fuzz one target against the model; print a counterexample as a corpus case",
        DESCRIPTION,
        EXIT_CODES,
    )
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("target", nargs="?", metavar="TARGET", help=options.TARGET_HELP)
    target.add_argument("--cmd", metavar="COMMAND LINE", help="a protocol testee (PROTOCOL.md)")
    shrink = (
        "how long Hypothesis may shrink a disagreement, and dropping steps as long again "
        f"(default {SHRINK_BUDGET:g})"
    )
    in_process = (
        "run a Python TARGET in tokasm's own process, for pdb: unguarded (no timeout; "
        "a target that exits ends the run)"
    )
    save = (
        "also write the case to a new FILE, or as CASE-ID.yaml into DIR (an existing "
        "folder, or a path ending in '/')"
    )
    most = len(INSTANCE_NAMES)
    instances = {"type": int, "choices": range(1, most + 1), "default": 2, "metavar": "N"}
    timeout = f"seconds a call into the target may run (default {DEFAULT_TIMEOUT:g})"
    profile = "also call read_since, as the incremental profile defines it"
    options.add_options(
        parser,
        ("--profile", profile, {"choices": ["incremental"]}),
        ("--examples", "programs to try (default 500)", {**NUMBER, "default": 500}),
        ("--seed", "repeat a run (default: random)", {**NUMBER, "type": options.non_negative}),
        ("--budget", "start no new example after this long (default: no limit)", SECONDS),
        ("--shrink-budget", shrink, {**SECONDS, "default": SHRINK_BUDGET}),
        ("--instances", f"assemblers per program, 1 to {most} (default 2)", instances),
        ("--timeout", timeout, {**SECONDS, "default": DEFAULT_TIMEOUT}),
        ("--in-process", in_process, FLAG),
        ("--save", save, {"metavar": "FILE|DIR"}),
        ("--force", "let --save replace an existing file, whole", FLAG),
    )
    parser.set_defaults(run=run)


def _is_folder(save: str) -> bool:
    return save.endswith(("/", os.sep)) or Path(save).is_dir()


def _check_save(args: argparse.Namespace) -> None:
    """--save checked before fuzzing: a writable file, new unless --force, or a folder."""
    save: str | None = args.save
    if save is None:
        if args.force:
            raise UsageError("--force needs --save: it lets --save replace a file")
        return
    if save == "-":
        raise ReportError("--save: the case is printed to stdout already; give a file name")
    if _is_folder(save):
        existing = next(p for p in (Path(save).absolute(), *Path(save).absolute().parents)
                        if p.exists())  # fmt: skip
        if not existing.is_dir():
            raise ReportError(f"--save {save!r}: {str(existing)!r} is not a folder")
        return
    destination("--save", Path(save))
    if os.path.lexists(save) and not args.force:
        raise ReportError(f"--save {save!r}: the file exists; pass --force to replace it")


def _save(args: argparse.Namespace, case_id: str, text: str) -> Path:
    """Write a new file (never over a file or symlink unless --force), whole."""
    path = Path(args.save) / f"{case_id}.yaml" if _is_folder(args.save) else Path(args.save)
    if not args.force and os.path.lexists(path):
        raise ReportError(f"--save: {str(path)!r} exists; pass --force to replace it")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(path, text)
    except OSError as error:
        raise ReportError(f"--save: cannot write {str(path)!r}: {error}") from error
    return path


def run(args: argparse.Namespace) -> int:
    from tokasm.fuzz import fuzz  # Hypothesis: not for --help or another command

    _check_save(args)
    # a testee is restarted after every fault, each example its own case
    target = options.start_target(
        args, args.cmd or args.target, command=args.cmd is not None, breaker=None
    )
    try:
        incremental = args.profile == "incremental"
        if incremental and READ_SINCE not in target.features:
            raise TargetError(
                f"--profile incremental: target {target.name!r} has no read_since; leave the "
                "profile out to fuzz the target without it"
            )
        names = ("examples", "seed", "budget", "shrink_budget", "instances")
        chosen = {name: getattr(args, name) for name in names}
        report = fuzz(target, **chosen, incremental=incremental)
    finally:
        target.close()
    console, found = options.Console(sys.stdout), report.counterexample
    if found is None:
        console.print(f"tokasm fuzz: {report.summary()}")
        return 0
    notes = [report.summary(), *found.result.message.splitlines()]
    notes.append(
        "Saved as a corpus case and loaded back, this case fails the same way:"
        if found.reproduced
        else "WARNING: saved and loaded back, this case passed; is the target flaky?"
    )
    text = "".join(f"# {line}\n" for line in notes) + found.yaml  # all of it can be saved
    try:  # saved before printing: a reader that went away cannot cost the file
        saved = None if args.save is None else _save(args, found.result.case_id, text)
    finally:
        console.print(text.removesuffix("\n"))
    if saved is not None:
        console.print(f"# saved to {saved}")
    return 1
