"""The contenders ``tokasm bench`` can measure besides a target in a worker process.

A protocol testee is driven here, through an adapter over its ``Subject``: every
``apply``, ``get`` or ``read_since`` is one request and one response, so its
costs include the round trip (reports say "per request"), but its exponent is
comparable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tokasm._display import error_text
from tokasm.bench._sweep import Contender
from tokasm.corpus.steps import READ_SINCE, Apply, Get, ReadSince, features_of
from tokasm.errors import TargetError
from tokasm.implementations import BACKENDS
from tokasm.run.subjects import Foreign

if TYPE_CHECKING:
    from tokasm.implementations import Assembler, AssemblerFactory, Event
    from tokasm.run.subjects import Subject

__all__ = ["bundled_contenders", "protocol_contender", "python_contender"]

#: The testee instance the scenarios use; ``new`` replaces the previous one.
_INSTANCE = "bench"


def python_contender(name: str, factory: AssemblerFactory) -> Contender:
    """An assembler factory measured in this process, unguarded (TargetError if making an
    instance raises)."""
    try:
        return Contender(name, READ_SINCE in features_of(factory()), factory=factory)
    except Exception as error:
        raise TargetError(f"target {name!r}: calling it raised {error_text(error)}") from None


def bundled_contenders(in_process: bool = False) -> list[Contender]:
    """Every bundled backend, in registry order, each in a worker unless ``in_process``."""
    if in_process:
        return [python_contender(name, factory) for name, factory in BACKENDS.items()]
    return [
        Contender(name, READ_SINCE in features_of(factory()), target=name)
        for name, factory in BACKENDS.items()
    ]


class _SubjectAssembler:
    """An assembler whose every call is a request to a protocol testee."""

    def __init__(self, subject: Subject) -> None:
        self._subject = subject
        subject.new(_INSTANCE)

    def apply(self, event: Event) -> str | None:
        return _answer(self._subject.perform(Apply(_INSTANCE, None, event)))

    def get(self, message_id: str) -> str | None:
        return _answer(self._subject.perform(Get(_INSTANCE, None, message_id)))

    def read_since(self, message_id: str, offset: int) -> str | None:
        return _answer(self._subject.perform(ReadSince(_INSTANCE, None, message_id, offset)))


def _answer(outcome: str | Foreign | None) -> str | None:
    """A testee's answer: the protocol carries only text and null, never ``Foreign``."""
    assert not isinstance(outcome, Foreign)
    return outcome


def protocol_contender(subject: Subject) -> Contender:
    """A running testee, named ``cmd:NAME`` after its hello; each factory call starts a
    fresh assembler in it."""

    def factory() -> Assembler:
        return _SubjectAssembler(subject)

    features = subject.features
    return Contender(
        f"cmd:{subject.name}", READ_SINCE in features, factory=factory, per_request=True
    )
