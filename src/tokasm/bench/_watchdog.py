"""Interrupt a run that outlives its limit: what keeps a sweep bounded when prediction fails.

The sweep predicts every run before starting it, but an implementation can
still hang, or get far worse than its smaller sizes said. An interval timer
(``SIGALRM``) raises ``Overrun`` inside the running Python code when the limit
passes; it derives from ``BaseException`` so that an implementation's own
``except Exception`` does not swallow it. Only in the main thread of a POSIX
process, and only if nobody else uses ``SIGALRM``. Code inside a single long C
call is interrupted when it returns.

Code that swallows ``Overrun`` (``except BaseException``), or a run where the
alarm was not ours to use, cannot be stopped: then ``on_ignored``, if given, is
called from a thread of its own ``IGNORED_GRACE`` seconds after the limit,
with the seconds run and the stuck code's stack, to end the process
(conformance's ``Watchdog``, GIL-proof fallback included).
"""

from __future__ import annotations

import signal
import threading
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

from tokasm.run._watchdog import Watchdog

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import FrameType

__all__ = ["IGNORED_GRACE", "LONGEST", "Overrun", "watchdog"]

#: Seconds code may run on after its limit before it counts as ignoring ``Overrun``.
IGNORED_GRACE = 2.0

#: A limit beyond this (about 11 days) is not armed: interval timers overflow
#: on some platforms, and no sweep waits that long anyway.
LONGEST = 1e6


class Overrun(BaseException):
    """The code under the watchdog was still running when its limit passed."""


def _available() -> bool:
    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN)
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    )


@contextmanager
def watchdog(
    seconds: float, on_ignored: Callable[[float, str], None] | None = None
) -> Iterator[None]:
    """Raise ``Overrun`` in the code inside if it runs longer than ``seconds``; call
    ``on_ignored`` if it runs on ``IGNORED_GRACE`` seconds more (see the module doc)."""
    if not seconds < LONGEST:
        yield
        return
    with ExitStack() as stack:
        if on_ignored is not None:
            stack.enter_context(Watchdog(seconds + IGNORED_GRACE, on_ignored)).arm()
        if not _available():
            yield
            return
        rang = False

        def alarm(signum: int, frame: FrameType | None) -> None:
            nonlocal rang
            rang = True
            raise Overrun

        previous = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0.0)
            signal.signal(signal.SIGALRM, previous)
        if rang:  # the body swallowed its Overrun, and returned late: overrun all the same
            raise Overrun
