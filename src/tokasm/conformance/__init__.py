"""The conformance harness: corpus loader, oracle model, runners and pytest plugin."""

from __future__ import annotations

from .corpus import Case, Corpus, CorpusError, load_corpus
from .model import ModelAssembler
from .results import CaseResult, TargetRun
from .runner import run_case, run_cases
from .subjects import PythonSubject, Subject, TargetError, resolve_target
from .suite import suite

__all__ = [
    "Case",
    "CaseResult",
    "Corpus",
    "CorpusError",
    "ModelAssembler",
    "PythonSubject",
    "Subject",
    "TargetError",
    "TargetRun",
    "load_corpus",
    "resolve_target",
    "run_case",
    "run_cases",
    "suite",
]
