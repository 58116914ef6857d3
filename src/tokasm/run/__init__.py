"""Running cases against a target: subjects, the runner, and the results it yields."""

from tokasm.run.results import (
    FAILING,
    FAILURE_KINDS,
    OUTCOMES,
    CaseResult,
    Failure,
    Outcome,
    TargetRun,
    summarize,
    timed,
)

__all__ = [
    "FAILING", "FAILURE_KINDS", "OUTCOMES", "CaseResult", "Failure", "Outcome", "TargetRun",
    "summarize", "timed",
]  # fmt: skip
