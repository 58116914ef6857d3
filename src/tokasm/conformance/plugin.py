"""pytest plugin (entry point ``pytest11``): ``--tokasm-assembler MODULE:ATTR`` selects a target.

Loaded in every pytest session where tokasm is installed, so it is a good
citizen there: every option it adds starts with ``--tokasm-``, and it imports
nothing but pytest until a target is given (the corpus loader's YAML and
jsonschema would cost every unrelated run a tenth of a second). Without a
target it parametrizes only the tests that ask for ``tokasm_subject`` and
``tokasm_case`` (those of ``tokasm.conformance.test_conformance``), as one
placeholder that is a usage error once collected, never a quiet skip.
Collection depends only on the options and the corpus, so pytest-xdist
workers all collect the same items.

In process a target is guarded as in ``tokasm check`` (what it raises is its
case's error, each event is its own copy, lent with a caller's habits); but
pytest has no watchdog of ours, so a target that may hang should run with
``--tokasm-isolate``: in its own testee process, with ``--tokasm-timeout``
per request, as ``tokasm check --isolate`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Set  # noqa: F401 (Callable: a stash key's type)

    from tokasm.corpus._load import Case, Corpus
    from tokasm.report._xfail import XfailList
    from tokasm.run.subjects import Subject


__all__ = [
    "fuzz_examples",
    "pytest_addoption",
    "pytest_collection_finish",
    "pytest_configure",
    "pytest_generate_tests",
    "pytest_runtest_setup",
    "pytest_unconfigure",
    "selected_profiles",
]

_SUBJECTS = pytest.StashKey[dict[str, "Subject"]]()
_XFAIL = pytest.StashKey["XfailList | None"]()
_CASES = pytest.StashKey["list[Case]"]()
_UNDO_SIGNALS = pytest.StashKey["Callable[[], None]"]()

_NO_TARGET_ID = "no-assembler"
_NO_TARGET = (
    "no --tokasm-assembler given: run `python -m pytest --pyargs tokasm.conformance "
    "--tokasm-assembler MODULE:ATTR` to check an implementation"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tokasm", "tokasm conformance")
    group.addoption(
        "--tokasm-assembler",
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
        metavar="PROFILE",
        help="also run this optional profile of the corpus (repeatable), e.g. strict",
    )
    group.addoption(
        "--tokasm-fuzz-examples",
        type=int,
        default=None,
        metavar="N",
        help="examples of the fuzz item, one per target (default: as many as tokasm check "
        "uses; 0 skips it)",
    )
    group.addoption(
        "--tokasm-isolate",
        action="store_true",
        help="run each --tokasm-assembler in its own testee process (python -m "
        "tokasm.protocol.testee), so one that hangs, exits or crashes costs one case",
    )
    group.addoption(
        "--tokasm-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --tokasm-isolate, the per-request timeout (default: tokasm check's "
        "--timeout default)",
    )
    group.addoption(
        "--tokasm-cases",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="also run the case files in this folder (*.yaml, or one file; repeatable), "
        "as for tokasm check --cases",
    )
    group.addoption(
        "--tokasm-no-bundled",
        action="store_true",
        help="leave out the bundled corpus: only the --tokasm-cases files",
    )
    group.addoption(
        "--tokasm-xfail",
        type=Path,
        metavar="FILE",
        help="expected failures, as for tokasm check --xfail: listed cases are strict xfails "
        "(a pass fails the run) and a line matching no case is a usage error",
    )


def _xfail_list(config: pytest.Config) -> XfailList | None:
    from tokasm.report._xfail import XfailError, load_xfail

    path: Path | None = config.getoption("tokasm_xfail")
    if path is None:
        return None
    try:
        listed = load_xfail(path, _corpus(config))
    except XfailError as error:
        raise pytest.UsageError(f"--tokasm-xfail: {error}") from None
    stale = listed.stale(_corpus(config))
    if stale:
        raise pytest.UsageError("--tokasm-xfail: " + "; ".join(stale))
    return listed


def _check_profiles(config: pytest.Config) -> None:
    from tokasm.corpus._load import PROFILES

    unknown = sorted(set(config.getoption("tokasm_profile")) - set(PROFILES))
    if unknown:
        raise pytest.UsageError(
            f"--tokasm-profile: unknown {', '.join(map(repr, unknown))} "
            f"(choose from {', '.join(PROFILES)})"
        )


def _corpus(config: pytest.Config) -> Corpus:
    """The bundled corpus with the ``--tokasm-cases`` files; a bad one is a usage error."""
    from tokasm.corpus._load import load_corpus
    from tokasm.errors import CorpusError

    try:
        return load_corpus(user_cases=config.getoption("tokasm_cases"))
    except CorpusError as error:
        raise pytest.UsageError(f"--tokasm-cases: {error}") from None


def _cases(config: pytest.Config) -> list[Case]:
    """The cases this session runs: ``--tokasm-no-bundled`` leaves only the user's."""
    no_bundled = config.getoption("tokasm_no_bundled")
    if no_bundled and not config.getoption("tokasm_cases"):
        raise pytest.UsageError("--tokasm-no-bundled needs at least one --tokasm-cases DIR")
    return [case for case in _corpus(config) if not (no_bundled and case.bundled)]


