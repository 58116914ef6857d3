"""What a case runs against: the ``Subject`` interface and its in-process implementation.

The runner only speaks ``Subject``; an in-process Python factory and a
protocol testee (``tokasm.conformance._protocol_client``) both provide it, so
every case, report and expected-failure list works the same for either.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from ..errors import ImplementationError, TargetError
from ..implementations import BACKENDS
from .steps import features_of

if TYPE_CHECKING:
    from ..implementations import Assembler, AssemblerFactory
    from .steps import Step

__all__ = ["PythonSubject", "Subject", "resolve_target"]


class Subject(Protocol):
    """A target under test that can hold several named assembler instances."""

    @property
    def name(self) -> str: ...

    @property
    def features(self) -> frozenset[str]: ...

    def new(self, instance: str) -> None:
        """Create a fresh assembler under ``instance``, replacing any earlier one."""

    def perform(self, step: Step) -> str | None:
        """Perform ``step`` on its instance: its result, or ImplementationError if it raised,
        or SubjectFault if the testee itself failed."""

    def close(self) -> None: ...


def _error_kind(error: Exception) -> str:
    """Name the error by the strict profile's kinds where it is one of them."""
    for kind in (TypeError, ValueError):
        if isinstance(error, kind):
            return kind.__name__
    return type(error).__name__


class PythonSubject:
    """Runs cases in this process against a zero-argument factory."""

    def __init__(self, factory: AssemblerFactory, name: str) -> None:
        self._factory = factory
        self._name = name
        self._instances: dict[str, Assembler] = {}
        try:
            probe = factory()
        except Exception as error:
            raise TargetError(f"target {name!r}: calling it raised {error!r}") from error
        for method in ("apply", "get"):
            if not callable(getattr(probe, method, None)):
                raise TargetError(
                    f"target {name!r}: it made a {type(probe).__name__}, "
                    f"which has no {method}() method"
                )
        self._features = features_of(probe)

    @property
    def name(self) -> str:
        return self._name

    @property
    def features(self) -> frozenset[str]:
        return self._features

    def _make(self) -> Assembler:
        try:
            return self._factory()
        except Exception as error:
            raise ImplementationError(_error_kind(error), f"factory raised {error!r}") from error

    def new(self, instance: str) -> None:
        self._instances[instance] = self._make()

    def perform(self, step: Step) -> str | None:
        try:
            return step.perform(self._instances[step.instance])
        except Exception as error:
            raise ImplementationError(_error_kind(error), repr(error)) from error

    def close(self) -> None:
        self._instances.clear()


def resolve_target(target: str) -> AssemblerFactory:
    """Turn ``module:attr`` (or a bundled backend name) into a factory, or raise TargetError.

    ``attr`` may be a class or any zero-argument callable returning a fresh
    assembler; the current folder is importable, as with ``python -m``.
    """
    if target in BACKENDS:
        return BACKENDS[target]
    module_name, colon, attr_path = target.partition(":")
    if not colon or not module_name or not attr_path:
        known = ", ".join(BACKENDS)
        raise TargetError(
            f"target {target!r}: expected MODULE:ATTR (e.g. mypkg.stream:Assembler) "
            f"or a bundled backend ({known})"
        )
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        obj: object = importlib.import_module(module_name)
    except Exception as error:
        raise TargetError(
            f"target {target!r}: cannot import module {module_name!r}: "
            f"{type(error).__name__}: {error}"
        ) from error
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise TargetError(
                f"target {target!r}: module {module_name!r} has no attribute {attr_path!r}"
            ) from None
    if not callable(obj):
        raise TargetError(
            f"target {target!r}: {attr_path!r} is a {type(obj).__name__}, "
            "not a class or zero-argument factory"
        )
    return cast("AssemblerFactory", obj)
