"""``str-concat``: ``text += delta`` on a string held in a dict, as the big SDKs do: CPython
cannot grow it in place, so every append copies the text (O(n^2) in characters)."""

from __future__ import annotations

from tokasm.implementations._buffered import BufferedAssembler


class StrConcatAssembler(BufferedAssembler):
    def __init__(self) -> None:
        super().__init__()
        self._texts: dict[str, str] = {}

    def _append(self, message_id: str, delta: str | None) -> None:
        self._texts[message_id] = self._texts.get(message_id, "") + (delta or "")

    def _text(self, message_id: str) -> str | None:
        return self._texts.get(message_id)

    def _release(self, message_id: str) -> None:
        del self._texts[message_id]
