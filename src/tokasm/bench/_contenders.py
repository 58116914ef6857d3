"""What ``tokasm bench`` measures: bundled backends, Python targets, protocol testees.

A protocol testee is driven through the same scenarios as an in-process
assembler, via a small adapter over its ``Subject``: every ``apply``, ``get``
or ``read_since`` is one request and one response, so its costs include the
round trip and are not comparable with in-process ones (reports say "per
request"), but its scaling exponent is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tokasm._display import error_text
from tokasm.bench._sweep import Contender
from tokasm.corpus.steps import READ_SINCE, Apply, Get, ReadSince, features_of
from tokasm.errors import TargetError
from tokasm.implementations import BACKENDS
from tokasm.run._guard import reraise_unless_target
from tokasm.run.subjects import Foreign

if TYPE_CHECKING:
    from tokasm.implementations import Assembler, AssemblerFactory, Event
    from tokasm.run.subjects import Subject

__all__ = ["bundled_contenders", "protocol_contender", "python_contender"]

#: The testee instance the scenarios use; ``new`` replaces the previous one,
#: so a long sweep does not pile up assemblers in the testee.
_INSTANCE = "bench"


def python_contender(name: str, factory: AssemblerFactory) -> Contender:
    """An in-process assembler factory; ``read_since`` is detected on a fresh instance
    (TargetError if making or inspecting it raises)."""
    try:
        return Contender(name, factory, READ_SINCE in features_of(factory()))
    except BaseException as error:
        reraise_unless_target(error)
        raise TargetError(f"target {name!r}: calling it raised {error_text(error)}") from None


def bundled_contenders() -> list[Contender]:
    """Every bundled backend, in registry order."""
    return [python_contender(name, factory) for name, factory in BACKENDS.items()]


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
    """A running testee, named ``cmd:NAME`` after its hello; each factory call starts
    a fresh assembler in it."""

    def factory() -> Assembler:
        return _SubjectAssembler(subject)

    return Contender(
        f"cmd:{subject.name}", factory, READ_SINCE in subject.features, per_request=True
    )
