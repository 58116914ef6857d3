"""What a case runs against: the ``Target`` interface, which an in-process factory and a
protocol testee (``tokasm.protocol``) both provide, and its in-process implementation."""

from __future__ import annotations

import copy
import importlib
import operator
import sys
import traceback
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, cast, runtime_checkable

from tokasm._display import class_name, error_text, safe_text, show, type_name
from tokasm.corpus.steps import Apply, features_of
from tokasm.errors import (
    EventNotOwned,
    ImplementationError,
    TargetError,
    TokasmExit,
    TokasmInterrupt,
)
from tokasm.implementations import BACKENDS
from tokasm.run._caller import CallerHabits

if TYPE_CHECKING:
    from collections.abc import Generator, Sequence
    from types import TracebackType

    from tokasm.corpus._load import Case
    from tokasm.corpus.steps import Step
    from tokasm.implementations import Assembler, AssemblerFactory
    from tokasm.run.results import CaseResult

__all__ = ["Foreign", "PythonTarget", "StepOutcome", "Target", "Worker", "resolve_target"]

#: What performing a step gives: its result, or the error the implementation raised.
StepOutcome: TypeAlias = "str | Foreign | ImplementationError | None"


class Target(Protocol):
    """A target under test holding named assembler instances; ``new`` replaces one, and a
    step raises ImplementationError if the assembler raised, TargetFault if the testee did."""

    name: str
    features: frozenset[str]

    def new(self, instance: str) -> None: ...
    def perform(self, step: Step) -> str | Foreign | None: ...
    def perform_steps(self, steps: Sequence[Step]) -> Generator[StepOutcome, None, None]: ...
    def close(self) -> None: ...


@runtime_checkable
class Worker(Protocol):
    """A target whose worker process runs whole checks (``tokasm.protocol.WorkerTarget``):
    ``run_case``, ``run_probe`` and ``fuzz_phase`` hand them over to it."""

    def run_case(self, case: Case, *, debug: bool = False) -> CaseResult: ...
    def probe(self, probe_id: str, *, strict: bool = False) -> CaseResult: ...
    def fuzz(
        self, examples: int, documents: Sequence[dict[str, Any]], incremental: bool
    ) -> tuple[str, ...]: ...


_TOKASM = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=1024)
def _is_users(filename: str) -> bool:
    """A frame of the code under test: outside tokasm and importlib, or in a bundled backend."""
    if filename.startswith("<frozen "):
        return False
    path = Path(filename).resolve()
    return not path.is_relative_to(_TOKASM) or path.is_relative_to(_TOKASM / "implementations")


def user_frames(tb: TracebackType | None) -> tuple[list[str], str]:
    """The frames after tokasm's last one: the innermost 3, and all as a traceback (``--debug``)."""
    frames = traceback.extract_tb(tb)
    mine = [i for i, frame in enumerate(frames) if not _is_users(frame.filename)]
    users = traceback.StackSummary.from_list(frames[mine[-1] + 1 :] if mine else frames)
    full = "".join(
        safe_text(line) + "\n" for chunk in users.format() for line in chunk.splitlines()
    )
    return [safe_text(f"{f.filename}:{f.lineno} in {f.name}") for f in users[-3:]], full


def _error_kind(error: BaseException) -> str:
    """The strict profile's kind where the error is one (by its real type), else its name."""
    for kind in (TypeError, ValueError):
        if issubclass(type(error), kind):
            return kind.__name__
    return safe_text(class_name(type(error)), 80)


def _raised(error: BaseException, doing: str = "") -> ImplementationError:
    """What the target raised, as an ImplementationError saying where in the user's code."""
    frames, full = user_frames(error.__traceback__)
    return ImplementationError(
        _error_kind(error), doing + error_text(error), frames=tuple(frames), traceback=full
    )


@dataclass(frozen=True)
class Foreign:
    """A step's result that is neither None nor text, shown once, as it came back."""

    shown: str
    type_name: str

    def __repr__(self) -> str:
        return self.shown


def _returned(value: object) -> str | Foreign | None:
    """None; a ``str`` (a subclass's characters as a ``str``); anything else, ``Foreign``."""
    if value is None or type(value) is str:
        return value
    if issubclass(type(value), str):  # by its real type: ``__class__`` may lie
        return str.__str__(value)
    return Foreign(show(value), type_name(value))


