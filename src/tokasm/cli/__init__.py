"""The ``tokasm`` command: one subcommand module each, dispatched from here.

Every subcommand exits 0 when it did its job and the target(s) are fine, 1
when it found a problem with a target (each subcommand's help says which),
and 2 for a ``UsageError`` (tokasm.errors), mapped here in one place.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from .._versions import version_line
from ..conformance._protocol_client import testees_end_with_the_run
from ..errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, UsageError
from . import bench, cases, check, export, fuzz

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tokasm",
        description="Conformance kit for the streaming token assembler.",
        epilog="exit codes: see each command's --help (2 is always a usage or loading error)",
    )
    parser.add_argument("--version", action="version", version=version_line())
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (check, bench, fuzz, export, cases):
        module.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with testees_end_with_the_run():
            code: int = args.run(args)
        sys.stdout.flush()
    except UsageError as error:
        if args.debug:
            raise
        print(f"tokasm {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (``tokasm check | head``): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("tokasm: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return code
