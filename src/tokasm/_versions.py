"""The three versions a run is pinned to, in one place: package, corpus and protocol."""

from __future__ import annotations

from tokasm.corpus._paths import spec_dir
from tokasm.errors import CorpusError

__all__ = ["PROTOCOL_VERSION", "__version__", "corpus_version", "version_line"]

#: This package's version (``tokasm.__version__``; pyproject.toml reads it from here).
__version__ = "0.1.0"

#: The line-protocol version this kit speaks (spec/PROTOCOL.md); ``hello`` must agree on it.
PROTOCOL_VERSION = 1


def corpus_version() -> str:
    """The corpus semver from ``spec/VERSION``."""
    return (spec_dir() / "VERSION").read_text(encoding="utf-8").strip()


def version_line() -> str:
    """What ``--version`` prints and ``check`` opens with.

    Built for every parser, so a missing spec folder must not break ``--help``:
    the corpus then reads ``unavailable`` and the command that needs it says why.
    """
    try:
        corpus = corpus_version()
    except (CorpusError, OSError):
        corpus = "unavailable"
    return f"tokasm {__version__} (corpus {corpus}, protocol {PROTOCOL_VERSION})"
