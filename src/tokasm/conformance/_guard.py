"""Which exceptions belong to the target, and where in the user's code they were raised.

Target code runs in tokasm's process, so whatever it raises, ``SystemExit``,
``GeneratorExit`` and custom ``BaseException`` subclasses included, is that
case's error: nothing a target raises may decide tokasm's exit status.

The one exception that may be the user's is ``KeyboardInterrupt``: a Ctrl-C
must still stop the run. ``watch_interrupts`` replaces Python's default
SIGINT handler with one that behaves the same (it raises KeyboardInterrupt)
but first notes that a signal really arrived. A ``KeyboardInterrupt`` is the
user's if such a signal arrived, or if tokasm could not install its handler
(another handler was set, or not on the main thread): then it stops the run,
as it always did. Otherwise the target raised it itself, and it is an error.
"""

from __future__ import annotations

import signal
import threading
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import FrameType, TracebackType

__all__ = ["reraise_unless_target", "user_frames", "user_stack", "watch_interrupts"]

_TOKASM = Path(__file__).resolve().parent.parent
#: The bundled backends are the code under test when they are the target.
_BUNDLED = _TOKASM / "implementations"
#: How many of the innermost user frames a failure message names.
SHORT_FRAMES = 3


class _Interrupts:
    """Whether tokasm's SIGINT handler is in place, and whether a signal came through it."""

    watching = False
    received = False


def _note_and_interrupt(signum: int, frame: FrameType | None) -> None:
    _Interrupts.received = True
    signal.default_int_handler(signum, frame)


def watch_interrupts() -> None:
    """Tell a real Ctrl-C from a target's own KeyboardInterrupt from now on (main thread only;
    leaves a handler someone else installed alone). Idempotent."""
    if _Interrupts.watching or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _note_and_interrupt)
        _Interrupts.watching = True


def reraise_unless_target(error: BaseException) -> None:
    """Re-raise ``error`` if it is the user's Ctrl-C; return if it is the target's to answer for."""
    if isinstance(error, KeyboardInterrupt) and (
        _Interrupts.received or not _Interrupts.watching
    ):
        raise error


def _is_users(filename: str) -> bool:
    """A frame of the code under test: anything outside tokasm, or a bundled backend."""
    try:
        path = Path(filename).resolve()
    except (OSError, ValueError, RuntimeError):
        return True
    return not path.is_relative_to(_TOKASM) or path.is_relative_to(_BUNDLED)


def _format(frames: list[traceback.FrameSummary]) -> list[str]:
    return [f"{frame.filename}:{frame.lineno} in {frame.name}" for frame in frames]


def user_frames(tb: TracebackType | None) -> tuple[list[str], str]:
    """The user's frames of a traceback: the innermost few as ``file:line in function``, and
    the whole traceback of the user's code (for ``--debug``)."""
    try:
        frames = [f for f in traceback.extract_tb(tb) if _is_users(f.filename)]
        full = "".join(traceback.StackSummary.from_list(frames).format())
    except Exception:  # noqa: BLE001 - a frame that cannot be read is left out
        return [], ""
    return _format(frames[-SHORT_FRAMES:]), full


def user_stack(frame: FrameType | None) -> str:
    """The user's frames of a running thread's stack, innermost last (a hang's location)."""
    try:
        frames = [f for f in traceback.extract_stack(frame) if _is_users(f.filename)]
        return "".join(traceback.StackSummary.from_list(frames).format())
    except Exception:  # noqa: BLE001 - a frame that cannot be read is left out
        return ""
