"""``cached-read``: parts list plus a cached join, valid until the next delta: an unchanged
re-read is O(1), but a read after every delta still joins (quadratic)."""

from __future__ import annotations

from tokasm.implementations.list_join import ListJoinAssembler


class CachedReadAssembler(ListJoinAssembler):
    """Collapses the parts into one string on read, so the next join starts from it."""

    def _text(self, message_id: str) -> str | None:
        parts = self._parts.get(message_id)
        if parts is None:
            return None
        if len(parts) != 1:  # the join, as the only part, is the cache until the next delta
            parts[:] = ["".join(parts)]
        return parts[0]
