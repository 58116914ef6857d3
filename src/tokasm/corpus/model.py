"""The oracle: the spec as a tiny executable model, obviously right and never fast.

Fuzzing and the stateful tests compare every target against it; each rule's id stands beside
the line of SPEC.md it restates."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokasm.implementations import Event


class ModelAssembler:
    """Reference semantics for the required and incremental profiles."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}  # ASM-STATE: per instance
        self._finalized: set[str] = set()

    def apply(self, event: Event) -> str | None:
        message_id = event["id"]  # EVT-ID-ANY: compared exactly
        final = event.get("final", False)  # EVT-SHAPE
        if message_id in self._finalized:
            # AFTER-DELTA-IGNORED, AFTER-REFINAL, AFTER-NONFINAL
            return self._texts[message_id] if final else None
        text = self._texts.get(message_id, "")  # CREATE: starts as ""
        if "delta" in event:  # APPEND, APPEND-EMPTY
            text += event["delta"]  # APPEND-EXACT, ORDER
        self._texts[message_id] = text
        if final:
            self._finalized.add(message_id)
            return text  # FINAL-RETURN, FINAL-UNSEEN
        return None  # NONFINAL-NONE

    def get(self, message_id: str) -> str | None:
        return self._texts.get(message_id)  # GET-TEXT, GET-UNKNOWN

    def read_since(self, message_id: str, offset: int) -> str | None:
        text = self._texts.get(message_id)
        # INC-READ-SINCE, INC-UNKNOWN, INC-OFFSET-END
        return None if text is None else text[offset:]
