"""Expected-failure lists that cannot go stale (``--xfail FILE``, ``--write-xfail FILE``).

Like protobuf's ``failure_list_<lang>.txt`` and toml-test's ``-skip`` globs: one
case id or glob per line, ``# reason`` comments allowed on their own line or
after an entry. A listed case that fails or errors becomes ``xfailed`` and no
longer fails the run; a listed case that passes becomes ``xpassed`` and does;
a line that matches no case id of the corpus at all is a run-level problem, so
a list always describes the implementation as it is today.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..errors import XfailError
from ._cost import PROBE_IDS

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    from .corpus import Corpus
    from .results import CaseResult, TargetRun

__all__ = [
    "XfailEntry",
    "XfailError",
    "XfailList",
    "apply_xfail",
    "load_xfail",
    "parse_xfail",
    "render_xfail",
    "write_xfail",
]

#: Outcomes a listed case may have today without the list being wrong.
_STILL_FAILING = frozenset({"failed", "errored", "xfailed"})


@dataclass(frozen=True)
class XfailEntry:
    """One line of the list: a case id or glob, where it was, and why."""

    pattern: str
    line: int
    reason: str

    def matches(self, case_id: str) -> bool:
        return fnmatch.fnmatchcase(case_id, self.pattern)


@dataclass(frozen=True)
class XfailList:
    """A parsed expected-failure file."""

    source: str
    entries: tuple[XfailEntry, ...]

    def entry_for(self, case_id: str) -> XfailEntry | None:
        """The first line that lists ``case_id``, or None."""
        return next((entry for entry in self.entries if entry.matches(case_id)), None)

    def why(self, entry: XfailEntry) -> str:
        """``listed in FILE:LINE (reason)``, for messages."""
        where = f"listed in {self.source}:{entry.line}"
        return f"{where} ({entry.reason})" if entry.reason else where

    def stale(self, corpus: Corpus) -> list[str]:
        """A problem for each line that matches no case id of the whole corpus (or probe)."""
        ids = [case.id for case in corpus] + list(PROBE_IDS)
        return [
            f"{self.source}:{entry.line}: {entry.pattern!r} matches no case of corpus "
            f"{corpus.version}; remove the line"
            for entry in self.entries
            if not any(entry.matches(case_id) for case_id in ids)
        ]


def _parse_line(raw: str, number: int) -> XfailEntry | None:
    text, _, comment = raw.partition("#")
    pattern = text.strip()
    if not pattern:
        return None
    return XfailEntry(pattern, number, comment.strip())


def parse_xfail(text: str, source: str) -> XfailList:
    """Parse the text of an expected-failure list; ``source`` names it in messages."""
    entries = (_parse_line(raw, number) for number, raw in enumerate(text.splitlines(), 1))
    return XfailList(source, tuple(entry for entry in entries if entry is not None))


def load_xfail(path: Path) -> XfailList:
    """Parse an expected-failure file; XfailError names the file if it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise XfailError(f"expected-failure file {str(path)!r}: cannot read: {error}") from None
    return parse_xfail(text, str(path))


def _judge(result: CaseResult, listed: str) -> CaseResult:
    if result.outcome in ("failed", "errored"):
        return replace(result, outcome="xfailed", message=f"{result.message}\n[{listed}]")
    if result.outcome == "passed":
        return replace(result, outcome="xpassed", message=f"passed, but {listed}; remove the line")
    return result  # skipped cases are neither confirmed nor refuted


def apply_xfail(run: TargetRun, xfail: XfailList, corpus: Corpus) -> TargetRun:
    """``run`` with listed cases turned into xfailed/xpassed and stale lines as problems."""
    results = []
    for result in run.results:
        entry = xfail.entry_for(result.case_id)
        results.append(result if entry is None else _judge(result, xfail.why(entry)))
    return replace(run, results=tuple(results), problems=(*run.problems, *xfail.stale(corpus)))


def _failures(runs: Sequence[TargetRun]) -> dict[str, list[str]]:
    """Case id -> the reasons it fails today, one per failing target."""
    several = len(runs) > 1
    found: dict[str, list[str]] = {}
    for run in runs:
        for result in run.results:
            if result.outcome in _STILL_FAILING:
                first = (result.message.splitlines() or [""])[0]
                reason = f"{result.outcome}: {first}"
                found.setdefault(result.case_id, []).append(
                    f"{run.target}: {reason}" if several else reason
                )
    return found


def render_xfail(runs: Sequence[TargetRun]) -> str:
    """The list of today's failures (failed, errored, still xfailed), ids sorted.

    With several targets the list is their union and each reason names its
    target, because one ``--xfail`` file applies to every target of a run.
    """
    failures = _failures(runs)
    header = [
        "# tokasm expected failures: one case id or glob per line, '# reason' allowed.",
        f"# Written by tokasm check --write-xfail for {', '.join(r.target for r in runs)}.",
    ]
    lines = [f"{case_id}  # {'; '.join(failures[case_id])}" for case_id in sorted(failures)]
    return "\n".join([*header, *lines]) + "\n"


def write_xfail(path: Path, runs: Iterable[TargetRun]) -> None:
    """Write ``render_xfail`` to ``path``."""
    path.write_text(render_xfail(list(runs)), encoding="utf-8")
