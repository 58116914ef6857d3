"""Printing that a closed pipe cannot stop: ``tokasm check ... | head -1`` keeps its verdict.

The reader may go away after one line. That may not cost a report or change the exit
status, so the commands print through a ``Console``: once its stream fails, it goes
quiet for good, and the descriptor is pointed at the null device so that nothing left
in a buffer fails again at exit.
"""

from __future__ import annotations

import contextlib
import os
from typing import TextIO

__all__ = ["Console", "silence_stdout"]


def _silence(fd: int) -> None:
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)


def silence_stdout() -> None:
    """Point standard output at the null device (its reader went away)."""
    _silence(1)


class Console:
    """Prints lines to ``stream`` until it cannot, then drops them quietly."""

    def __init__(self, stream: TextIO) -> None:
        self._stream: TextIO | None = stream

    @property
    def gone(self) -> bool:
        """Whether output stopped because the reader went away."""
        return self._stream is None

    def print(self, text: str) -> None:
        """Print ``text`` and a newline, or nothing once the output is gone."""
        stream = self._stream
        if stream is None:
            return
        try:
            try:
                stream.write(text + "\n")
            except UnicodeEncodeError:  # a terminal in ASCII: escape what it cannot show
                encoding = stream.encoding or "ascii"
                stream.write((text + "\n").encode(encoding, "backslashreplace").decode(encoding))
            stream.flush()
        except (OSError, ValueError):  # a broken pipe, a full disk: the reader sees no more
            self._stream = None
            with contextlib.suppress(OSError, ValueError, AttributeError):
                _silence(stream.fileno())
