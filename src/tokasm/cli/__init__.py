"""The ``tokasm`` command: one subcommand module each, dispatched from here.

Exit codes (all subcommands): 0 conforming / done, 1 a case failed, errored or
a fuzz counterexample was found, 2 usage or loading error (bad target, bad
corpus, testee that cannot start).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from . import bench, check, fuzz
from .options import version_line

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]

EXIT_CODES = """\
exit codes:
  0  every target conforms (or the command did its job)
  1  a case failed or errored, an expected failure passed or went stale,
     or the fuzzer found a counterexample
  2  usage or loading error: a module that does not import, a missing
     attribute, a malformed target, a testee that cannot start or fails
     the handshake, a malformed corpus file
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tokasm",
        description="Conformance kit for the streaming token assembler.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=version_line())
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (check, bench, fuzz):
        module.add_parser(commands, EXIT_CODES)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``tokasm check | head``): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print("tokasm: interrupted", file=sys.stderr)
        return 130
    return code
