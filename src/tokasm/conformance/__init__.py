"""The conformance harness: corpus loader, oracle model, runners and pytest plugin.

Public modules (documented paths):

- ``corpus``: load ``spec/cases/*.yaml`` into ``Case`` objects (``load_corpus``).
- ``steps``: the operations a case performs (``OPS``: apply, get, read_since).
- ``model``: ``ModelAssembler``, the oracle: the spec as a few obvious lines.
- ``runner``: run cases against a ``Subject`` (``run_case``, ``run_cases``).
- ``subjects``: the ``Subject`` interface and ``PythonSubject``; ``resolve_target``.
- ``results``: ``CaseResult`` and ``TargetRun``.
- ``testee``: ``python -m tokasm.conformance.testee TARGET`` serves a Python target
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
    from ..errors import CorpusError, TargetError
    from .corpus import Case, Corpus, load_corpus
    from .model import ModelAssembler
    from .pytest_suite import suite
    from .results import CaseResult, TargetRun
    from .runner import run_case, run_cases
    from .steps import OPS, Step
    from .subjects import PythonSubject, Subject, resolve_target

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
    "Case": ".corpus",
    "Corpus": ".corpus",
    "load_corpus": ".corpus",
    "CorpusError": "tokasm.errors",
    "TargetError": "tokasm.errors",
    "ModelAssembler": ".model",
    "CaseResult": ".results",
    "TargetRun": ".results",
    "run_case": ".runner",
    "run_cases": ".runner",
    "OPS": ".steps",
    "Step": ".steps",
    "PythonSubject": ".subjects",
    "Subject": ".subjects",
    "resolve_target": ".subjects",
    "suite": ".pytest_suite",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
