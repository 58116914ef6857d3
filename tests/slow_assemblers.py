"""Assemblers that ``tokasm bench`` must survive: slow, hanging, exiting, crashing, noisy.

``tests/test_bench_cli.py`` copies this file into a project folder and
benchmarks these classes through the CLI. Each misbehaves once a message has
more than ``AFTER`` deltas, so the smallest sizes measure normally. Only the
standard library and tokasm are imported, so the file can be copied anywhere.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading

from tokasm.implementations import Event, ListJoinAssembler

__all__ = [
    "CompactsEvery64Deltas",
    "CrashesOnALongMessage",
    "ExitsOnALongMessage",
    "ExitsWhenALongTextGoes",
    "FinalizedIdsInAList",
    "HangsOnALongMessage",
    "PrintsEveryDelta",
    "RaisesOnALongTextThenExitsWhenItGoes",
    "RebuildsTextEachDelta",
]

#: Deltas a message may have before the misbehaving classes misbehave.
AFTER = 60


class RebuildsTextEachDelta(ListJoinAssembler):
    """list-join, but the whole text is joined again after every delta and kept: a
    correct class whose stream is quadratic."""

    def __init__(self) -> None:
        super().__init__()
        self.latest: dict[str, str | None] = {}

    def _append(self, message_id: str, delta: str | None) -> None:
        super()._append(message_id, delta)
        self.latest[message_id] = self._text(message_id)


class CompactsEvery64Deltas(ListJoinAssembler):
    """list-join, but every 64 deltas a message's parts are joined into one (to save memory):
    a correct class whose stream is quadratic, a copy of the text every 64 deltas."""

    def _append(self, message_id: str, delta: str | None) -> None:
        super()._append(message_id, delta)
        parts = self._parts[message_id]
        if len(parts) >= 64:
            parts[:] = ["".join(parts)]


class FinalizedIdsInAList(ListJoinAssembler):
    """list-join, but every event first looks its id up in a list of the finalized ids, as
    the seed's "finalized IDs" may read: a correct class, quadratic over many messages."""

    def __init__(self) -> None:
        super().__init__()
        self.finalized_ids: list[str] = []

    def apply(self, event: Event) -> str | None:
        done = event["id"] in self.finalized_ids
        text = super().apply(event)
        if text is not None and not done:
            self.finalized_ids.append(event["id"])
        return text


class _Misbehaves(ListJoinAssembler):
    def _append(self, message_id: str, delta: str | None) -> None:
        super()._append(message_id, delta)
        if len(self._parts[message_id]) > AFTER:
            self.misbehave()

    def misbehave(self) -> None:
        raise NotImplementedError


class HangsOnALongMessage(_Misbehaves):
    """The delta after ``AFTER`` never returns, and no signal but SIGKILL ends it."""

    def misbehave(self) -> None:
        while True:
            try:
                threading.Event().wait()
            except BaseException:  # as a retry loop might
                continue


class ExitsOnALongMessage(_Misbehaves):
    """Ends its process at once, with no clean-up (``os._exit``)."""

    def misbehave(self) -> None:
        os._exit(7)


class CrashesOnALongMessage(_Misbehaves):
    """Reads address 0: a segmentation fault."""

    def misbehave(self) -> None:
        ctypes.string_at(0)


class KilledByAnUnnamedSignal(_Misbehaves):
    """Ends by a real-time signal, which has no name in ``signal.Signals``."""

    def misbehave(self) -> None:
        os.kill(os.getpid(), 40)


class WritesJsonThatIsNoAnswer(_Misbehaves):
    """Writes a JSON object that is no answer to every descriptor a channel may be on, then ends."""

    LINE = b'{"ok": "x"}\n'

    def misbehave(self) -> None:
        for descriptor in range(3, 10):
            with contextlib.suppress(OSError):
                os.write(descriptor, self.LINE)
        os._exit(0)


class WritesATimeOfZero(WritesJsonThatIsNoAnswer):
    """Forges a step's answer on every descriptor: a time of 0 (a report divides by it)."""

    LINE = b'{"ok": [0, 0]}\n'


class WritesATimeNoFloatHolds(WritesJsonThatIsNoAnswer):
    """Forges a step's answer with a time of 10**400 (a float overflows on it)."""

    LINE = b'{"ok": [1, 1' + b"0" * 400 + b"]}\n"


class WritesJsonNestedDeeply(WritesJsonThatIsNoAnswer):
    """Forges a line of JSON nested deeper than a recursive decoder goes."""

    LINE = b"[" * 100_000 + b"]" * 100_000 + b"\n"


class ForgesAnError(WritesJsonThatIsNoAnswer):
    """Forges a step's error, which clears a terminal and paints it red."""

    LINE = b'{"error": "\\u001b[2J\\u001b[31mforged"}\n'


class ExitsWhenALongTextGoes(ListJoinAssembler):
    """Ends its process when an instance that was sent a long text is dropped (a finalizer):
    a scenario on long texts keeps one for its rounds."""

    def _append(self, message_id: str, delta: str | None) -> None:
        super()._append(message_id, delta)
        self.long = getattr(self, "long", False) or len(delta or "") > 10_000

    def __del__(self) -> None:
        if getattr(self, "long", False):
            os._exit(7)


class HangsWhenALongTextGoes(ExitsWhenALongTextGoes):
    """Hangs when an instance that was sent a long text is dropped (a finalizer)."""

    def __del__(self) -> None:
        if getattr(self, "long", False):
            threading.Event().wait()


class RaisesOnALongTextThenExitsWhenItGoes(ExitsWhenALongTextGoes):
    """Raises at the delta after a long text: its scenario ends there, and the instance goes."""

    def _append(self, message_id: str, delta: str | None) -> None:
        if getattr(self, "long", False):
            raise RuntimeError("after a long text")
        super()._append(message_id, delta)


class PrintsEveryDelta(ListJoinAssembler):
    """Writes to stdout (and its descriptor) on every delta: none of it may pass for a result."""

    def _append(self, message_id: str, delta: str | None) -> None:
        super()._append(message_id, delta)
        sys.stdout.write('{"scenario": "x"}\n')
        os.write(1, b"garbage\n")
