"""The pytest route (``plugin``, ``suite``, ``test_conformance``), and the harness's names at
their old paths, loaded lazily: the plugin loads in every pytest session."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokasm.conformance.pytest_suite import suite
    from tokasm.corpus._load import Case, Corpus, load_corpus
    from tokasm.corpus.model import ModelAssembler
    from tokasm.corpus.steps import OPS, Step
    from tokasm.errors import CorpusError, TargetError
    from tokasm.run.results import CaseResult, TargetRun
    from tokasm.run.runner import run_case, run_cases
    from tokasm.run.targets import PythonTarget, Target, resolve_target

__all__ = [
    "OPS", "Case", "CaseResult", "Corpus", "CorpusError", "ModelAssembler", "PythonTarget",
    "Step", "Target", "TargetError", "TargetRun", "load_corpus", "resolve_target", "run_case",
    "run_cases", "suite",
]  # fmt: skip

_HOMES = {
    "tokasm.corpus._load": "Case Corpus load_corpus", "tokasm.corpus.model": "ModelAssembler",
    "tokasm.corpus.steps": "OPS Step", "tokasm.errors": "CorpusError TargetError",
    "tokasm.run.results": "CaseResult TargetRun", "tokasm.run.runner": "run_case run_cases",
    "tokasm.run.targets": "PythonTarget Target resolve_target",
    "tokasm.conformance.pytest_suite": "suite",
}  # fmt: skip
_HOME_OF = {name: home for home, names in _HOMES.items() for name in names.split()}
#: Names from before the thing under test had one noun (deprecated).
_RENAMED = {"PythonSubject": "PythonTarget", "Subject": "Target"}


def __getattr__(name: str) -> object:
    name = _RENAMED.get(name, name)
    if name not in _HOME_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME_OF[name]), name)
