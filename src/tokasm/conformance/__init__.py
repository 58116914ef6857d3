"""The conformance harness: corpus loader, oracle model, runners and pytest plugin.

Names are imported lazily (PEP 562): a protocol testee or the pytest plugin
that needs one module should not pay for YAML, jsonschema and pytest at start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .corpus import Case, Corpus, CorpusError, load_corpus
    from .model import ModelAssembler
    from .pytest_suite import suite
    from .results import CaseResult, TargetRun
    from .runner import run_case, run_cases
    from .subjects import PythonSubject, Subject, TargetError, resolve_target

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

_HOMES = {
    "Case": "corpus",
    "Corpus": "corpus",
    "CorpusError": "corpus",
    "load_corpus": "corpus",
    "ModelAssembler": "model",
    "CaseResult": "results",
    "TargetRun": "results",
    "run_case": "runner",
    "run_cases": "runner",
    "PythonSubject": "subjects",
    "Subject": "subjects",
    "TargetError": "subjects",
    "resolve_target": "subjects",
    "suite": "pytest_suite",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{home}", __name__), name)