class PythonTarget:
    """Runs cases in this process against a zero-argument factory: what it raises
    (``sys.exit()`` too) is an ``ImplementationError``, each event a caller's own object
    (``_caller``). It defends nothing else: it runs in a worker, or on a trusted route."""

    def __init__(self, factory: AssemblerFactory, name: str) -> None:
        self._factory = factory
        self.name = name
        self._caller = CallerHabits()
        self._instances: dict[str, Assembler] = {}
        shown = repr(safe_text(name, 200))
        try:
            probe = self._made()
        except ImplementationError as error:
            hint = (
                "; a TARGET is called with no arguments: name a zero-argument factory "
                "(a function in your module that returns a configured instance)"
                if error.kind == "TypeError"
                else ""
            )
            raise TargetError(f"target {shown}: calling it raised {error.message}{hint}") from error
        try:
            missing = [m for m in ("apply", "get") if not callable(getattr(probe, m, None))]
            self.features = features_of(probe)
        except (TokasmExit, TokasmInterrupt):  # tokasm's own signal handlers, in process
            raise
        except BaseException as error:  # a property of the instance that raises, even exits
            raise TargetError(
                f"target {shown}: looking up its methods raised {error_text(error)}"
            ) from None
        if missing:
            raise TargetError(
                f"target {shown}: it made a {type_name(probe)}, which has no {missing[0]}() method"
            )

    def with_fresh_events(self, *, other_mappings: bool = False) -> PythonTarget:
        """A twin sent each event anew, kept alive (to tell EVENT-OWNED), or as other mappings."""
        twin = copy.copy(self)
        twin._caller = CallerHabits(
            gentle=True, other_mappings=other_mappings, whole=self._caller.whole
        )
        twin._instances = {}
        return twin

    def check_whole_events(self, whole: bool) -> None:
        """Whether any change to an event breaks EVENT-OWNED (strict), or only to its meaning."""
        self._caller.whole = whole

    def _made(self, doing: str = "") -> Assembler:
        try:
            return self._factory()
        except (TokasmExit, TokasmInterrupt):  # tokasm's own signal handlers, in process
            raise
        except BaseException as error:  # even SystemExit is the case's error
            raise _raised(error, doing) from None

    def new(self, instance: str) -> None:
        self._caller.forget()  # a case's first act: the last case's events go
        self._instances.pop(instance, None)
        self._instances[instance] = self._made("factory raised ")

    def perform(self, step: Step) -> str | Foreign | None:
        return _returned(self.perform_raw(step))

    def perform_raw(self, step: Step) -> object:
        """What ``step`` returned, unconverted: the cost probe times the target alone, and
        every step of a case comes this way (a test double's fault, a worker's heartbeat)."""
        assembler = self._instances.get(step.instance)
        if assembler is None:
            raise ImplementationError("KeyError", f"no instance {step.instance!r} was created")
        try:
            if type(step) is Apply:
                return self._caller.apply(assembler, step)
            return step.perform(assembler)
        except (EventNotOwned, TokasmExit, TokasmInterrupt):  # the kit's own
            raise
        except BaseException as error:  # even SystemExit is the case's error
            raise _raised(error) from None

    def perform_steps(self, steps: Sequence[Step]) -> Generator[StepOutcome, None, None]:
        for step in steps:
            try:
                value = self.perform_raw(step)
            except ImplementationError as error:
                yield error
            else:
                yield value if value is None or type(value) is str else _returned(value)

    def close(self) -> None:
        self._instances.clear()
        self._caller.forget()


def resolve_target(target: str) -> AssemblerFactory:
    """``module:attr`` or a bundled backend name as a factory, or TargetError; the current
    folder is importable, as with ``python -m``, or the folder of a MODULE given as a path."""
    if target in BACKENDS:
        return BACKENDS[target]
    module_name, colon, attr_path = target.rpartition(":")
    if not colon or not module_name or not attr_path:
        known = ", ".join(BACKENDS)
        raise TargetError(
            f"target {target!r}: expected MODULE:ATTR (e.g. mypkg.stream:Assembler) "
            f"or a bundled backend ({known})"
        )
    folder = Path.cwd()
    if module_name.endswith(".py") or "/" in module_name:
        path = Path(module_name).resolve()
        folder, module_name = path.parent, path.stem
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    try:
        obj: object = importlib.import_module(module_name)
    except (TokasmExit, TokasmInterrupt):  # tokasm's own signal handlers, in process
        raise
    except BaseException as error:
        frames, _ = user_frames(error.__traceback__)
        raise TargetError(
            f"target {target!r}: cannot import module {module_name!r}: "
            f"{safe_text(class_name(type(error)), 80)}: {safe_text(error)}"
            + (f" (at {frames[-1]})" if frames else "")
        ) from error
    try:
        obj = operator.attrgetter(attr_path)(obj)
    except AttributeError:
        raise TargetError(
            f"target {target!r}: module {module_name!r} has no attribute {attr_path!r}"
        ) from None
    except (TokasmExit, TokasmInterrupt):
        raise
    except BaseException as error:  # a module __getattr__ may raise anything, even exit
        raise TargetError(
            f"target {target!r}: looking up {attr_path!r} raised {error_text(error)}"
        ) from error
    if not callable(obj):
        raise TargetError(
            f"target {target!r}: {attr_path!r} is a {type_name(obj)}, "
            "not a class or zero-argument factory"
        )
    return cast("AssemblerFactory", obj)
