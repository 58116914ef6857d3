"""Which exceptions belong to the target, and which the user's (a real Ctrl-C).

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
So is one raised while SIGINT is ignored (a background job of a
non-interactive shell starts so): no Ctrl-C can raise it then.
"""

from __future__ import annotations

import signal
import threading
from typing import TYPE_CHECKING

from tokasm.errors import TokasmExit

if TYPE_CHECKING:
    from types import FrameType

__all__ = [
    "interrupts_watched",
    "pass_on_lost_interrupt",
    "raise_lost_interrupt",
    "reraise_unless_target",
    "start_helper_thread",
    "user_interrupted",
    "watch_interrupts",
]

#: The signals that stop a run (Ctrl-C, a CI cancel), and the alarm that interrupts a
#: benchmark run (``bench._watchdog``): each must wake the main thread, never a helper.
_FOR_THE_MAIN_THREAD = frozenset(
    {signal.SIGINT, signal.SIGTERM, *([signal.SIGALRM] if hasattr(signal, "SIGALRM") else [])}
)


class _Interrupts:
    """Whether tokasm's SIGINT handler is in place, and whether a signal came through it."""

    watching = False
    received = False
    lost = False  # a real one that a finalizer swallowed, not yet raised again


def _note_and_interrupt(signum: int, frame: FrameType | None) -> None:
    user_interrupted()
    signal.default_int_handler(signum, frame)


def watch_interrupts() -> None:
    """Tell a real Ctrl-C from a target's own KeyboardInterrupt from now on (main thread only;
    leaves a handler someone else installed alone). Idempotent."""
    if _Interrupts.watching or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _note_and_interrupt)
        _Interrupts.watching = True


def interrupts_watched(watching: bool) -> None:
    """Another SIGINT handler of tokasm's (the CLI's, which also stops testees) is in place
    (True) or gone (False); it calls ``user_interrupted`` before it raises."""
    _Interrupts.watching = watching


def user_interrupted() -> None:
    """A real SIGINT arrived: the next KeyboardInterrupt is the user's."""
    _Interrupts.received = True


def reraise_unless_target(error: BaseException) -> None:
    """Re-raise ``error`` if it is the user's Ctrl-C, or tokasm's own end of the run (a
    SIGTERM's ``TokasmExit``, raised wherever the signal struck, target code included);
    return if it is the target's to answer for."""
    # By its real type: ``isinstance`` would ask the error's own ``__class__``, which may raise.
    kind = type(error)
    if issubclass(kind, TokasmExit) or (
        issubclass(kind, KeyboardInterrupt) and _may_be_the_users()
    ):
        raise error


def _may_be_the_users() -> bool:
    """Whether a KeyboardInterrupt raised now may come from a real SIGINT."""
    if _Interrupts.received:
        return True
    return not _Interrupts.watching and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN


def pass_on_lost_interrupt(error: BaseException | None) -> bool:
    """A real Ctrl-C (or SIGTERM, which unwinds as one) that struck while a finalizer ran
    is swallowed by Python, which only reports it (``sys.unraisablehook``): noted here, for
    ``raise_lost_interrupt`` to raise again once the call that freed the object returns.
    Whether one is waiting to be raised."""
    lost = error is not None and issubclass(type(error), KeyboardInterrupt)
    _Interrupts.lost |= lost and _may_be_the_users()
    return _Interrupts.lost


def raise_lost_interrupt() -> None:
    """Raise the user's KeyboardInterrupt that a finalizer swallowed, if one did."""
    if _Interrupts.lost:
        _Interrupts.lost = False
        raise KeyboardInterrupt


def start_helper_thread(thread: threading.Thread) -> None:
    """Start one of tokasm's own helper threads with the stopping signals and the bench's
    alarm blocked in it.

    The kernel may deliver a signal to any thread that does not block it, and
    only the thread it lands on is woken: one landing on a helper leaves a
    target's ``time.sleep`` on the main thread asleep, and the run ends by the
    watchdog's timeout (exit 1, reports written) instead of the signal (143). A
    bench alarm landing on the watchdog thread left a run waiting on a lock
    uninterrupted, reported as ignoring its interrupt.
    The mask is set before the thread starts (it inherits it), so there is no
    moment when the helper could take one; a signal arriving meanwhile waits
    for the caller's mask to be restored.
    """
    if not hasattr(signal, "pthread_sigmask"):  # not on Windows
        thread.start()
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _FOR_THE_MAIN_THREAD)
    try:
        thread.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
