"""The conformance corpus: its cases and steps, the loader, the oracle and the export."""

from __future__ import annotations

from tokasm.corpus._export import json_can_carry, write_folder, write_lines
from tokasm.corpus._load import (
    LARGE_PROFILES,
    PROFILES,
    Case,
    Corpus,
    expand,
    load_corpus,
    load_file,
    parse_case,
    profile_gap,
    requirement_ids,
)
from tokasm.corpus._paths import spec_dir
from tokasm.corpus.model import ModelAssembler
from tokasm.corpus.steps import (
    Apply,
    Get,
    Raises,
    ReadSince,
    Returns,
    Step,
)
from tokasm.errors import CorpusError

__all__ = [
    "LARGE_PROFILES",
    "PROFILES",
    "Apply",
    "Case",
    "Corpus",
    "CorpusError",
    "Get",
    "ModelAssembler",
    "Raises",
    "ReadSince",
    "Returns",
    "Step",
    "expand",
    "json_can_carry",
    "load_corpus",
    "load_file",
    "parse_case",
    "profile_gap",
    "requirement_ids",
    "spec_dir",
    "write_folder",
    "write_lines",
]
