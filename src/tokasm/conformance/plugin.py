"""The pytest route, the plugin (``--tokasm-assembler``) and ``suite()``: items from one
``Selection``, the target trusted in pytest's process (``--tokasm-isolate``: a worker's).
Loaded in every pytest session, it imports nothing but pytest until a target is given."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from _pytest.mark import ParameterSet

    from tokasm.corpus import Case
    from tokasm.implementations import AssemblerFactory
    from tokasm.run import Target

FUZZ_ID = "fuzz"
#: What one item checks: a corpus case, or the cost probe or the fuzz phase by its id.
Check: TypeAlias = "Case | str"
_TARGETS = pytest.StashKey[dict[str, "Target"]]()
_SELECTION = pytest.StashKey["Selection"]()
_UNDO_SIGNALS = pytest.StashKey["Callable[[], None]"]()
_NO_TARGET_ID = "no-assembler"
_NO_TARGET = (
    "no --tokasm-assembler given: run `python -m pytest --pyargs tokasm.conformance "
    "--tokasm-assembler MODULE:ATTR` to check an implementation"
)


def _checked(parse: str) -> Callable[[str], Any]:
    """Parsed as ``tokasm check`` parses it, importing the CLI only when the option is given."""

    def parsed(text: str) -> Any:
        from tokasm.cli import options

        return getattr(options, parse)(text)

    return parsed


_OPTIONS: dict[str, dict[str, Any]] = {
    "--tokasm-assembler": {"action": "append", "default": [], "metavar": "MODULE:ATTR", "help":
        "run the tokasm conformance corpus (--pyargs tokasm.conformance) against this class or "
        "zero-argument factory (repeatable: one item per case per target)"},
    "--tokasm-profile": {"action": "append", "default": [], "metavar": "PROFILE", "help":
        "also run this optional profile of the corpus (repeatable), e.g. incremental or strict"},
    "--tokasm-fuzz-examples": {"type": _checked("non_negative"), "metavar": "N", "help":
        "examples of the fuzz item, one per target (default: as many as tokasm check uses; 0 "
        "skips it)"},
    "--tokasm-isolate": {"action": "store_true", "help":
        "run each --tokasm-assembler in a testee process of its own (python -m "
        "tokasm.protocol.testee), so one that hangs, exits or crashes costs one case; without "
        "it the target runs in pytest's process, trusted like any code under test"},
    "--tokasm-timeout": {"type": _checked("positive_seconds"), "metavar": "SECONDS", "help":
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


class Selection:
    """What a session checks, in ``tokasm check``'s order: the cases, the cost probe, fuzzing."""

    def __init__(
        self,
        targets: Mapping[str, Target],
        profiles: Iterable[str],
        cases: Iterable[str | Path],
        bundled: bool,
        xfail: str | Path | None,
        *,
        fuzz_examples: int | None = None,
    ) -> None:
        """UsageError for an unknown profile; CorpusError for a bad case file; XfailError for
        a bad or stale xfail line; TargetError if a profile asked for cannot run on a target."""
        from tokasm.corpus import PROFILES, load_corpus, profile_gap
        from tokasm.errors import TargetError, UsageError, XfailError
        from tokasm.fuzz import CHECK_EXAMPLES
        from tokasm.report import load_xfail
        from tokasm.run import DEFAULT_PROFILES, PROBE_ID

        if unknown := sorted(set(profiles) - set(PROFILES)):
            raise UsageError(
                f"unknown {', '.join(map(repr, unknown))} (choose from {', '.join(PROFILES)})"
            )
        corpus = load_corpus(user_cases=[Path(folder) for folder in cases])
        self.listed = None if xfail is None else load_xfail(Path(xfail), corpus)
        if stale := [] if self.listed is None else self.listed.stale(corpus):
            raise XfailError("; ".join(stale))
        chosen = [case for case in corpus if bundled or not case.bundled]
        for name, target in targets.items():
            if gap := profile_gap(profiles, chosen, name, target.features):
                raise TargetError(gap)
        self.targets, self.version = targets, corpus.version
        self.profiles = DEFAULT_PROFILES | set(profiles)
        self.checks: tuple[Check, ...] = (*chosen, PROBE_ID, FUZZ_ID)
        self.fuzz_examples = CHECK_EXAMPLES if fuzz_examples is None else fuzz_examples
        self.failed_a_case: set[Target] = set()  # as in ``tokasm check``, no fuzz item for them

    def params(self) -> list[ParameterSet]:
        """Named ``id`` (``target/id`` for several targets); a listed one is a strict xfail."""
        from tokasm.report import expected_failures

        params = []
        for name, target in self.targets.items():
            lists = expected_failures(name, self.listed)
            for check in self.checks:
                key = check if isinstance(check, str) else check.id
                found = [(ls, e) for ls in lists if (e := ls.entry_for(key)) is not None]
                marks = [pytest.mark.xfail(strict=True, reason=ls.why(e)) for ls, e in found[:1]]
                label = f"{name}/{key}" if len(self.targets) > 1 else key
                params.append(pytest.param(target, check, id=label, marks=marks))
        return params

    def check(self, target: Target, check: Check) -> None:
        """A run-level problem of the target found meanwhile (a worker that ended or wrote
        between checks, a restart as another implementation) fails it too: never lost."""
        known = len(getattr(target, "problems", ()))  # a worker's, with --tokasm-isolate
        lines = [self._failure(target, check)]
        found = getattr(target, "problems", [])[known:]
        lines += [f"run-level problem of the target: {problem}" for problem in found]
        if any(lines):
            pytest.fail("\n".join(filter(None, lines)), pytrace=False)

    def _failure(self, target: Target, check: Check) -> str | None:
        from tokasm.run import FAILING, run_cases, run_probe

        if check == FUZZ_ID:
            if self.fuzz_examples <= 0:
                pytest.skip("fuzzing turned off (0 examples)")
            if target in self.failed_a_case:
                pytest.skip(
                    "a case of this target failed: fuzzing looks for what the corpus missed, "
                    "so, as in tokasm check, it runs only for a target that passed every case "
                    "(tokasm fuzz searches a failing target further)"
                )
            from tokasm.fuzz import fuzz_phase

            incremental = "incremental" in self.profiles
            found = fuzz_phase(target, (), self.fuzz_examples, incremental=incremental)
            return next(iter(found), None)
        if isinstance(check, str):  # the cost probe
            result = run_probe(check, target)
        else:  # a case outside the profiles is skipped, as below
            (result,) = run_cases(target, [check], self.profiles)
        if result.outcome in FAILING:
            self.failed_a_case.add(target)
        if result.outcome == "skipped":
            pytest.skip(result.message)
        if result.outcome == "passed":
            return None
        rules = ", ".join(result.requirements)
        return (
            f"{result.case_id} [{rules}] - {result.description} [{result.outcome}]\n"
            f"{result.message}"
        )


