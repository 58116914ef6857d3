"""The shape every backend shares, so mypy can check any of them (and yours)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypedDict, runtime_checkable


class _EventRequired(TypedDict):
    id: str


class Event(_EventRequired, total=False):
    """One streamed event (SPEC EVT-SHAPE): ``id`` always, ``delta`` and ``final`` optional."""

    delta: str
    final: bool


@runtime_checkable
class Assembler(Protocol):
    """A streaming token assembler (SPEC ASM-STATE .. AFTER-NONFINAL)."""

    def apply(self, event: Event) -> str | None: ...

    def get(self, message_id: str) -> str | None: ...


@runtime_checkable
class IncrementalAssembler(Assembler, Protocol):
    """An assembler with the optional incremental read (SPEC INC-*)."""

    def read_since(self, message_id: str, offset: int) -> str | None: ...


AssemblerFactory = Callable[[], Assembler]
