"""What the subcommands (and benchmark scripts) share: argument types, one parse per option,
the case options, and printing that a closed pipe cannot stop."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import math
import os
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeAlias, TypeVar

from tokasm._versions import PROTOCOL_VERSION, __version__
from tokasm.bench import parse_size
from tokasm.corpus import load_corpus, spec_dir
from tokasm.errors import CorpusError, UsageError
from tokasm.protocol import CommandTarget, WorkerTarget, split_command
from tokasm.run import PROBE_IDS, PythonTarget, resolve_target

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from tokasm.corpus import Case, Corpus
    from tokasm.run import Target

Number = TypeVar("Number", int, float)
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

TARGET_HELP = "MODULE:ATTR or a bundled backend name"


def version_line() -> str:
    """What ``--version`` prints and ``check`` opens with; the corpus reads ``unavailable``
    without a spec folder, so that ``--help`` still works."""
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
    """A subcommand parser that keeps its help's line breaks, with the common ``--debug``."""
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


def chosen_cases(args: argparse.Namespace) -> tuple[Corpus, list[Case]]:
    """The corpus with the user's cases loaded, and the cases ``--no-bundled`` leaves."""
    if args.no_bundled and not args.cases:
        raise UsageError("--no-bundled needs at least one --cases DIR")
    corpus = load_corpus(user_cases=args.cases)
    return corpus, [case for case in corpus if not (args.no_bundled and case.bundled)]


def case_sources(args: argparse.Namespace) -> list[Path]:
    """The folders and files of cases the command reads: the corpus's (with --no-bundled too,
    for unique ids), then --cases; no report or export may replace or add a case file there."""
    return [spec_dir() / "cases", *args.cases]


def start_target(
    args: argparse.Namespace, target: str, *, command: bool = False, **settings: Any
) -> Target:
    """A testee ``command`` line, or a target in a worker or (--in-process) in this process."""
    if command:
        return CommandTarget(split_command(target), args.timeout, **settings)
    if args.in_process:
        return PythonTarget(resolve_target(target), target)
    return WorkerTarget(target, args.timeout, **settings)


def select(cases: Iterable[Case], globs: list[str]) -> tuple[list[Case], list[str]]:
    """The cases and the cost probes whose id matches a glob (all of them for no glob);
    CorpusError, not a pass, if none does."""

    def chosen(case_id: str) -> bool:
        return not globs or any(fnmatchcase(case_id, glob) for glob in globs)

    every = list(cases)
    selected = [case for case in every if chosen(case.id)]
    probes = [probe for probe in PROBE_IDS if chosen(probe)]
    if not selected and not probes:
        close = difflib.get_close_matches(globs[0], [c.id for c in every] + [*PROBE_IDS], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; see tokasm list"
        raise CorpusError(f"no case id matches {globs}{hint}")
    return selected, probes


#: The longest timeout or budget an option takes: a day, which every wait of every
#: operating system accepts (poll and epoll overflow at about 24 days).
MAX_SECONDS = 86_400


def _parsed(kind: Callable[[str], Number], text: str, what: str) -> Number:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None


def positive_seconds(text: str) -> float:
    """A number of seconds above 0 and at most MAX_SECONDS (timeouts, budgets)."""
    seconds = _parsed(float, text, "a number of seconds")
    if not (seconds > 0 and math.isfinite(seconds)):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text!r}")
    if seconds > MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_SECONDS} (a day), got {text!r}")
    return seconds


def _whole_number(lowest: int, wanted: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        number = _parsed(int, text, "a whole number")
        if number < lowest:
            raise argparse.ArgumentTypeError(f"must be {wanted}, got {text!r}")
        return number

    return parse


#: A whole number >= 0 (0 usually turns something off), or >= 1 (examples, repeats).
non_negative, at_least_one = _whole_number(0, "0 or more"), _whole_number(1, "at least 1")


def size_list(text: str) -> tuple[int, ...]:
    """Comma-separated stream sizes such as ``1k,10k,100k``, sorted and de-duplicated."""
    try:
        sizes = tuple(sorted({parse_size(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected sizes like 1k,10k,100k, got {text!r}") from None
    if not sizes:
        raise argparse.ArgumentTypeError("no size given")
    return sizes


def report_path(text: str) -> Path:
    """A report's path; ``/dev/stdout`` is ``-`` (a pipe it stands for cannot be replaced)."""
    return Path("-" if text == "/dev/stdout" else text)


#: An option of the commands' tables: its names (``"-k --case"``), help and settings.
Option: TypeAlias = "tuple[str, str, dict[str, Any]]"
FLAG: dict[str, Any] = {"action": "store_true"}
LISTED: dict[str, Any] = {"action": "append", "default": []}
PATH: dict[str, Any] = {"type": report_path, "metavar": "PATH"}
FILE: dict[str, Any] = {"type": Path, "metavar": "FILE"}
SECONDS: dict[str, Any] = {"type": positive_seconds, "metavar": "SECONDS"}
NUMBER: dict[str, Any] = {"type": at_least_one, "metavar": "N"}


def add_options(group: argparse._ActionsContainer, *table: Option) -> None:
    for names, text, settings in table:
        group.add_argument(*names.split(), help=text, **settings)


def add_case_options(parser: argparse.ArgumentParser) -> None:
    """``--cases`` and ``--no-bundled`` of ``check`` and ``export``."""
    add_options(
        parser.add_argument_group("your own cases (spec/CASES.md, 'Your own cases')"),
        (
            "--cases",
            "also load the case files in this folder (*.yaml, or one file; repeatable): "
            "the corpus's schema, ids unique across all cases, SPEC.md requirement ids",
            {**LISTED, "type": Path, "metavar": "DIR"},
        ),
        ("--no-bundled", "leave out the bundled corpus: only the --cases files", FLAG),
    )


def silence(fd: int = 1) -> None:
    """Point ``fd`` at the null device: its reader went away, and no buffer fails at exit."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != fd:  # ``fd`` was closed: the null device took its number
            os.dup2(devnull, fd)
            os.close(devnull)


class Console:
    """Prints lines to ``stream`` until it cannot (``tokasm check ... | head -1`` keeps its
    verdict and reports), then drops them quietly."""

    def __init__(self, stream: TextIO) -> None:
        self._stream: TextIO | None = stream

    def print(self, text: str) -> None:
        stream = self._stream
        if stream is None:
            return
        try:
            try:
                stream.write(text + "\n")
            except UnicodeEncodeError:  # a terminal in ASCII: escape what it cannot show
                encoding = stream.encoding or "ascii"
                stream.write((text + "\n").encode(encoding, "backslashreplace").decode(encoding))
            stream.flush()
        except (OSError, ValueError):  # a broken pipe, a full disk: the reader sees no more
            self._stream = None
            with contextlib.suppress(OSError, ValueError, AttributeError):
                silence(stream.fileno())