def suite(
    factory: AssemblerFactory,
    *,
    profiles: Iterable[str] = (),
    xfail: str | Path | None = None,
    name: str | None = None,
    cases: Iterable[str | Path] = (),
    bundled: bool = True,
) -> Callable[[Target, Check], None]:
    """``test_tokasm = suite(MyAssembler)`` in a test file: ``test_tokasm[<case id>]`` per
    case, then ``[cost.cache-final]`` and ``[fuzz]``, in pytest's process. The keywords are
    ``tokasm check``'s ``--profile``, ``--xfail``, ``--cases``, ``--no-bundled``; a profile the
    assembler cannot run raises TargetError."""
    from tokasm.run import PythonTarget

    label = name or f"{factory.__module__}:{getattr(factory, '__qualname__', repr(factory))}"
    targets = {label: PythonTarget(factory, label)}
    selection = Selection(targets, tuple(profiles), cases, bundled, xfail)

    @pytest.mark.parametrize(("target", "case"), selection.params())
    def test_case(target: Target, case: Check) -> None:
        selection.check(target, case)

    test_case.__doc__ = f"tokasm corpus {selection.version} against {label}"
    return test_case


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tokasm", "tokasm conformance")
    for option, settings in _OPTIONS.items():
        group.addoption(option, **settings)


def pytest_configure(config: pytest.Config) -> None:
    """Every option is resolved up front: a bad one is a usage error naming it."""
    targets: dict[str, Target] = {}
    config.stash[_TARGETS], option = targets, config.getoption
    if not option("tokasm_assembler"):
        return
    from tokasm.errors import CorpusError, UsageError, XfailError
    from tokasm.protocol import DEFAULT_TIMEOUT, WorkerTarget, fatal_signals_kill_testees
    from tokasm.run import PythonTarget, resolve_target

    if option("tokasm_no_bundled") and not option("tokasm_cases"):
        raise pytest.UsageError("--tokasm-no-bundled needs at least one --tokasm-cases DIR")
    flag = "--tokasm-assembler"
    isolate, timeout = option("tokasm_isolate"), option("tokasm_timeout")
    if timeout is not None and not isolate:  # pytest's process cannot cut a call short
        raise pytest.UsageError("--tokasm-timeout needs --tokasm-isolate")
    if isolate:  # pytest has no SIGTERM handler: testees first
        config.stash[_UNDO_SIGNALS] = fatal_signals_kill_testees()
    try:  # a testee started before a usage error is closed by pytest_unconfigure
        for target in option("tokasm_assembler"):
            targets[target] = (
                WorkerTarget(target, timeout or DEFAULT_TIMEOUT)
                if isolate
                else PythonTarget(resolve_target(target), target)
            )
        flag = "--tokasm-profile"
        config.stash[_SELECTION] = Selection(
            targets,
            option("tokasm_profile"),
            option("tokasm_cases"),
            not option("tokasm_no_bundled"),
            option("tokasm_xfail"),
            fuzz_examples=option("tokasm_fuzz_examples"),
        )
    except UsageError as error:
        pytest_unconfigure(config)
        flag = {CorpusError: "--tokasm-cases", XfailError: "--tokasm-xfail"}.get(type(error), flag)
        raise pytest.UsageError(f"{flag}: {error}") from None


def pytest_unconfigure(config: pytest.Config) -> None:
    for target in config.stash.get(_TARGETS, {}).values():
        target.close()
    config.stash.get(_UNDO_SIGNALS, lambda: None)()


def test_case(
    tokasm_target: Target | None, tokasm_case: Check, pytestconfig: pytest.Config
) -> None:
    """The test that ``test_conformance`` holds; the placeholder, run under pytest-xdist, fails."""
    if tokasm_target is None:
        pytest.fail(_NO_TARGET, pytrace=False)
    pytestconfig.stash[_SELECTION].check(tokasm_target, tokasm_case)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if not {"tokasm_target", "tokasm_case"} <= set(metafunc.fixturenames):
        return
    selection = metafunc.config.stash.get(_SELECTION, None)
    placeholder = [pytest.param(None, "", id=_NO_TARGET_ID)]
    metafunc.parametrize(
        ("tokasm_target", "tokasm_case"), placeholder if selection is None else selection.params()
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    """No target is a usage error (exit 4); under pytest-xdist the placeholder fails (exit 1)."""
    ids = [getattr(getattr(item, "callspec", None), "id", None) for item in session.items]
    if not hasattr(session.config, "workerinput") and _NO_TARGET_ID in ids:
        raise pytest.UsageError(_NO_TARGET)
