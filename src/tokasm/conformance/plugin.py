"""pytest plugin (entry point ``pytest11``): ``--assembler MODULE:ATTR`` selects a target.

Loaded in every pytest session where tokasm is installed, so it stays inert
unless asked: without ``--assembler`` it resolves nothing and parametrizes
only tests that ask for ``tokasm_subject`` and ``tokasm_case`` (those of
``tokasm.conformance.test_conformance``). Collection depends only on the
options and the corpus, so pytest-xdist workers all collect the same items.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..errors import TargetError
from ._fuzz import CHECK_EXAMPLES
from ._xfail import XfailError, XfailList, load_xfail
from .corpus import PROFILES, load_corpus
from .pytest_suite import CHECKS, check_id, expected_failures, xfail_marks
from .runner import DEFAULT_PROFILES
from .subjects import PythonSubject, Subject, resolve_target

if TYPE_CHECKING:
    from collections.abc import Set


__all__ = [
    "fuzz_examples",
    "pytest_addoption",
    "pytest_configure",
    "pytest_generate_tests",
    "selected_profiles",
]

_SUBJECTS = pytest.StashKey[dict[str, Subject]]()
_XFAIL = pytest.StashKey["XfailList | None"]()

_NO_TARGET = (
    "no --assembler given: run `python -m pytest --pyargs tokasm.conformance "
    "--assembler MODULE:ATTR` to check an implementation"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tokasm", "tokasm conformance")
    group.addoption(
        "--assembler",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="run the tokasm conformance corpus (--pyargs tokasm.conformance) against this "
        "class or zero-argument factory (repeatable: one item per case per target)",
    )
    group.addoption(
        "--tokasm-profile",
        action="append",
        default=[],
        choices=PROFILES,
        help="also run this optional profile of the corpus (repeatable), e.g. strict",
    )
    group.addoption(
        "--tokasm-fuzz-examples",
        type=int,
        default=CHECK_EXAMPLES,
        metavar="N",
        help=f"examples of the fuzz item, one per target (default {CHECK_EXAMPLES}, as tokasm "
        "check; 0 skips it)",
    )
    group.addoption(
        "--tokasm-xfail",
        type=Path,
        metavar="FILE",
        help="expected failures, as for tokasm check --xfail: listed cases are strict xfails "
        "(a pass fails the run) and a line matching no case is a usage error",
    )


def _xfail_list(config: pytest.Config) -> XfailList | None:
    path: Path | None = config.getoption("tokasm_xfail")
    if path is None:
        return None
    try:
        listed = load_xfail(path)
    except XfailError as error:
        raise pytest.UsageError(f"--tokasm-xfail: {error}") from None
    stale = listed.stale(load_corpus())
    if stale:
        raise pytest.UsageError("--tokasm-xfail: " + "; ".join(stale))
    return listed


def pytest_configure(config: pytest.Config) -> None:
    """Resolve every ``--assembler`` up front: a bad one is a usage error naming it."""
    subjects: dict[str, Subject] = {}
    for target in config.getoption("assembler"):
        try:
            subjects[target] = PythonSubject(resolve_target(target), target)
        except TargetError as error:
            raise pytest.UsageError(f"--assembler: {error}") from None
    config.stash[_SUBJECTS] = subjects
    config.stash[_XFAIL] = _xfail_list(config) if subjects else None


def selected_profiles(config: pytest.Config) -> Set[str]:
    """The corpus profiles this session runs: the defaults plus ``--tokasm-profile``."""
    return DEFAULT_PROFILES | set(config.getoption("tokasm_profile"))


def fuzz_examples(config: pytest.Config) -> int:
    """Examples of each target's fuzz item (``--tokasm-fuzz-examples``)."""
    examples: int = config.getoption("tokasm_fuzz_examples")
    return examples


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One item per (target, case), named by the case id (``target/case`` for several),
    then the cost probe and the fuzz phase per target (``CHECKS``), as ``tokasm check``."""
    if not {"tokasm_subject", "tokasm_case"} <= set(metafunc.fixturenames):
        return
    subjects = metafunc.config.stash.get(_SUBJECTS, {})
    if not subjects:
        skipped = pytest.param(None, None, id="no-assembler", marks=pytest.mark.skip(_NO_TARGET))
        metafunc.parametrize(("tokasm_subject", "tokasm_case"), [skipped])
        return
    listed = metafunc.config.stash.get(_XFAIL, None)
    several = len(subjects) > 1
    corpus = load_corpus()
    metafunc.parametrize(
        ("tokasm_subject", "tokasm_case"),
        [
            pytest.param(
                subject,
                check,
                id=f"{target}/{check_id(check)}" if several else check_id(check),
                marks=xfail_marks(check, *expected_failures(target, listed)),
            )
            for target, subject in subjects.items()
            for check in [*corpus, *CHECKS]
        ],
    )
