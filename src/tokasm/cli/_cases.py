"""Corpus options of ``check`` and ``export``: user case folders beside the bundled corpus."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tokasm.corpus import load_corpus
from tokasm.errors import UsageError

if TYPE_CHECKING:
    import argparse

    from tokasm.corpus import Case, Corpus

__all__ = ["add_case_options", "chosen_cases"]


def add_case_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("your own cases (spec/CASES.md, 'Your own cases')")
    group.add_argument(
        "--cases",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="also load the case files in this folder (*.yaml, or one file; repeatable): "
        "the corpus's schema, ids unique across all cases, SPEC.md requirement ids",
    )
    group.add_argument(
        "--no-bundled",
        action="store_true",
        help="leave out the bundled corpus: only the --cases files",
    )


def chosen_cases(args: argparse.Namespace) -> tuple[Corpus, list[Case]]:
    """The corpus with the user's cases loaded, and the cases ``--no-bundled`` leaves."""
    if args.no_bundled and not args.cases:
        raise UsageError("--no-bundled needs at least one --cases DIR")
    corpus = load_corpus(user_cases=args.cases)
    return corpus, [case for case in corpus if not (args.no_bundled and case.bundled)]
