"""``list-join``: a list of parts per message, joined once at finalization."""

from __future__ import annotations

from tokasm.implementations._buffered import BufferedAssembler


class ListJoinAssembler(BufferedAssembler):
    """The textbook backend: O(1) append, but every streaming ``get`` joins all parts."""

    def __init__(self) -> None:
        super().__init__()
        self._parts: dict[str, list[str]] = {}

    def _append(self, message_id: str, delta: str | None) -> None:
        parts = self._parts.setdefault(message_id, [])
        if delta is not None:
            parts.append(delta)

    def _text(self, message_id: str) -> str | None:
        parts = self._parts.get(message_id)
        return None if parts is None else "".join(parts)

    def _release(self, message_id: str) -> None:
        del self._parts[message_id]
