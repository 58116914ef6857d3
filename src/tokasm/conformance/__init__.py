"""The pytest route (``plugin``, ``pytest_suite.suite``, ``test_conformance``), and the
harness's names at their old paths.

The names load lazily (PEP 562): the pytest plugin, loaded in every pytest session,
should not pay for YAML and jsonschema at start.
"""

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
    from tokasm.run.subjects import PythonSubject, Subject, resolve_target

__all__ = [
    "OPS",
    "Case",
    "CaseResult",
    "Corpus",
    "CorpusError",
    "ModelAssembler",
    "PythonSubject",
    "Step",
    "Subject",
    "TargetError",
    "TargetRun",
    "load_corpus",
    "resolve_target",
    "run_case",
    "run_cases",
    "suite",
]

_HOMES = {
    "Case": "tokasm.corpus._load",
    "Corpus": "tokasm.corpus._load",
    "load_corpus": "tokasm.corpus._load",
    "CorpusError": "tokasm.errors",
    "TargetError": "tokasm.errors",
    "ModelAssembler": "tokasm.corpus.model",
    "CaseResult": "tokasm.run.results",
    "TargetRun": "tokasm.run.results",
    "run_case": "tokasm.run.runner",
    "run_cases": "tokasm.run.runner",
    "OPS": "tokasm.corpus.steps",
    "Step": "tokasm.corpus.steps",
    "PythonSubject": "tokasm.run.subjects",
    "Subject": "tokasm.run.subjects",
    "resolve_target": "tokasm.run.subjects",
    "suite": "tokasm.conformance.pytest_suite",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
