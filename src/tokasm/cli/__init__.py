"""The ``tokasm`` command: one subcommand module each, dispatched from here.

Every subcommand exits 0 when it did its job and the target(s) are fine, 1
when it found a problem with a target (each subcommand's help says which),
and 2 for a ``UsageError`` (tokasm.errors), mapped here in one place.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
from typing import TYPE_CHECKING, NoReturn

from .._versions import version_line
from ..conformance._display import safe_block
from ..conformance._protocol_client import testees_end_with_the_run
from ..errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, UsageError
from . import bench, cases, check, export, fuzz
from ._console import Console, silence_stdout

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["command", "main"]


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
    except UsageError as error:
        if args.debug:
            raise
        Console(sys.stderr).print(f"tokasm {args.command}: error: {safe_block(error)}")
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (``tokasm bench | head``): stop quietly, as Unix tools do.
        silence_stdout()
        return EXIT_FAILED
    except KeyboardInterrupt:
        Console(sys.stderr).print("tokasm: interrupted")
        return EXIT_INTERRUPTED
    _flush_stdout()
    return code


def command() -> NoReturn:
    """The ``tokasm`` program (its console script and ``python -m tokasm``): ``main``, then
    the end of the process.

    A non-daemon thread a target started and left running would keep the interpreter
    waiting at exit, after the verdict, a SIGTERM or a Ctrl-C alike; the process then ends
    at once, with its exit status. ``main`` called by a program of its own never ends it:
    that program owns its threads.
    """
    before = frozenset(threading.enumerate())
    try:
        code: int | str | None = main()
    except SystemExit as stop:  # --help, --version, SIGTERM's 143
        code = stop.code
    if any(t not in before and not t.daemon and t.is_alive() for t in threading.enumerate()):
        with contextlib.suppress(OSError, ValueError, AttributeError):  # streams a target closed
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code if isinstance(code, int) else EXIT_FAILED)
    sys.exit(code)


def _flush_stdout() -> None:
    """Flush what is left for stdout; a reader that went away does not change the verdict."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):  # gone, closed or replaced by a target
        silence_stdout()
