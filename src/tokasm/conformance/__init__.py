"""The pytest route (``plugin``, ``suite``, ``test_conformance``), and the harness's names at
their old paths, loaded lazily: the plugin loads in every pytest session."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokasm.conformance.plugin import suite as suite

#: Where each name of an older layout lives now (``Subject``: the older noun for ``Target``).
_HOME_OF = {
    "Case": "tokasm.corpus", "Corpus": "tokasm.corpus", "load_corpus": "tokasm.corpus",
    "ModelAssembler": "tokasm.corpus", "OPS": "tokasm.corpus.steps", "Step": "tokasm.corpus",
    "CorpusError": "tokasm.errors", "TargetError": "tokasm.errors",
    "CaseResult": "tokasm.run.results", "TargetRun": "tokasm.run.results",
    "run_case": "tokasm.run.runner", "run_cases": "tokasm.run.runner",
    "PythonTarget": "tokasm.run.targets", "Target": "tokasm.run.targets",
    "resolve_target": "tokasm.run.targets", "suite": "tokasm.conformance.plugin",
}  # fmt: skip
_RENAMED = {"PythonSubject": "PythonTarget", "Subject": "Target"}


def __getattr__(name: str) -> object:
    name = _RENAMED.get(name, name)
    if name not in _HOME_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME_OF[name]), name)
