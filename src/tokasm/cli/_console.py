"""Printing that can never stop a run: stdout may be a closed pipe, or closed by the target.

``tokasm check ... | head -1`` closes the pipe after one line, and an
in-process target may close or replace ``sys.stdout``. Neither may cost a
report or change the exit status, so the commands print through a
``Console``: it writes to the stream it was given when the run began, falls
back to that stream's file descriptor if the stream object was closed, and
goes quiet for good when the descriptor itself is gone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, ClassVar, NoReturn, TextIO

from tokasm.errors import EXIT_TERMINATED, TokasmExit
from tokasm.protocol._client import kill_testees
from tokasm.run._guard import reraise_unless_target, start_helper_thread

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from types import FrameType

__all__ = [
    "Console",
    "StdoutDiversion",
    "end_process",
    "flush_quietly",
    "guarded_run",
    "remove_at_the_end",
    "silence_stdout",
]


def _silence(fd: int) -> None:
    """Point ``fd`` at the null device, so that flushing what is still buffered for a
    reader that went away cannot fail again at exit (Python then exits 120)."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)


def silence_stdout() -> None:
    """``_silence`` standard output."""
    _silence(1)


class Console:
    """Prints lines to ``stream`` until it cannot, then drops them quietly."""

    def __init__(self, stream: TextIO) -> None:
        self._stream: TextIO | None = stream
        try:
            self._fd: int | None = stream.fileno()
        except (OSError, ValueError, AttributeError):
            self._fd = None  # pytest's capture, a StringIO: no descriptor to fall back to

    @property
    def gone(self) -> bool:
        """Whether output stopped because the reader or the stream went away."""
        return self._stream is None

    def _write(self, stream: TextIO, text: str) -> None:
        """By the stream's class's own methods: a target may have set others on the object."""
        kind = type(stream)
        try:
            kind.write(stream, text)
        except UnicodeEncodeError:  # a terminal in ASCII or Latin-1: escape what it cannot show
            encoding = stream.encoding or "ascii"
            kind.write(stream, text.encode(encoding, "backslashreplace").decode(encoding))
        kind.flush(stream)

    def print(self, text: str) -> None:
        """Print ``text`` and a newline, or nothing once the output is gone."""
        stream = self._stream
        if stream is None:
            return
        try:
            self._write(stream, text + "\n")
        except ValueError:  # the stream object was closed (by the target): use its descriptor
            self._reopen(text)
        except OSError:  # a broken pipe, a full disk: the reader will not see more
            self._stream = None
            if self._fd is not None:
                _silence(self._fd)

    def close(self) -> None:
        """Close the stream (one this console was made for: not a shared one like stderr)."""
        stream, self._stream = self._stream, None
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.close()

    def _reopen(self, text: str) -> None:
        self._stream = None
        if self._fd is None:
            return
        try:
            stream = open(self._fd, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
            self._write(stream, text + "\n")
        except (OSError, ValueError):
            _silence(self._fd)
            return
        self._stream = stream


def flush_quietly(stream: object) -> None:
    """Flush ``stream`` by its class's own method (a target may have set another on it),
    whatever that raises but the user's Ctrl-C."""
    try:
        type(stream).flush(stream)  # type: ignore[attr-defined]
    except BaseException as error:
        reraise_unless_target(error)


class StdoutDiversion:
    """While a report goes to stdout ('-'): the report's own way to stdout (``report``), and
    everything else that goes to stdout goes to stderr, so nothing a target writes can land
    in the report. ``print`` is redirected; where ``sys.stdout`` is file descriptor 1, the
    descriptor itself points at stderr, for ``sys.__stdout__``, a child process a target
    starts and a thread it leaves running: until the diversion ends, after the report, or
    for good in the ``tokasm`` program, whose process ends right after (``process_ends``)."""

    #: Set by the ``tokasm`` program: fd 1 is not pointed back at stdout at the end.
    process_ends = False

    def __init__(self) -> None:
        self._kept: int | None = None
        self._kept_id: tuple[int, int] | None = None
        self._streams: tuple[object, ...] = ()
        self._redirect = contextlib.redirect_stdout(sys.stderr)
        self.report = Console(sys.stdout)

    def __enter__(self) -> StdoutDiversion:
        stdout = sys.stdout
        self._redirect.__enter__()
        with contextlib.suppress(OSError, ValueError, AttributeError):
            if stdout.fileno() == 1:  # not a host's capture (pytest's, say): leave fd 1 alone
                flush_quietly(stdout)
                kept = os.dup(1)
                status = os.fstat(kept)
                encoding, errors = stdout.encoding, stdout.errors
                self.report = Console(open(kept, "w", encoding=encoding, errors=errors))
                self._kept, self._kept_id = kept, (status.st_dev, status.st_ino)
                self._streams = (stdout, sys.__stdout__)  # flushed at the end, as they are now
                os.dup2(2, 1)
        return self

    @property
    def intact(self) -> bool:
        """Whether the copy of stdout kept for the report is still that file (a target may
        close the descriptor and open a file of its own under the same number)."""
        if self._kept is None:
            return True
        try:
            status = os.fstat(self._kept)
        except OSError:
            return False
        return (status.st_dev, status.st_ino) == self._kept_id

    def __exit__(self, *exc: object) -> None:
        kept, self._kept = self._kept, None
        self._redirect.__exit__(None, None, None)
        if kept is None:
            return
        for stream in self._streams:  # what went through fd 1 meanwhile: to stderr
            flush_quietly(stream)
        if not StdoutDiversion.process_ends:
            with contextlib.suppress(OSError):
                os.dup2(kept, 1)
        self.report.close()  # and the descriptor kept


class _Scratch:
    """Folders the ``tokasm`` program removes when it ends, whichever way it ends."""

    folders: ClassVar[list[Path]] = []


def remove_at_the_end(folder: Path) -> None:
    """Have ``end_process`` remove ``folder``, a temporary folder of the program's own."""
    _Scratch.folders.append(folder)


def end_process(code: int) -> NoReturn:
    """The end of the process at once with ``code``, from wherever it ends: its last line,
    the report of a hang, a stuck benchmark run, a swallowed SIGTERM. Its temporary
    folders go first (``os._exit`` runs no clean-up of its own)."""
    for folder in _Scratch.folders:
        with contextlib.suppress(BaseException):  # an audit hook may raise even SystemExit
            shutil.rmtree(folder, ignore_errors=True)
    os._exit(code)


class _Terminated:
    """Whether the KeyboardInterrupt unwinding the run came from SIGTERM."""

    seen = False


#: Seconds the ``tokasm`` program has to unwind after a SIGTERM before it ends without
#: that: target code that swallows the KeyboardInterrupt (``except BaseException``) would
#: otherwise keep it running until a watchdog's limit, and end it with another status.
UNWIND_GRACE = 3.0


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM unwinds the run as Ctrl-C does: the SIGINT handler runs in place (so what
    kills testees and tells a real Ctrl-C from a target's own KeyboardInterrupt sees a
    real one), else KeyboardInterrupt is raised here. A SystemExit would not do: it is
    what a target raises, so it would be that case's error and the run would go on."""
    if not _Terminated.seen and StdoutDiversion.process_ends:
        start_helper_thread(threading.Thread(target=_end_unwound, daemon=True))
    _Terminated.seen = True
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _end_unwound() -> None:
    """The end of the ``tokasm`` program ``UNWIND_GRACE`` seconds after a SIGTERM, if
    the run has not unwound by then: its testees killed, and the status SIGTERM gives."""
    time.sleep(UNWIND_GRACE)
    with contextlib.suppress(OSError):
        os.write(2, b"tokasm: terminated (the code running went on after SIGTERM)\n")
    kill_testees()
    end_process(EXIT_TERMINATED)


@contextlib.contextmanager
def guarded_run() -> Iterator[None]:
    """Run a command so that SIGTERM unwinds like Ctrl-C (closing testees and removing
    temporary files on the way) and then exits ``EXIT_TERMINATED``, and a target that
    replaces ``sys.stdout`` or ``sys.stderr`` does not leave them replaced."""
    streams = sys.stdout, sys.stderr
    previous = None
    _Terminated.seen = False
    with contextlib.suppress(ValueError):  # not the main thread: leave signals alone
        previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    except KeyboardInterrupt:
        if not _Terminated.seen:
            raise
        _terminated()
    else:
        if _Terminated.seen:  # target code swallowed it, and the run went on to its end
            _terminated()
    finally:
        sys.stdout, sys.stderr = streams
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _terminated() -> NoReturn:
    with contextlib.suppress(OSError):
        os.write(2, b"tokasm: terminated\n")
    raise TokasmExit(EXIT_TERMINATED) from None
