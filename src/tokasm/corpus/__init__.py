"""The conformance corpus: its cases and steps, the loader, the oracle and the export.

Names are imported when first used (PEP 562), so importing the package costs next to
nothing: the loader's YAML and JSON Schema come only with the loader.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokasm.corpus._export import (
        EXPORT_FORMAT,
        MARKER,
        case_document,
        case_line,
        json_can_carry,
        write_folder,
        write_lines,
    )
    from tokasm.corpus._load import (
        PROFILES,
        Case,
        Corpus,
        CorpusError,
        expand,
        load_corpus,
        load_file,
        parse_case,
        profile_gap,
        requirement_ids,
    )
    from tokasm.corpus._paths import SPEC_DIR_ENV, shipped, spec_dir, spec_version
    from tokasm.corpus.model import ModelAssembler
    from tokasm.corpus.steps import (
        OPS,
        READ_SINCE,
        Apply,
        Expectation,
        Get,
        Raises,
        ReadSince,
        Returns,
        Step,
        features_of,
    )


__all__ = [
    "EXPORT_FORMAT",
    "MARKER",
    "OPS",
    "PROFILES",
    "READ_SINCE",
    "SPEC_DIR_ENV",
    "Apply",
    "Case",
    "Corpus",
    "CorpusError",
    "Expectation",
    "Get",
    "ModelAssembler",
    "Raises",
    "ReadSince",
    "Returns",
    "Step",
    "case_document",
    "case_line",
    "expand",
    "features_of",
    "json_can_carry",
    "load_corpus",
    "load_file",
    "parse_case",
    "profile_gap",
    "requirement_ids",
    "shipped",
    "spec_dir",
    "spec_version",
    "write_folder",
    "write_lines",
]


#: The modules that define them, the loader (which imports YAML) last.
_MODULES = ("steps", "model", "_paths", "_export", "_load")


def __getattr__(name: str) -> object:
    if name in __all__:
        for module_name in _MODULES:
            module = import_module(f"{__name__}.{module_name}")
            if name in module.__all__:
                return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
