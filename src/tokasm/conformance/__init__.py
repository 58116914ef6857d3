"""The conformance harness: corpus loader, oracle model, runners and pytest plugin.

Public modules (documented paths):

- ``corpus``: load ``spec/cases/*.yaml`` into ``Case`` objects (``load_corpus``).
- ``steps``: the operations a case performs (``OPS``: apply, get, read_since).
- ``model``: ``ModelAssembler``, the oracle: the spec as a few obvious lines.
- ``runner``: run cases against a ``Subject`` (``run_case``, ``run_cases``).
- ``subjects``: the ``Subject`` interface and ``PythonSubject``; ``resolve_target``.
- ``results``: ``CaseResult`` and ``TargetRun``.
- ``testee``: ``python -m tokasm.protocol.testee TARGET`` serves a Python target
  over the line protocol.
- ``stateful``: ``run_conformance_test(factory)``, a Hypothesis state machine.
- ``plugin``, ``pytest_suite``, ``test_conformance``: the pytest route.

Modules whose names start with ``_`` are private: the protocol codec and
client, the fuzzer, reports, expected-failure lists, paths and progress.

Glossary of the thing under test:

- *implementation*: code that assembles streamed events (yours, or a backend).
- *backend*: an implementation bundled with tokasm (``tokasm.implementations``).
- *target*: what the user names on the command line: ``MODULE:ATTR``, a
  backend name, or a ``--cmd`` command line.
- *subject*: a target as the runner drives it (``Subject``), in process or not.
- *testee*: a program serving an implementation over the line protocol.
- *contender*: an implementation as ``tokasm bench`` measures it.

Names are imported lazily (PEP 562): a protocol testee or the pytest plugin
that needs one module should not pay for YAML, jsonschema and pytest at start.
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