def pytest_configure(config: pytest.Config) -> None:
    """Resolve every ``--tokasm-assembler`` up front: a bad one is a usage error naming it.

    The harness is imported only here, and only when a target is given.
    """
    targets: list[str] = config.getoption("tokasm_assembler")
    subjects: dict[str, Subject] = {}
    config.stash[_SUBJECTS] = subjects
    if targets:
        from tokasm.errors import TargetError

        _check_profiles(config)
        config.stash[_CASES] = _cases(config)  # before any testee starts: none can leak
        for target in targets:
            try:
                subjects[target] = _subject(config, target)
            except TargetError as error:
                pytest_unconfigure(config)
                raise pytest.UsageError(f"--tokasm-assembler: {error}") from None
        _check_profile_gaps(config, subjects)
    config.stash[_XFAIL] = _xfail_list(config) if subjects else None


def _check_profile_gaps(config: pytest.Config, subjects: dict[str, Subject]) -> None:
    """A ``--tokasm-profile`` a target cannot run is a usage error, not skipped cases."""
    from tokasm.corpus._load import profile_gap

    for target, subject in subjects.items():
        gap = profile_gap(
            config.getoption("tokasm_profile"), _corpus(config), target, subject.features
        )
        if gap is not None:
            pytest_unconfigure(config)
            raise pytest.UsageError(f"--tokasm-profile: {gap}")


def _subject(config: pytest.Config, target: str) -> Subject:
    from tokasm.protocol._client import DEFAULT_TIMEOUT, CommandSubject, fatal_signals_kill_testees
    from tokasm.protocol.testee import python_testee_command
    from tokasm.run.subjects import PythonSubject, resolve_target

    if config.getoption("tokasm_isolate"):
        if _UNDO_SIGNALS not in config.stash:  # a SIGTERM ending pytest kills them first
            config.stash[_UNDO_SIGNALS] = fatal_signals_kill_testees()
        timeout: float | None = config.getoption("tokasm_timeout")
        return CommandSubject(python_testee_command(target), timeout or DEFAULT_TIMEOUT)
    return PythonSubject(resolve_target(target), target)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the testee processes of ``--tokasm-isolate``: none outlives the session."""
    for subject in config.stash.get(_SUBJECTS, {}).values():
        subject.close()
    undo_signals = config.stash.get(_UNDO_SIGNALS, None)
    if undo_signals is not None:
        undo_signals()


def selected_profiles(config: pytest.Config) -> Set[str]:
    """The corpus profiles this session runs: the defaults plus ``--tokasm-profile``."""
    from tokasm.run.runner import DEFAULT_PROFILES

    return DEFAULT_PROFILES | set(config.getoption("tokasm_profile"))


def fuzz_examples(config: pytest.Config) -> int:
    """Examples of each target's fuzz item (``--tokasm-fuzz-examples``)."""
    from tokasm.fuzz._phase import CHECK_EXAMPLES

    examples: int | None = config.getoption("tokasm_fuzz_examples")
    return CHECK_EXAMPLES if examples is None else examples


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One item per (target, case), named by the case id (``target/case`` for several),
    then the cost probe and the fuzz phase per target (``CHECKS``), as ``tokasm check``."""
    if not {"tokasm_subject", "tokasm_case"} <= set(metafunc.fixturenames):
        return
    subjects = metafunc.config.stash.get(_SUBJECTS, {})
    if not subjects:  # a placeholder, refused once collection is final (below)
        metafunc.parametrize(
            ("tokasm_subject", "tokasm_case"), [pytest.param(None, None, id=_NO_TARGET_ID)]
        )
        return
    from tokasm.conformance.pytest_suite import (
        CHECKS,
        Check,
        check_id,
        expected_failures,
        xfail_marks,
    )

    listed = metafunc.config.stash.get(_XFAIL, None)
    several = len(subjects) > 1
    cases = metafunc.config.stash.get(_CASES, [])
    checks: list[Check] = [*cases, *CHECKS]
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
            for check in checks
        ],
    )


def _is_placeholder(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.id == _NO_TARGET_ID


def pytest_collection_finish(session: pytest.Session) -> None:
    """Collecting the corpus with no target to run it on is a usage error (exit 4), not a
    skip that lets the session pass; deselecting the item (``-k``) is fine.

    A pytest-xdist worker cannot report a usage error (its controller would crash),
    so there the placeholder test fails instead (exit 1), with the same message."""
    if hasattr(session.config, "workerinput"):
        return
    if any(_is_placeholder(item) for item in session.items):
        raise pytest.UsageError(_NO_TARGET)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _is_placeholder(item):
        pytest.fail(_NO_TARGET, pytrace=False)
