"""The ``tokasm`` command, one module per subcommand: exit 0 when the job is done and the
targets are fine, 1 for a problem with a target, 2 for a ``UsageError`` (mapped here)."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import TYPE_CHECKING, NoReturn

from tokasm._display import safe_block
from tokasm.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, UsageError
from tokasm.fuzz import hypothesis_files_kept_by_tokasm
from tokasm.protocol import testees_end_with_the_run

from .options import Console, silence, version_line

if TYPE_CHECKING:
    from collections.abc import Sequence

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
    """The ``tokasm`` parser; with ``command``, only its module is imported and registered."""
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
    args, unknown = parser.parse_known_args(given)  # argparse exits for --help, a usage error
    if unknown:  # said by the subcommand's parser, with its usage, not the top one's
        args.subcommand.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        with testees_end_with_the_run():
            code: int = args.run(args)
        sys.stdout.flush()
    except UsageError as error:
        if args.debug:
            raise
        Console(sys.stderr).print(f"tokasm {args.command}: error: {safe_block(error)}")
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (``tokasm bench | head``): stop quietly, as Unix tools do.
        silence()
        return EXIT_FAILED
    except KeyboardInterrupt:
        Console(sys.stderr).print("tokasm: interrupted")
        return EXIT_INTERRUPTED
    return code


def command() -> NoReturn:
    """The ``tokasm`` program: ``main``'s status as Python's, whatever its streams."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is None:  # started with it closed (``>&-``): its output is unwanted
            silence(fd)
            setattr(sys, name, open(fd, "w", encoding="utf-8", closefd=False))  # noqa: SIM115
    try:
        with hypothesis_files_kept_by_tokasm():
            sys.exit(main())
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                silence()
