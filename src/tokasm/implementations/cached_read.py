"""``cached-read``: parts list plus a cached join, valid until the next delta.

An unchanged re-read during streaming is O(1); a read after every delta still
joins, so a read-after-each-delta loop remains quadratic.
"""

from __future__ import annotations

from tokasm.implementations.list_join import ListJoinAssembler

__all__ = ["CachedReadAssembler"]


class CachedReadAssembler(ListJoinAssembler):
    """Collapses the parts into one string on read, so the next join starts from it."""

    def _text(self, message_id: str) -> str | None:
        parts = self._parts.get(message_id)
        if parts is None:
            return None
        if len(parts) != 1:
            # Replace the parts with their join: the cache is the list's only element,
            # invalidated naturally when the next delta is appended.
            parts[:] = ["".join(parts)]
        return parts[0]
