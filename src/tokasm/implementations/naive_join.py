"""``naive-join``: joins the parts on every ``get``, even after finalization: the uncached
baseline the spec warns about (CACHE-FINAL), for the benchmarks to show the cost against."""

from __future__ import annotations

from tokasm.implementations.list_join import ListJoinAssembler


class NaiveJoinAssembler(ListJoinAssembler):
    def _completed(self, message_id: str) -> str | None:
        if message_id not in self._finalized:
            return None
        return "".join(self._parts[message_id])

    def _release(self, message_id: str) -> None:  # keeps the parts, to re-join on each read
        self._finalized[message_id] = ""
