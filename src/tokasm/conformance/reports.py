"""Render finished runs: the terminal report card and failure details."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .results import OUTCOMES

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .results import TargetRun

__all__ = ["render_card", "render_failures"]


def render_card(runs: Sequence[TargetRun]) -> str:
    """A target x outcome table, one row per target, with a verdict column."""
    width = max([len("target"), *(len(run.target) for run in runs)])
    header = f"{'target':<{width}}  " + " ".join(f"{o:>7}" for o in OUTCOMES) + "  verdict"
    rows = [header, "-" * len(header)]
    for run in runs:
        counts = run.summary
        verdict = "conforms" if run.conforms else "NONCONFORMING"
        rows.append(
            f"{run.target:<{width}}  "
            + " ".join(f"{counts[o]:>7}" for o in OUTCOMES)
            + f"  {verdict}"
        )
    return "\n".join(rows)


def render_failures(run: TargetRun) -> str:
    """Every non-passing, non-skipped case of one run, with its message."""
    blocks = [
        f"{result.outcome.upper()} {run.target}::{result.case_id} - {result.description}\n"
        + "\n".join(f"  {line}" for line in result.message.splitlines())
        for result in run.results
        if result.outcome not in ("passed", "skipped", "xfailed")
    ]
    blocks.extend(f"PROBLEM {run.target}: {problem}" for problem in run.problems)
    return "\n".join(blocks)
