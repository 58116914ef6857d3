"""Argument types shared by the subcommands and benchmark scripts: one parse per option."""

from __future__ import annotations

import argparse
import math
from typing import TypeAlias

from tokasm._versions import PROTOCOL_VERSION, __version__
from tokasm.bench import parse_size
from tokasm.corpus import spec_dir
from tokasm.errors import CorpusError

__all__ = [
    "MAX_SECONDS",
    "TARGET_HELP",
    "Commands",
    "at_least_one",
    "exit_codes",
    "non_negative",
    "positive_seconds",
    "size_list",
    "subcommand",
    "version_line",
]

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

TARGET_HELP = "MODULE:ATTR or a bundled backend name"


def version_line() -> str:
    """What ``--version`` prints and ``check`` opens with. Built for every parser, so a
    missing spec folder must not break ``--help``: the corpus then reads ``unavailable``
    and the command that needs it says why."""
    try:
        corpus = (spec_dir() / "VERSION").read_text(encoding="utf-8").strip()
    except (CorpusError, OSError):
        corpus = "unavailable"
    return f"tokasm {__version__} (corpus {corpus}, protocol {PROTOCOL_VERSION})"


def exit_codes(ok: str, failed: str) -> str:
    """A subcommand's exit-code block: what 0 and 1 mean for it; 2 means the same everywhere."""
    return (
        f"exit codes:\n  0  {ok}\n  1  {failed}\n"
        "  2  usage or loading error: a bad option, a target that does not import or\n"
        "     start (or fails the handshake), a malformed corpus or xfail file, a\n"
        "     report that cannot be written\n"
    )


def subcommand(
    commands: Commands, name: str, summary: str, description: str, epilog: str
) -> argparse.ArgumentParser:
    """A subcommand parser whose help keeps the description's and epilog's line breaks,
    with the ``--debug`` every subcommand has."""
    parser = commands.add_parser(
        name,
        help=summary,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of a usage or loading error"
    )
    parser.set_defaults(subcommand=parser)  # whose usage an unknown option is told with
    return parser


#: The longest timeout or budget an option takes: a day, which every wait of every
#: operating system accepts (poll and epoll overflow at about 24 days).
MAX_SECONDS = 86_400


def positive_seconds(text: str) -> float:
    """A number of seconds above 0 and at most MAX_SECONDS (timeouts, budgets)."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (seconds > 0 and math.isfinite(seconds)):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text!r}")
    if seconds > MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_SECONDS} (a day), got {text!r}")
    return seconds


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def non_negative(text: str) -> int:
    """A whole number >= 0 (0 usually turns something off)."""
    number = _whole_number(text)
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text!r}")
    return number


def at_least_one(text: str) -> int:
    """A whole number >= 1 (examples, repeats)."""
    number = _whole_number(text)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return number


def size_list(text: str) -> tuple[int, ...]:
    """Comma-separated stream sizes such as ``1k,10k,100k``, sorted and de-duplicated."""
    try:
        sizes = tuple(sorted({parse_size(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected sizes like 1k,10k,100k, got {text!r}") from None
    if not sizes:
        raise argparse.ArgumentTypeError("no size given")
    return sizes
