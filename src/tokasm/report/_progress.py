"""A counting line for long runs on stderr, rewritten in place; off unless a TTY, under CI or
with ``--quiet``."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, TextIO

from tokasm.run.results import FAILING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from tokasm.run.results import CaseResult


def progress_wanted(stream: TextIO, quiet: bool = False) -> bool:
    """Whether a live counting line belongs on ``stream``."""
    return not quiet and not os.environ.get("CI") and stream.isatty()


class Progress:
    """Counts results of one target as they land: ``target: 12/40 cases, 1 failing``."""

    def __init__(self, label: str, total: int, stream: TextIO | None = None) -> None:
        self.label = label
        self.total = total
        self.stream = sys.stderr if stream is None else stream
        self.done = 0
        self.failing = 0
        self._width = 0

    def _draw(self) -> None:
        line = f"{self.label}: {self.done}/{self.total} cases"
        if self.failing:
            line += f", {self.failing} failing"
        self._width = max(self._width, len(line))
        self.stream.write(f"\r{line:<{self._width}}")
        self.stream.flush()

    def track(self, results: Iterable[CaseResult]) -> Iterator[CaseResult]:
        """Pass ``results`` through, redrawing the line after each; erase it at the end."""
        self._draw()
        try:
            for result in results:
                self.done += 1
                self.failing += result.outcome in FAILING
                self._draw()
                yield result
        finally:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
