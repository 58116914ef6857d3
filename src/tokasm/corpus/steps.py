"""The operations a case performs: ``OPS`` maps each protocol op to its step class.

Every part of tokasm goes through ``OPS``, so a new operation is one class here (plus the
schema, PROTOCOL.md and SPEC.md). ``expect`` is None in a fuzzer program, before the oracle.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from tokasm._display import show
from tokasm.errors import ProtocolError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Apply", "Get", "Raises", "ReadSince", "Returns", "Step"]

#: The feature name a target declares when it offers ``read_since`` (INC-*).
READ_SINCE = "read_since"


@dataclass(frozen=True)
class Returns:
    """The step must return this value (None is ``null``)."""

    value: str | None

    def document(self) -> dict[str, object]:
        return {"returns": self.value}


@dataclass(frozen=True)
class Raises:
    """The step must raise an error of this kind (strict profile)."""

    kind: str

    def document(self) -> dict[str, object]:
        return {"raises": self.kind}


Expectation: TypeAlias = "Returns | Raises"


def string_field(request: Mapping[str, object], key: str) -> str:
    value = request.get(key)
    if not isinstance(value, str):
        raise ProtocolError(f"request needs a string {key!r}, got {value!r}")
    return value


@dataclass(frozen=True)
class Step:
    """One operation on one named instance, ``where`` in the case (``2[7].1``); a subclass
    names its ``op`` (the protocol's and the method's name) and its argument ``fields``."""

    op: ClassVar[str]
    fields: ClassVar[tuple[str, ...]] = ("id",)
    #: The feature a target must declare to be sent this operation (None: always).
    feature: ClassVar[str | None] = None

    instance: str
    expect: Expectation | None
    where: str = dataclasses.field(default="", kw_only=True)

    def arguments(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.fields}

    @classmethod
    def from_request(cls, request: Mapping[str, object]) -> Step:
        """The step a protocol request asks for; ProtocolError if a field is missing or wrong."""
        strings = (string_field(request, name) for name in cls.fields)
        return cls(string_field(request, "instance"), None, *strings)

    @property
    def message_id(self) -> object:
        """The message the step is about (an apply's ``id`` may be any JSON in strict cases)."""
        return self.arguments()["id"]

    def perform(self, assembler: Any) -> str | None:
        result: str | None = getattr(assembler, self.op)(*self.arguments().values())
        return result

    def describe(self) -> str:
        """The call as a person reads it, e.g. ``get('m')``."""
        return f"{self.op}({', '.join(map(repr, self.arguments().values()))})"

    def request(self) -> dict[str, object]:  # built without a dict to unpack
        request: dict[str, object] = {"op": self.op, "instance": self.instance}
        for name in self.fields:
            request[name] = getattr(self, name)
        return request

    def document(self) -> dict[str, object]:
        """The step in the corpus's plain form (CASES.md), without ``on`` and ``returns``."""
        arguments = self.arguments()
        return {self.op: arguments if len(arguments) > 1 else next(iter(arguments.values()))}


@dataclass(frozen=True)
class Apply(Step):
    """``apply(event)``; ``event`` is any JSON value in strict cases."""

    op: ClassVar[str] = "apply"
    fields: ClassVar[tuple[str, ...]] = ("event",)

    event: object
    #: The event is known to be a dict of texts and booleans: a shallow copy is a copy.
    flat: bool = dataclasses.field(default=False, kw_only=True, compare=False, repr=False)

    @classmethod
    def from_request(cls, request: Mapping[str, object]) -> Step:
        if "event" not in request:
            raise ProtocolError("apply needs 'event'")
        return cls(string_field(request, "instance"), None, request["event"])

    @property
    def message_id(self) -> object:
        return self.event.get("id") if isinstance(self.event, dict) else None

    def describe(self) -> str:
        return f"apply({show(self.event)})"

    def document(self) -> dict[str, object]:
        if isinstance(self.event, dict) and isinstance(self.event.get("id"), str):
            return {"apply": dict(self.event)}
        return {"apply_raw": self.event}


@dataclass(frozen=True)
class Get(Step):
    op: ClassVar[str] = "get"

    id: str


@dataclass(frozen=True)
class ReadSince(Step):
    """``from_end`` (in a fuzzer program) counts ``offset`` back from the text's end."""

    op: ClassVar[str] = "read_since"
    fields: ClassVar[tuple[str, ...]] = ("id", "offset")
    feature: ClassVar[str | None] = READ_SINCE

    id: str
    offset: int
    from_end: bool = False

    @classmethod
    def from_request(cls, request: Mapping[str, object]) -> Step:
        offset = request.get("offset")
        if type(offset) is not int or offset < 0:
            raise ProtocolError(f"request needs a non-negative integer 'offset', got {offset!r}")
        return cls(string_field(request, "instance"), None, string_field(request, "id"), offset)


#: Every operation a case can perform, by its protocol name.
OPS: dict[str, type[Step]] = {step.op: step for step in (Apply, Get, ReadSince)}


def features_of(assembler: object) -> frozenset[str]:
    """The optional operations ``assembler`` offers (a callable method of that name)."""
    return frozenset(
        step.feature
        for step in OPS.values()
        if step.feature is not None and callable(getattr(assembler, step.feature, None))
    )
