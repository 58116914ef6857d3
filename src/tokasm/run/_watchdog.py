"""The in-process watchdog: a target call that outlasts the timeout must not hang the run.

Target code runs on the main thread, as a caller would run it. The subject
``arm``s the watchdog before each call into the target and ``disarm``s it after
(two attribute writes). A daemon thread wakes a few times per timeout; when one
call has run for ``timeout`` seconds it takes that thread's stack and calls
``on_hang``, which reports and ends the process: a Python thread cannot be
stopped from outside, so the hung call can never be abandoned in place.

Limit: code that hangs while holding the GIL (a C extension's endless loop)
starves this thread too. ``faulthandler`` covers that: after twice the
timeout plus a grace period it dumps every thread's stack to stderr and
exits with status 1, without reports.
"""

from __future__ import annotations

import contextlib
import faulthandler
import sys
import threading
from typing import TYPE_CHECKING

from tokasm._clocks import Clocks
from tokasm.run._frames import user_frames as _unused  # noqa: F401  (removed with this module)


def user_stack(frame: object) -> str:
    return ""
from tokasm.run._guard import start_helper_thread

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import TracebackType

__all__ = ["Watchdog", "hang_text"]

_GRACE = 5.0  # seconds the reporting thread has before the GIL-proof fallback fires
_MIN_POLL = 0.01  # seconds between looks, at the least (a tiny --timeout must not spin)


def hang_text(seconds: float, timeout: float, stack: str) -> str:
    """What a hang reported by the watchdog says, its stack included."""
    where = f"\nthe hung code's stack (innermost last):\n{stack.rstrip()}" if stack else ""
    return (
        f"no answer after {seconds:.1f} s (--timeout {timeout:g}); a thread cannot be "
        f"stopped, so the run ended here{where}"
    )


class Watchdog:
    """Calls ``on_hang(seconds, stack)`` from its own thread when one armed call runs too long."""

    def __init__(self, timeout: float, on_hang: Callable[[float, str], None]) -> None:
        self.timeout = timeout
        self._on_hang = on_hang
        self._since: float | None = None
        self._limit = timeout
        self._thread_id = threading.get_ident()
        self._stopped = threading.Event()
        self._fallback_armed = False
        self._thread = threading.Thread(target=self._watch, name="tokasm-watchdog", daemon=True)

    def __enter__(self) -> Watchdog:
        start_helper_thread(self._thread)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stopped.set()
        self._thread.join()
        if self._fallback_armed:
            faulthandler.cancel_dump_traceback_later()

    def arm(self, limit: float | None = None) -> None:
        """Target code starts running now; it may run ``limit`` seconds (default: the timeout)."""
        self._limit = self.timeout if limit is None else limit
        self._since = Clocks.monotonic()

    @contextlib.contextmanager
    def loading(self) -> Iterator[None]:
        """Target code runs in the block, loading a target: it gets twice the timeout, as
        imports may be slow."""
        self.arm(2 * self.timeout)
        try:
            yield
        finally:
            self.disarm()

    def disarm(self) -> None:
        """Target code returned (or raised)."""
        self._since = None

    def _arm_fallback(self) -> None:
        """The GIL-proof last resort (see the module doc)."""
        try:
            faulthandler.dump_traceback_later(
                2 * max(self.timeout, self._limit) + _GRACE,
                exit=True,
                file=sys.__stderr__ or sys.stderr,
            )
            self._fallback_armed = True
        except (ValueError, OSError, AttributeError, OverflowError):  # no stderr, or no end
            self._fallback_armed = False

    def _watch(self) -> None:
        poll = max(_MIN_POLL, min(0.25, self.timeout / 4))
        while True:
            self._arm_fallback()  # this thread still runs, so the fallback moves on
            if self._stopped.wait(poll):
                return
            since = self._since
            if since is not None and Clocks.monotonic() - since >= self._limit:
                try:  # an audit hook may refuse it: the hang is reported all the same
                    frame = sys._current_frames().get(self._thread_id)
                except Exception:
                    frame = None
                self._arm_fallback()  # on_hang gets as long as the fallback allows
                self._on_hang(Clocks.monotonic() - since, user_stack(frame))
                return
