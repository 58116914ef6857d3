"""The conformance corpus: its cases and steps, the loader, the oracle and the export."""

from tokasm.corpus._export import *  # noqa: F403
from tokasm.corpus._load import *  # noqa: F403
from tokasm.corpus._paths import spec_dir as spec_dir
from tokasm.corpus.model import ModelAssembler as ModelAssembler
from tokasm.corpus.steps import *  # noqa: F403
from tokasm.errors import CorpusError as CorpusError
