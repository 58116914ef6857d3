"""The operations a case performs, each a step kind that runs, shows and encodes itself.

``OPS`` maps each protocol op name to its step class. The corpus loader, the
runner, both ends of the protocol, the fuzzer, the stateful test and the
benchmarks all go through it, so adding an operation means one class here
(plus ``case.schema.json``, ``PROTOCOL.md`` and ``SPEC.md``).

A step's ``expect`` is None in a fuzzer program, before the oracle
(``ModelAssembler``) has said what the step must return.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeAlias

from tokasm._display import show
from tokasm.errors import ProtocolError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "OPS",
    "READ_SINCE",
    "Apply",
    "Expectation",
    "Get",
    "Raises",
    "ReadSince",
    "Returns",
    "Step",
    "features_of",
    "string_field",
]

#: The feature name a subject declares when it offers ``read_since`` (INC-*).
READ_SINCE = "read_since"


@dataclass(frozen=True)
class Returns:
    """The step must return this value (None is ``null``)."""

    value: str | None

    def document(self) -> dict[str, object]:
        """The expectation as the corpus and its export write it."""
        return {"returns": self.value}


@dataclass(frozen=True)
class Raises:
    """The step must raise an error of this kind (strict profile)."""

    kind: str

    def document(self) -> dict[str, object]:
        """The expectation as the corpus and its export write it."""
        return {"raises": self.kind}


Expectation: TypeAlias = "Returns | Raises"


class _Assembler(Protocol):
    """What a step is performed on: an assembler, or anything answering like one."""

    def apply(self, event: Any) -> str | None: ...

    def get(self, message_id: str) -> str | None: ...


def string_field(request: Mapping[str, object], key: str) -> str:
    value = request.get(key)
    if not isinstance(value, str):
        raise ProtocolError(f"request needs a string {key!r}, got {value!r}")
    return value


@dataclass(frozen=True)
class Step:
    """One operation on one named instance; ``where`` is its number in the case (``3``,
    ``2[7].1``)."""

    #: The protocol's name for this operation.
    op: ClassVar[str]
    #: The feature a subject must declare to be sent this operation (None: always).
    feature: ClassVar[str | None] = None

    instance: str
    expect: Expectation | None
    where: str = dataclasses.field(default="", kw_only=True)

    def perform(self, assembler: _Assembler) -> str | None:
        """Call the operation on ``assembler`` and return its result."""
        raise NotImplementedError

    def describe(self) -> str:
        """The call as a person reads it, e.g. ``get('m')``."""
        raise NotImplementedError

    def arguments(self) -> dict[str, object]:
        """The request's fields besides ``op`` and ``instance`` (spec/PROTOCOL.md)."""
        raise NotImplementedError

    def request(self) -> dict[str, object]:
        """The protocol request for this step."""
        return {"op": self.op, "instance": self.instance, **self.arguments()}

    @classmethod
    def from_request(cls, request: Mapping[str, object]) -> Step:
        """The step a protocol request asks for; ProtocolError if a field is missing or wrong."""
        raise NotImplementedError

    @property
    def message_id(self) -> object:
        """The message the step is about (an apply's ``id`` may be any JSON in strict cases)."""
        raise NotImplementedError

    def with_message_id(self, message_id: str) -> Step:
        """The same step about another message."""
        raise NotImplementedError

    def document(self) -> dict[str, object]:
        """The step in the corpus's plain form (CASES.md), without ``on`` and ``returns``."""
        raise NotImplementedError


@dataclass(frozen=True)
class Apply(Step):
    """``apply(event)``; ``event`` is any JSON value in strict cases."""

    op: ClassVar[str] = "apply"

    event: object

    def perform(self, assembler: _Assembler) -> str | None:
        return assembler.apply(self.event)

    def describe(self) -> str:
        return f"apply({show(self.event)})"

    def arguments(self) -> dict[str, object]:
        return {"event": self.event}

    @classmethod
    def from_request(cls, request: Mapping[str, object]) -> Step:
        if "event" not in request:
            raise ProtocolError("apply needs 'event'")
        return cls(string_field(request, "instance"), None, request["event"])

    @property
    def message_id(self) -> object:
        return self.event.get("id") if isinstance(self.event, dict) else None

    def with_message_id(self, message_id: str) -> Step:
        assert isinstance(self.event, dict)
        return dataclasses.replace(self, event={**self.event, "id": message_id})

    def document(self) -> dict[str, object]:
        if isinstance(self.event, dict) and isinstance(self.event.get("id"), str):
            return {"apply": dict(self.event)}
        return {"apply_raw": self.event}


@dataclass(frozen=True)
class _AboutMessage(Step):
    """A step that names its message by a string id."""

    id: str

    @property
    def message_id(self) -> object:
        return self.id

    def with_message_id(self, message_id: str) -> Step:
        return dataclasses.replace(self, id=message_id)


@dataclass(frozen=True)
class Get(_AboutMessage):
    """``get(message_id)``."""

    op: ClassVar[str] = "get"

    def perform(self, assembler: _Assembler) -> str | None:
        return assembler.get(self.id)

    def describe(self) -> str:
        return f"get({self.id!r})"

    def arguments(self) -> dict[str, object]:
        return {"id": self.id}

    @classmethod
    def from_request(cls, request: Mapping[str, object]) -> Step:
        return cls(string_field(request, "instance"), None, string_field(request, "id"))

    def document(self) -> dict[str, object]:
        return {"get": self.id}


@dataclass(frozen=True)
class ReadSince(_AboutMessage):
    """``read_since(message_id, offset)`` of the incremental profile.

    In a fuzzer program ``from_end`` counts ``offset`` back from the text's
    current end, which only the oracle knows; the fuzzer's trace makes it absolute.
    """

    op: ClassVar[str] = "read_since"
    feature: ClassVar[str | None] = READ_SINCE

    offset: int
    from_end: bool = False

    def perform(self, assembler: _Assembler) -> str | None:
        result: str | None = assembler.read_since(self.id, self.offset)  # type: ignore[attr-defined]
        return result

    def describe(self) -> str:
        return f"read_since({self.id!r}, {self.offset})"

    def arguments(self) -> dict[str, object]:
        return {"id": self.id, "offset": self.offset}

    @classmethod
    def from_request(cls, request: Mapping[str, object]) -> Step:
        offset = request.get("offset")
        if type(offset) is not int or offset < 0:
            raise ProtocolError(f"request needs a non-negative integer 'offset', got {offset!r}")
        return cls(string_field(request, "instance"), None, string_field(request, "id"), offset)

    def document(self) -> dict[str, object]:
        return {"read_since": {"id": self.id, "offset": self.offset}}


#: Every operation a case can perform, by its protocol name.
OPS: dict[str, type[Step]] = {step.op: step for step in (Apply, Get, ReadSince)}


def features_of(assembler: object) -> frozenset[str]:
    """The optional operations ``assembler`` offers (a callable method of that name)."""
    return frozenset(
        step.feature
        for step in OPS.values()
        if step.feature is not None and callable(getattr(assembler, step.feature, None))
    )
