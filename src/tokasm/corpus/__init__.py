"""The conformance corpus: its cases and steps, the loader, the oracle and the export."""

from __future__ import annotations

from tokasm.corpus._export import json_can_carry as json_can_carry
from tokasm.corpus._export import write_folder as write_folder
from tokasm.corpus._export import write_lines as write_lines
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
from tokasm.corpus._paths import spec_dir as spec_dir
from tokasm.corpus.model import ModelAssembler as ModelAssembler
from tokasm.corpus.steps import Apply as Apply
from tokasm.corpus.steps import Get as Get
from tokasm.corpus.steps import Raises as Raises
from tokasm.corpus.steps import ReadSince as ReadSince
from tokasm.corpus.steps import Returns as Returns
from tokasm.corpus.steps import Step as Step
from tokasm.errors import CorpusError as CorpusError
