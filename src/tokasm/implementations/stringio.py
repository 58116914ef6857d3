"""``stringio``: one ``io.StringIO`` per open message."""

from __future__ import annotations

import io

from tokasm.implementations._buffered import BufferedAssembler


class StringIOAssembler(BufferedAssembler):
    """``getvalue`` copies on each streaming read."""

    def __init__(self) -> None:
        super().__init__()
        self._buffers: dict[str, io.StringIO] = {}

    def _append(self, message_id: str, delta: str | None) -> None:
        buffer = self._buffers.get(message_id)
        if buffer is None:
            buffer = self._buffers[message_id] = io.StringIO()
        if delta is not None:
            buffer.write(delta)

    def _text(self, message_id: str) -> str | None:
        buffer = self._buffers.get(message_id)
        return None if buffer is None else buffer.getvalue()

    def _release(self, message_id: str) -> None:
        self._buffers.pop(message_id).close()
