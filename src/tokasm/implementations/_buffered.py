"""The finalization rules, once, for the backends that differ only in how they buffer text
(``chunked`` inlines them: it is measured against ``list-join`` per event)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokasm.implementations._types import Event


class BufferedAssembler(ABC):
    """Finalization rules over a per-message buffer that a subclass supplies."""

    def __init__(self) -> None:
        # ASM-STATE: per-instance state; finalized texts are cached (CACHE-FINAL).
        self._finalized: dict[str, str] = {}

    @abstractmethod
    def _append(self, message_id: str, delta: str | None) -> None:
        """Create the message if needed (CREATE) and append ``delta`` when given."""

    @abstractmethod
    def _text(self, message_id: str) -> str | None: ...  # an open message's, None if unseen

    @abstractmethod
    def _release(self, message_id: str) -> None: ...  # drop a just-finalized message's buffer

    def _completed(self, message_id: str) -> str | None:  # naive-join re-joins instead
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
