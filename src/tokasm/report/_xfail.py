"""Expected-failure lists that cannot go stale: one case id or glob per line, ``# reason``.

A listed failure is xfailed, a listed pass xpassed (fails the run), a line matching no case
a problem, and a glob matching every case refused: it would excuse any implementation.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

from tokasm._display import safe_text
from tokasm.errors import XfailError
from tokasm.implementations import EXPECTED_FAILURES
from tokasm.report._render import NAME_LIMIT
from tokasm.run import PROBE_IDS

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from tokasm.corpus._load import Corpus
    from tokasm.run.results import CaseResult, TargetRun

__all__ = ["XfailList", "apply_xfail", "expected_failures", "load_xfail", "render_xfail"]

#: Outcomes a listed case may have today without the list being wrong.
_STILL_FAILING = frozenset({"failed", "errored", "xfailed"})

#: Largest expected-failure file read (a line per case of a large corpus is far less).
MAX_XFAIL_BYTES = 16 << 20

_GLOB_CHARS = "*?["


@dataclass(frozen=True)
class XfailEntry:
    """One line of the list: a case id or glob, where it was, and why."""

    pattern: str
    line: int
    reason: str


@dataclass(frozen=True)
class XfailList:
    """A parsed expected-failure file; literal ids in a dict, globs compiled once."""

    source: str
    entries: tuple[XfailEntry, ...]

    @cached_property
    def _index(self) -> tuple[dict[str, XfailEntry], dict[str, tuple[XfailEntry, re.Pattern[str]]]]:
        """Each literal id's and each glob's first line (globs in line order, compiled)."""
        literals: dict[str, XfailEntry] = {}
        globs: dict[str, tuple[XfailEntry, re.Pattern[str]]] = {}
        for entry in self.entries:
            if not any(char in entry.pattern for char in _GLOB_CHARS):
                literals.setdefault(entry.pattern, entry)
            elif entry.pattern not in globs:
                globs[entry.pattern] = (entry, re.compile(fnmatch.translate(entry.pattern)))
        return literals, globs

    def entry_for(self, case_id: str) -> XfailEntry | None:
        """The first line that lists ``case_id``, or None."""
        literals, globs = self._index
        glob = next((entry for entry, regex in globs.values() if regex.match(case_id)), None)
        found = [entry for entry in (literals.get(case_id), glob) if entry is not None]
        return min(found, key=lambda entry: entry.line, default=None)

    def why(self, entry: XfailEntry) -> str:
        """``listed in FILE:LINE (reason)``, for messages."""
        where = f"listed in {self.source}:{entry.line}"
        return f"{where} ({entry.reason})" if entry.reason else where

    def _matches(self, ids: set[str]) -> dict[XfailEntry, int]:
        """How many of ``ids`` each line matches (a literal: 1 or 0)."""
        globs = {
            pattern: len(list(filter(r.match, ids))) for pattern, (_, r) in self._index[1].items()
        }
        return {e: globs.get(e.pattern, e.pattern in ids) for e in self.entries}

    def _line(self, entry: XfailEntry) -> str:
        return f"{self.source}:{entry.line}: '{safe_text(entry.pattern, NAME_LIMIT)}'"

    def stale(self, corpus: Corpus) -> list[str]:
        """A problem for each line that matches no case id of the whole corpus (or probe)."""
        return [
            f"{self._line(entry)} matches no case of corpus {corpus.version}; remove the line"
            for entry, count in self._matches({case.id for case in corpus} | set(PROBE_IDS)).items()
            if not count
        ]


def parse_xfail(text: str, source: str) -> XfailList:
    """Parse the text of an expected-failure list; ``source`` names it in messages."""
    entries = []
    for number, raw in enumerate(text.splitlines(), 1):
        pattern, _, comment = raw.partition("#")
        if pattern.strip():
            entries.append(XfailEntry(pattern.strip(), number, comment.strip()))
    return XfailList(source, tuple(entries))


def _without_waiting(name: str, flags: int) -> int:
    """``open``'s opener for a file that may be a named pipe: without a writer, it reads as
    empty (opened blocking, it waits for one for ever); with one (``<(grep ...)``), whole."""
    fd = os.open(name, flags | os.O_NONBLOCK)
    os.set_blocking(fd, True)
    return fd


def load_xfail(path: Path, corpus: Corpus | None = None) -> XfailList:
    """Parse a list file; XfailError if unreadable, too large or (given ``corpus``) matching all."""
    try:
        with open(path, "rb", opener=_without_waiting) as stream:
            data = stream.read(MAX_XFAIL_BYTES + 1)
        if len(data) > MAX_XFAIL_BYTES:
            raise ValueError(f"the file is larger than {MAX_XFAIL_BYTES:,} bytes")
        text = data.decode("utf-8-sig")
    except (OSError, ValueError) as error:  # UnicodeDecodeError is a ValueError
        raise XfailError(f"expected-failure file {str(path)!r}: cannot read: {error}") from None
    listed = parse_xfail(text, str(path))
    ids = set() if corpus is None else {case.id for case in corpus}
    for entry, count in listed._matches(ids).items() if len(ids) > 1 else ():
        if count == len(ids):
            raise XfailError(
                f"{listed._line(entry)} matches every case of the corpus, so nothing could "
                "fail; list the failing ids (tokasm check --write-xfail writes them)"
            )
    return listed


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


def _entry_text(case_id: str) -> str | None:
    """``case_id`` as a line matching only it (wildcards bracketed); None if no line can."""
    if not case_id.isprintable() or case_id != case_id.strip() or "#" in case_id or not case_id:
        return None
    return "".join(f"[{char}]" if char in _GLOB_CHARS else char for char in case_id)


def render_xfail(
    runs: Sequence[TargetRun], keep: XfailList | None = None, corpus: Corpus | None = None
) -> str:
    """Today's failures of every target, ids sorted; the reasons people wrote in ``keep`` kept,
    and its lines about a case of ``corpus`` that no run checked (not selected, skipped)."""
    failures: defaultdict[str, list[str]] = defaultdict(list)
    for run in runs:
        target = f"{run.target}: " if len(runs) > 1 else ""
        for result in run.results:
            if result.outcome in _STILL_FAILING:
                first = (result.message.splitlines() or [""])[0]
                failures[result.case_id].append(f"{target}{result.outcome}: {first}")
    names = ", ".join(safe_text(r.target, NAME_LIMIT) for r in runs)
    entries = []  # (sort key, line)
    for case_id, found in failures.items():
        kept = None if keep is None else keep.entry_for(case_id)
        reason = safe_text(kept.reason if kept and kept.reason else "; ".join(found), NAME_LIMIT)
        entry = _entry_text(case_id)
        unlisted = f"# cannot list case id '{safe_text(case_id, NAME_LIMIT)}': {reason}"
        entries.append((case_id, f"{entry}  # {reason}" if entry else unlisted))
    if keep is not None and corpus is not None:  # lines about what no run checked, as written
        checked = {r.case_id for run in runs for r in run.results if r.outcome != "skipped"}
        unchecked = ({case.id for case in corpus} | set(PROBE_IDS)) - checked
        for listed, count in keep._matches(unchecked).items():
            if count:
                reason = f"  # {listed.reason}" if listed.reason else ""
                entries.append((listed.pattern, listed.pattern + reason))
    header = [
        "# tokasm expected failures: one case id or glob per line, '# reason' allowed.",
        f"# Written by tokasm check --write-xfail for {safe_text(names, NAME_LIMIT)}.",
    ]
    return "\n".join([*header, *(line for _, line in sorted(entries))]) + "\n"


def expected_failures(backend: str | None, listed: XfailList | None) -> list[XfailList]:
    """A bundled ``backend``'s own gaps (never a name a testee gives itself), then ``listed``."""
    lists = []
    if backend in EXPECTED_FAILURES:
        source = f"tokasm.implementations.EXPECTED_FAILURES[{backend!r}]"
        lists.append(parse_xfail(EXPECTED_FAILURES[backend], source))
    return lists if listed is None else [*lists, listed]
