"""``tokasm check``: run the corpus against targets and print a report card."""

from __future__ import annotations

import argparse
import fnmatch
import sys
from typing import TYPE_CHECKING

from ..conformance.corpus import PROFILES, CorpusError, load_corpus
from ..conformance.reports import render_card, render_failures
from ..conformance.results import TargetRun
from ..conformance.runner import DEFAULT_PROFILES, run_cases
from ..conformance.subjects import PythonSubject, Subject, TargetError, resolve_target
from ..implementations import BACKENDS

if TYPE_CHECKING:
    from ..conformance.corpus import Case, Corpus

__all__ = ["add_parser", "run"]

DESCRIPTION = """\
Run the conformance corpus against one or more targets.

With no TARGET, every bundled backend is checked. A TARGET is MODULE:ATTR,
where ATTR is a class or a zero-argument factory returning a fresh assembler
(the current folder is importable), or the name of a bundled backend.
"""


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser], epilog: str) -> None:
    parser = commands.add_parser(
        "check",
        help="run the conformance corpus against targets",
        description=DESCRIPTION,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "targets", nargs="*", metavar="TARGET", help="MODULE:ATTR or a bundled backend name"
    )
    parser.add_argument(
        "--profile",
        action="append",
        choices=PROFILES,
        default=[],
        help="also run this optional profile (repeatable); 'required' always runs, "
        "'incremental' runs on targets that have read_since",
    )
    parser.add_argument(
        "-k",
        "--case",
        action="append",
        default=[],
        metavar="GLOB",
        help="run only cases whose id matches this glob (repeatable)",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for loading errors")
    parser.set_defaults(run=run)


def _select(corpus: Corpus, patterns: list[str]) -> list[Case]:
    if not patterns:
        return list(corpus)
    chosen = [c for c in corpus if any(fnmatch.fnmatchcase(c.id, p) for p in patterns)]
    if not chosen:
        raise CorpusError(f"no case id matches {patterns}")
    return chosen


def _subjects(args: argparse.Namespace) -> list[Subject]:
    names: list[str] = args.targets or list(BACKENDS)
    return [PythonSubject(resolve_target(name), name) for name in names]


def run(args: argparse.Namespace) -> int:
    try:
        corpus = load_corpus()
        cases = _select(corpus, args.case)
        subjects = _subjects(args)
    except (CorpusError, TargetError) as error:
        if args.debug:
            raise
        print(f"tokasm check: error: {error}", file=sys.stderr)
        return 2
    profiles = DEFAULT_PROFILES | set(args.profile)
    runs: list[TargetRun] = []
    for subject in subjects:
        try:
            results = tuple(run_cases(subject, cases, profiles))
        finally:
            subject.close()
        run_ = TargetRun(subject.name, subject.name, results, corpus.version)
        runs.append(run_)
        details = render_failures(run_)
        if details:
            print(details)
    print(render_card(runs))
    failing = [run_.target for run_ in runs if not run_.conforms]
    cases_run = len(cases)
    if failing:
        print(
            f"CONFORMANCE FAILED: {len(failing)} of {len(runs)} targets nonconforming "
            f"({', '.join(failing)}); corpus {corpus.version}, {cases_run} cases"
        )
        return 1
    print(
        f"CONFORMANCE PASSED: {len(runs)} of {len(runs)} targets conform; "
        f"corpus {corpus.version}, {cases_run} cases"
    )
    return 0
