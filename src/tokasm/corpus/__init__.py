"""The conformance corpus: its cases and steps, the loader, the oracle and the export.

The loader's names are imported when first used (PEP 562), so importing the package
imports neither YAML nor JSON Schema.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from tokasm.corpus._export import (
    EXPORT_FORMAT,
    MARKER,
    case_document,
    case_line,
    json_can_carry,
    write_folder,
    write_lines,
)
from tokasm.corpus._paths import SPEC_DIR_ENV, shipped, spec_dir
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
from tokasm.errors import CorpusError

if TYPE_CHECKING:
    from tokasm.corpus._load import LARGE_PROFILES as LARGE_PROFILES
    from tokasm.corpus._load import PROFILES as PROFILES
    from tokasm.corpus._load import Case as Case
    from tokasm.corpus._load import Corpus as Corpus
    from tokasm.corpus._load import expand as expand
    from tokasm.corpus._load import load_corpus as load_corpus
    from tokasm.corpus._load import load_file as load_file
    from tokasm.corpus._load import parse_case as parse_case
    from tokasm.corpus._load import profile_gap as profile_gap
    from tokasm.corpus._load import requirement_ids as requirement_ids

__all__ = [
    "EXPORT_FORMAT",
    "LARGE_PROFILES",
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
    "write_folder",
    "write_lines",
]


def __getattr__(name: str) -> object:  # only the loader's names are not imported above
    if name in __all__:
        return getattr(import_module("tokasm.corpus._load"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
