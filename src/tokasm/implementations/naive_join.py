"""``naive-join``: joins the parts on every ``get``, even after finalization.

This is the uncached baseline the spec warns about (CACHE-FINAL): it conforms
in behaviour but rereads the whole message on every read. It exists so the
benchmarks have something to show the cost against.
"""

from __future__ import annotations

from tokasm.implementations.list_join import ListJoinAssembler

__all__ = ["NaiveJoinAssembler"]


class NaiveJoinAssembler(ListJoinAssembler):
    """Keeps the parts after finalization and re-joins them on every read."""

    def _completed(self, message_id: str) -> str | None:
        if message_id not in self._finalized:
            return None
        return "".join(self._parts[message_id])

    def _release(self, message_id: str) -> None:
        # Keep the parts: the completed text is re-joined on demand, never cached.
        self._finalized[message_id] = ""
