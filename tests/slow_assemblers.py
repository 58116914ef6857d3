"""Deliberately slow assemblers: what ``tokasm bench`` must stay bounded on.

A user's class that rebuilds its text on every delta conforms to the spec and
still costs O(n) per event, O(n^2) per stream: a sweep that does not predict
its cost runs for hours at 1M deltas. A class that hangs past some size
cannot be predicted at all. ``tests/test_bench_cli.py`` copies this file into
a project folder and benchmarks these classes through the CLI.

Only the standard library and tokasm are imported, so the file can be copied
anywhere.
"""

from __future__ import annotations

import contextlib
import threading

from tokasm.implementations import ListJoinAssembler

__all__ = [
    "HangsOnALongMessage",
    "IgnoresTheInterrupt",
    "RebuildsTextEachDelta",
    "SwallowsTheInterruptOnce",
]

#: Deltas a message may have before ``HangsOnALongMessage`` stops answering.
HANG_AFTER = 60


class RebuildsTextEachDelta(ListJoinAssembler):
    """list-join, but the whole text is joined again after every delta and kept."""

    def __init__(self) -> None:
        super().__init__()
        self.latest: dict[str, str | None] = {}

    def _append(self, message_id: str, delta: str | None) -> None:
        super()._append(message_id, delta)
        self.latest[message_id] = self._text(message_id)


class HangsOnALongMessage(ListJoinAssembler):
    """list-join until a message has ``HANG_AFTER`` deltas; the next one never returns."""

    def _append(self, message_id: str, delta: str | None) -> None:
        super()._append(message_id, delta)
        if len(self._parts[message_id]) > HANG_AFTER:
            threading.Event().wait()


class IgnoresTheInterrupt(ListJoinAssembler):
    """``HangsOnALongMessage``, but whatever is raised while it waits is swallowed, as code
    with ``except BaseException: pass`` in a retry loop does: it cannot be interrupted."""

    def _append(self, message_id: str, delta: str | None) -> None:
        super()._append(message_id, delta)
        while len(self._parts[message_id]) > HANG_AFTER:
            with contextlib.suppress(BaseException):  # even the sweep's Overrun
                threading.Event().wait()


class SwallowsTheInterruptOnce(ListJoinAssembler):
    """``HangsOnALongMessage``, but the interrupt that ends the wait is swallowed and the
    run goes on, its time over the limit: it returns, late, as if nothing had happened."""

    def __init__(self) -> None:
        super().__init__()
        self._swallowed = False

    def _append(self, message_id: str, delta: str | None) -> None:
        super()._append(message_id, delta)
        if len(self._parts[message_id]) > HANG_AFTER and not self._swallowed:
            self._swallowed = True
            with contextlib.suppress(BaseException):
                threading.Event().wait()
