"""``tokasm fuzz``: differential fuzzing of one target against the model, printing a corpus case."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..conformance._fuzz import SHRINK_BUDGET, fuzz
from ..conformance._fuzz_strategies import INSTANCE_NAMES
from ..conformance._protocol_client import DEFAULT_TIMEOUT, CommandSubject, split_command
from ..conformance.subjects import PythonSubject, resolve_target
from ..errors import ReportError
from .options import (
    TARGET_HELP,
    at_least_one,
    exit_codes,
    non_negative,
    positive_seconds,
    subcommand,
)

if TYPE_CHECKING:
    import argparse

    from ..conformance._fuzz import FuzzReport
    from ..conformance.subjects import Subject
    from .options import Commands

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
named after the case id) and run it with tokasm check --cases DIR.
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
        f"shrinking a disagreement has its own limit: {SHRINK_BUDGET:g} s for Hypothesis "
        "and as long again for the final simplification",
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
        help=f"per-request timeout for a --cmd testee (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--save",
        metavar="FILE|DIR",
        help="also write the case to FILE, or into the folder DIR as CASE-ID.yaml "
        "(an existing folder, or a path ending in '/'; a case folder for tokasm check --cases)",
    )
    parser.set_defaults(run=run)


def _subject(args: argparse.Namespace) -> Subject:
    if args.cmd is not None:
        return CommandSubject(split_command(args.cmd), args.timeout)
    target: str = args.target
    return PythonSubject(resolve_target(target), target)


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


def _save_path(save: str, case_id: str) -> Path:
    """``--save``: a file, or a folder (existing, or written with a trailing slash)."""
    is_folder = save.endswith(("/", os.sep)) or Path(save).is_dir()
    return Path(save) / f"{case_id}.yaml" if is_folder else Path(save)


def run(args: argparse.Namespace) -> int:
    subject = _subject(args)
    try:
        report = fuzz(
            subject,
            examples=args.examples,
            seed=args.seed,
            budget=args.budget,
            instances=args.instances,
        )
    finally:
        subject.close()
    if report.counterexample is None:
        print(f"tokasm fuzz: {report.summary()}")
        return 0
    text = _counterexample_text(report)
    print(text, end="")
    if args.save is not None:
        path = _save_path(args.save, report.counterexample.result.case_id)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as error:
            raise ReportError(f"cannot write {path}: {error}") from error
        print(f"# saved to {path}")
    return 1
