"""The ``tokasm`` command: one subcommand module each, dispatched from here.

Every subcommand exits 0 when it did its job and the target(s) are fine, 1
when it found a problem with a target (each subcommand's help says which),
and 2 for a ``UsageError`` (tokasm.errors), mapped here in one place.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
import traceback
from typing import TYPE_CHECKING, NoReturn

from tokasm._display import error_text, safe_block
from tokasm._versions import version_line
from tokasm.cli._console import (
    Console,
    StdoutDiversion,
    end_process,
    flush_quietly,
    remove_at_the_end,
    silence_stdout,
)
from tokasm.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, TokasmExit, UsageError
from tokasm.fuzz._phase import hypothesis_files_kept_by_tokasm
from tokasm.protocol._client import end_testees, testees_end_with_the_run
from tokasm.run._guard import reraise_unless_target

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["command", "main"]


#: Each command's module, in the order ``tokasm --help`` lists them.
COMMANDS: dict[str, str] = {
    "check": "check",
    "bench": "bench",
    "fuzz": "fuzz",
    "export": "export",
    "list": "cases",
    "show": "cases",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``tokasm`` parser; with ``command``, only that command's module is imported
    and registered (all it parses), so ``tokasm check`` does not import the benchmarks."""
    parser = argparse.ArgumentParser(
        prog="tokasm",
        description="Conformance kit for the streaming token assembler.",
        epilog="exit codes: see each command's --help (2 is always a usage or loading error)",
    )
    parser.add_argument("--version", action="version", version=version_line())
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    wanted = [COMMANDS[command]] if command in COMMANDS else list(COMMANDS.values())
    for name in dict.fromkeys(wanted):
        importlib.import_module(f"{__name__}.{name}").add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(given[0] if given else None)
    try:
        args = parser.parse_args(given)
    except SystemExit as stop:  # --help, --version, a usage error: argparse's, before any target
        raise TokasmExit(stop.code) from None
    try:
        with testees_end_with_the_run():
            code: int = args.run(args)
    except TokasmExit:
        raise
    except SystemExit as stray:  # target code raised it from inside tokasm's own frames
        if args.debug:
            traceback.print_exception(stray)
        Console(sys.stderr).print(
            f"tokasm {args.command}: error: target code ended the run from inside tokasm "
            f"({error_text(stray)}, raised by an audit hook or a function it replaced): "
            "the run has no verdict"
        )
        return EXIT_USAGE
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
    the end of the process at once, with ``main``'s exit status.

    Nothing a target left behind may hang the program or change its status after the
    verdict, a SIGTERM or a Ctrl-C: a non-daemon thread, an ``atexit`` handler or a
    finalizer of a module global would otherwise run, or wait forever, at interpreter
    exit. tokasm's own clean-up (stopping testees) has run by then, and runs again here.
    ``main`` called by a program of its own never ends it: that program owns its exit.
    """
    StdoutDiversion.process_ends = True
    scratch = hypothesis_files_kept_by_tokasm()
    if scratch is not None:
        remove_at_the_end(scratch)
    try:
        code: int | str | None = main()
    except SystemExit as stop:  # TokasmExit: --help, --version, SIGTERM's 143
        code = stop.code
    with contextlib.suppress(OSError, ValueError, AttributeError):  # streams a target closed
        if isinstance(code, str):  # as the interpreter shows sys.exit("message")
            print(code, file=sys.stderr)
    flush_quietly(sys.stdout)  # by their class's flush: a target may have set its own on them
    flush_quietly(sys.stderr)
    end_testees()
    end_process(code if isinstance(code, int) else EXIT_OK if code is None else EXIT_FAILED)


def _flush_stdout() -> None:
    """Flush what is left for stdout; a reader that went away does not change the verdict."""
    try:
        type(sys.stdout).flush(sys.stdout)  # its class's: a target may have set its own on it
    except BaseException as error:  # gone, closed or replaced by a target
        reraise_unless_target(error)
        silence_stdout()
