"""A validating wrapper: any backend in, the same behaviour out, malformed events refused.

The core spec assumes well-formed events (EVT-WELLFORMED); the ``strict`` profile (STRICT-*)
asks for a named error, the state untouched, which validating before delegating gives to
every backend at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

from tokasm.implementations._types import IncrementalAssembler

if TYPE_CHECKING:
    from tokasm.implementations._types import Assembler, Event


def validate_event(event: object) -> Event:
    """Return ``event`` if well formed; raise TypeError or ValueError naming the field."""
    if not isinstance(event, Mapping):  # STRICT-EVENT-TYPE
        raise TypeError(f"event must be a mapping, got {type(event).__name__}")
    if "id" not in event:  # STRICT-ID-MISSING
        raise ValueError("event is missing the required field 'id'")
    for field, expected in (("id", str), ("delta", str), ("final", bool)):
        # STRICT-ID-TYPE, STRICT-DELTA-TYPE, STRICT-FINAL-TYPE
        if field in event and not isinstance(event[field], expected):
            value = event[field]
            raise TypeError(
                f"event field {field!r} must be {expected.__name__}, "
                f"got {type(value).__name__} {value!r}"
            )
    return cast("Event", event)


class StrictAssembler:
    """Validates each event, then delegates; refused events never reach the backend."""

    def __init__(self, inner: Assembler) -> None:
        self._inner = inner

    def apply(self, event: Event) -> str | None:
        return self._inner.apply(validate_event(event))

    def get(self, message_id: str) -> str | None:
        return self._inner.get(message_id)


class StrictIncrementalAssembler(StrictAssembler):
    """The strict wrapper for a backend with ``read_since``, which it keeps (INC-*)."""

    _inner: IncrementalAssembler

    def read_since(self, message_id: str, offset: int) -> str | None:
        return self._inner.read_since(message_id, offset)


def strict(inner: Assembler) -> Assembler:
    """Wrap ``inner`` in the strict validator, keeping ``read_since`` only if it has one."""
    incremental = isinstance(inner, IncrementalAssembler)
    return (StrictIncrementalAssembler if incremental else StrictAssembler)(inner)
