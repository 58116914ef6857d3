"""Shared bookkeeping for the backends that differ only in how they buffer text.

Every rule about finalization lives here once; a backend supplies three small
buffer operations. The recommended backend (``chunked``) inlines the same
logic instead, because it is measured against ``list-join`` per event.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokasm.implementations._types import Event

__all__ = ["BufferedAssembler"]


class BufferedAssembler(ABC):
    """Finalization rules over an abstract per-message buffer."""

    def __init__(self) -> None:
        # ASM-STATE: per-instance state; finalized texts are cached (CACHE-FINAL).
        self._finalized: dict[str, str] = {}

    @abstractmethod
    def _append(self, message_id: str, delta: str | None) -> None:
        """Create the message if needed (CREATE) and append ``delta`` when given."""

    @abstractmethod
    def _text(self, message_id: str) -> str | None:
        """The current text of an open message, or None if never seen."""

    @abstractmethod
    def _release(self, message_id: str) -> None:
        """Drop the open buffer of a message that has just been finalized."""

    def _completed(self, message_id: str) -> str | None:
        """The text of a finalized message; ``naive-join`` overrides this to re-join."""
        return self._finalized.get(message_id)

    def apply(self, event: Event) -> str | None:
        message_id = event["id"]
        final = event.get("final", False)  # EVT-SHAPE: missing final means false
        done = self._completed(message_id)
        if done is not None:
            # AFTER-DELTA-IGNORED, AFTER-REFINAL, AFTER-NONFINAL
            return done if final else None
        # APPEND, APPEND-EMPTY: the key's presence decides, not the value's truth.
        self._append(message_id, event.get("delta"))
        if not final:
            return None  # NONFINAL-NONE
        text = self._text(message_id)
        assert text is not None  # _append created it
        self._finalized[message_id] = text  # FINAL-RETURN, CACHE-FINAL
        self._release(message_id)
        return text

    def get(self, message_id: str) -> str | None:
        done = self._completed(message_id)
        return done if done is not None else self._text(message_id)  # GET-TEXT, GET-UNKNOWN

    def read_since(self, message_id: str, offset: int) -> str | None:
        text = self.get(message_id)
        return None if text is None else text[offset:]  # INC-READ-SINCE, INC-UNKNOWN
