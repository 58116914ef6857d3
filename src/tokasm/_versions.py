"""The three versions a run is pinned to, in one place: package, corpus and protocol."""

from __future__ import annotations

from tokasm.errors import CorpusError

__all__ = ["PROTOCOL_VERSION", "__version__", "version_line"]

#: This package's version (``tokasm.__version__``; pyproject.toml reads it from here).
__version__ = "0.1.0"

#: The line-protocol version this kit speaks (spec/PROTOCOL.md); ``hello`` must agree on it.
PROTOCOL_VERSION = 1


def version_line() -> str:
    """What ``--version`` prints and ``check`` opens with.

    Built for every parser, so a missing spec folder must not break ``--help``:
    the corpus then reads ``unavailable`` and the command that needs it says why.
    """
    from tokasm.corpus import spec_dir  # above this module: the corpus needs the versions

    try:
        corpus = (spec_dir() / "VERSION").read_text(encoding="utf-8").strip()
    except (CorpusError, OSError):
        corpus = "unavailable"
    return f"tokasm {__version__} (corpus {corpus}, protocol {PROTOCOL_VERSION})"
