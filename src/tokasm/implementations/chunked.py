"""``chunked``: the recommended backend (``tokasm.TokenAssembler``).

Each open message keeps a short list of pending parts and one *compacted* string, grown with
``text += chunk`` every ``COMPACT_EVERY`` deltas and on every read: amortized linear only
because CPython resizes a string in place when the code holds its only reference (when it
does not, and what it buys: docs/backends.md, "How chunked works"). The hot path is inlined
(no base class): ``apply`` is measured per event against ``list-join``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokasm.implementations._types import Event

#: Pending parts per message before they are compacted into its string: a few hundred keeps
#: the list's overhead (about 60 bytes per small str) small beside the text, and joins rare.
COMPACT_EVERY = 256


class ChunkedAssembler:
    """Parts list compacted into a string grown in place; reads cached until the next delta."""

    __slots__ = ("_finalized", "_parts", "_texts")

    def __init__(self) -> None:
        self._parts: dict[str, list[str]] = {}  # ASM-STATE; open message -> pending deltas
        self._texts: dict[str, str] = {}  # open message -> compacted text so far
        self._finalized: dict[str, str] = {}  # CACHE-FINAL

    def apply(self, event: Event) -> str | None:
        message_id = event["id"]
        parts = self._parts.get(message_id)
        if parts is None:
            done = self._finalized.get(message_id)
            if done is not None:
                # AFTER-DELTA-IGNORED, AFTER-REFINAL, AFTER-NONFINAL
                return done if event.get("final", False) else None
            # CREATE: every event creates the message, its text is "".
            parts = self._parts[message_id] = []
            self._texts[message_id] = ""
        if "delta" in event:  # APPEND, APPEND-EMPTY: the key's presence decides.
            parts.append(event["delta"])
            if len(parts) >= COMPACT_EVERY:
                self._compact(message_id, parts)
        if not event.get("final", False):  # EVT-SHAPE: missing final means false
            return None  # NONFINAL-NONE
        if parts:
            self._compact(message_id, parts)
        text = self._finalized[message_id] = self._texts.pop(message_id)  # FINAL-RETURN
        del self._parts[message_id]
        return text

    def _compact(self, message_id: str, parts: list[str]) -> str:
        """Append the pending parts to the message's string in place; return the full text."""
        texts = self._texts
        text = texts[message_id]
        # Drop the dict's reference so the local ``text`` is the only one and
        # ``+=`` can resize it in place (CPython; see the module docstring).
        texts[message_id] = ""
        text += "".join(parts)
        parts.clear()
        texts[message_id] = text
        return text

    def get(self, message_id: str) -> str | None:
        parts = self._parts.get(message_id)
        if parts is None:
            return self._finalized.get(message_id)  # GET-TEXT (final), GET-UNKNOWN
        # GET-TEXT (open): after a compaction the pending list is empty, so
        # until the next delta a re-read returns the same string at O(1).
        return self._compact(message_id, parts) if parts else self._texts[message_id]

    def read_since(self, message_id: str, offset: int) -> str | None:
        """``get(message_id)[offset:]``, a new string (unless offset <= 0), so the compacted
        one stays unshared and keeps growing in place (INC-READ-SINCE, INC-LINEAR)."""
        text = self.get(message_id)
        return None if text is None else text[offset:]  # INC-UNKNOWN, INC-OFFSET-END
