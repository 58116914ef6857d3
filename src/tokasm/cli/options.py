"""Argument types shared by the subcommands and benchmark scripts: one parse per option."""

from __future__ import annotations

import argparse
import math
from typing import TypeAlias

from .. import __version__
from ..bench._units import parse_size
from ..conformance.paths import spec_version
from ..conformance.protocol import PROTOCOL_VERSION

__all__ = [
    "TARGET_HELP",
    "Commands",
    "at_least_one",
    "positive_seconds",
    "size_list",
    "subcommand",
    "version_line",
]

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

TARGET_HELP = "MODULE:ATTR or a bundled backend name"


def subcommand(
    commands: Commands, name: str, summary: str, description: str, epilog: str
) -> argparse.ArgumentParser:
    """A subcommand parser whose help keeps the description's and epilog's line breaks."""
    return commands.add_parser(
        name,
        help=summary,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def positive_seconds(text: str) -> float:
    """A finite number of seconds above 0 (timeouts, budgets)."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (seconds > 0 and math.isfinite(seconds)):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text!r}")
    return seconds


def at_least_one(text: str) -> int:
    """A whole number >= 1 (examples, repeats)."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return number


def version_line() -> str:
    """What ``--version`` prints and ``check`` opens with: package, corpus and protocol."""
    return f"tokasm {__version__} (corpus {spec_version()}, protocol {PROTOCOL_VERSION})"


def size_list(text: str) -> tuple[int, ...]:
    """Comma-separated stream sizes such as ``1k,10k,100k``, sorted and de-duplicated."""
    try:
        sizes = tuple(sorted({parse_size(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected sizes like 1k,10k,100k, got {text!r}") from None
    if not sizes:
        raise argparse.ArgumentTypeError("no size given")
    return sizes
