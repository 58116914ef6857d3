"""Running cases against a target in this process: the ``Target`` interface, the runner
with a caller's habits, the cost probes, and the results they yield."""

from tokasm.run._cost import (
    PROBE_ID,
    PROBE_IDS,
    PROBE_STEPS,
    STREAM_PROBE_ID,
    probe_cache_final,
    probe_named,
    run_probe,
)
from tokasm.run.results import (
    FAILING,
    NOT_TEXT,
    OUTCOMES,
    CaseResult,
    Failure,
    Outcome,
    TargetRun,
    summarize,
    timed,
)
from tokasm.run.runner import DEFAULT_PROFILES, run_case, run_cases, skip_reason
from tokasm.run.targets import Foreign, PythonTarget, StepOutcome, Target, Worker, resolve_target

__all__ = [
    "DEFAULT_PROFILES", "FAILING", "NOT_TEXT", "OUTCOMES", "PROBE_ID", "PROBE_IDS", "PROBE_STEPS",
    "STREAM_PROBE_ID", "CaseResult", "Failure", "Foreign", "Outcome", "PythonTarget", "StepOutcome",
    "Target", "TargetRun", "Worker", "probe_cache_final", "probe_named", "resolve_target",
    "run_case", "run_cases", "run_probe", "skip_reason", "summarize", "timed",
]  # fmt: skip
