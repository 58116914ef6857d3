"""pytest plugin (entry point ``pytest11``): ``--tokasm-assembler MODULE:ATTR`` selects a target.

Loaded in every pytest session: every option starts with ``--tokasm-``, and nothing but pytest
is imported until a target is given. The target runs in pytest's process, trusted as any code
under test, or with ``--tokasm-isolate`` in a worker process.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable  # noqa: F401 (a stash key's type)

    from tokasm.conformance.pytest_suite import Check, Selection  # noqa: F401 (as above)
    from tokasm.run.targets import Target

_TARGETS = pytest.StashKey[dict[str, "Target"]]()
_SELECTION = pytest.StashKey["Selection"]()
_UNDO_SIGNALS = pytest.StashKey["Callable[[], None]"]()
_NO_TARGET_ID = "no-assembler"
_NO_TARGET = (
    "no --tokasm-assembler given: run `python -m pytest --pyargs tokasm.conformance "
    "--tokasm-assembler MODULE:ATTR` to check an implementation"
)

_OPTIONS: dict[str, dict[str, Any]] = {
    "--tokasm-assembler": {"action": "append", "default": [], "metavar": "MODULE:ATTR", "help":
        "run the tokasm conformance corpus (--pyargs tokasm.conformance) against this class or "
        "zero-argument factory (repeatable: one item per case per target)"},
    "--tokasm-profile": {"action": "append", "default": [], "metavar": "PROFILE", "help":
        "also run this optional profile of the corpus (repeatable), e.g. strict"},
    "--tokasm-fuzz-examples": {"type": int, "metavar": "N", "help":
        "examples of the fuzz item, one per target (default: as many as tokasm check uses; 0 "
        "skips it)"},
    "--tokasm-isolate": {"action": "store_true", "help":
        "run each --tokasm-assembler in a testee process of its own (python -m "
        "tokasm.protocol.testee), so one that hangs, exits or crashes costs one case; without "
        "it the target runs in pytest's process, trusted like any code under test"},
    "--tokasm-timeout": {"type": float, "metavar": "SECONDS", "help":
        "with --tokasm-isolate, the per-request timeout (default: tokasm check's --timeout "
        "default)"},
    "--tokasm-cases": {"action": "append", "type": Path, "default": [], "metavar": "DIR", "help":
        "also run the case files in this folder (*.yaml, or one file; repeatable), as for "
        "tokasm check --cases"},
    "--tokasm-no-bundled": {"action": "store_true", "help":
        "leave out the bundled corpus: only the --tokasm-cases files"},
    "--tokasm-xfail": {"type": Path, "metavar": "FILE", "help":
        "expected failures, as for tokasm check --xfail: listed cases are strict xfails (a "
        "pass fails the run) and a line matching no case is a usage error"},
}  # fmt: skip


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tokasm", "tokasm conformance")
    for option, settings in _OPTIONS.items():
        group.addoption(option, **settings)


def pytest_configure(config: pytest.Config) -> None:
    """Resolve the options and every ``--tokasm-assembler`` up front: a bad one is a usage
    error naming it."""
    targets: dict[str, Target] = {}
    config.stash[_TARGETS], option = targets, config.getoption
    if not option("tokasm_assembler"):
        return
    from tokasm.conformance.pytest_suite import Selection
    from tokasm.corpus import PROFILES
    from tokasm.errors import CorpusError, UsageError, XfailError
    from tokasm.fuzz import CHECK_EXAMPLES
    from tokasm.protocol._client import DEFAULT_TIMEOUT, fatal_signals_kill_testees
    from tokasm.protocol.worker import WorkerTarget
    from tokasm.run.targets import PythonTarget, resolve_target

    requested: list[str] = option("tokasm_profile")
    if unknown := sorted(set(requested) - set(PROFILES)):
        raise pytest.UsageError(
            f"--tokasm-profile: unknown {', '.join(map(repr, unknown))} "
            f"(choose from {', '.join(PROFILES)})"
        )
    if option("tokasm_no_bundled") and not option("tokasm_cases"):
        raise pytest.UsageError("--tokasm-no-bundled needs at least one --tokasm-cases DIR")
    examples: int | None = option("tokasm_fuzz_examples")
    flag = "--tokasm-assembler"
    try:  # before any testee starts: none can leak
        selection = config.stash[_SELECTION] = Selection.load(
            requested,
            option("tokasm_cases"),
            not option("tokasm_no_bundled"),
            option("tokasm_xfail"),
            CHECK_EXAMPLES if examples is None else examples,
        )
        for target in option("tokasm_assembler"):
            if not option("tokasm_isolate"):
                targets[target] = PythonTarget(resolve_target(target), target)
                continue
            if _UNDO_SIGNALS not in config.stash:  # pytest has no SIGTERM handler: testees first
                config.stash[_UNDO_SIGNALS] = fatal_signals_kill_testees()
            targets[target] = WorkerTarget(target, option("tokasm_timeout") or DEFAULT_TIMEOUT)
        flag = "--tokasm-profile"
        for target, subject in targets.items():
            selection.refuse_gap(requested, target, subject)
    except UsageError as error:
        pytest_unconfigure(config)
        flag = {CorpusError: "--tokasm-cases", XfailError: "--tokasm-xfail"}.get(type(error), flag)
        raise pytest.UsageError(f"{flag}: {error}") from None


def pytest_unconfigure(config: pytest.Config) -> None:
    for subject in config.stash.get(_TARGETS, {}).values():
        subject.close()
    config.stash.get(_UNDO_SIGNALS, lambda: None)()


def test_case(tokasm_subject: Target, tokasm_case: Check, pytestconfig: pytest.Config) -> None:
    """One corpus case, the cost probe or the fuzz phase against one target (the test that
    ``test_conformance`` holds)."""
    pytestconfig.stash[_SELECTION].check(tokasm_subject, tokasm_case)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One item per (target, check), or the placeholder refused once collection is final."""
    if not {"tokasm_subject", "tokasm_case"} <= set(metafunc.fixturenames):
        return
    targets = metafunc.config.stash.get(_TARGETS, {})
    metafunc.parametrize(
        ("tokasm_subject", "tokasm_case"),
        metafunc.config.stash[_SELECTION].params(targets)
        if targets
        else [pytest.param(None, None, id=_NO_TARGET_ID)],
    )


def _is_placeholder(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.id == _NO_TARGET_ID


def pytest_collection_finish(session: pytest.Session) -> None:
    """No target is a usage error (exit 4); under pytest-xdist the placeholder fails (exit 1)."""
    if not hasattr(session.config, "workerinput") and any(map(_is_placeholder, session.items)):
        raise pytest.UsageError(_NO_TARGET)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _is_placeholder(item):
        pytest.fail(_NO_TARGET, pytrace=False)
