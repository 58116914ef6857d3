"""Interrupt a run that outlives its limit: what keeps a sweep bounded when prediction fails.

The sweep predicts every run before starting it, but an implementation can
still hang, or get far worse than its smaller sizes said. An interval timer
(``SIGALRM``) raises ``Overrun`` inside the running Python code when the limit
passes; it derives from ``BaseException`` so that an implementation's own
``except Exception`` does not swallow it. Only in the main thread of a POSIX
process, and only if nobody else uses ``SIGALRM``; elsewhere the run is not
interrupted. Code inside a single long C call is interrupted when it returns.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import FrameType

__all__ = ["LONGEST", "Overrun", "watchdog"]

#: A limit beyond this (about 11 days) is not armed: interval timers overflow
#: on some platforms, and no sweep waits that long anyway.
LONGEST = 1e6


class Overrun(BaseException):
    """The code under the watchdog was still running when its limit passed."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Overrun


def _available() -> bool:
    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN)
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    )


@contextmanager
def watchdog(seconds: float) -> Iterator[None]:
    """Raise ``Overrun`` in the code inside if it runs longer than ``seconds``."""
    if not seconds < LONGEST or not _available():
        yield
        return
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)
