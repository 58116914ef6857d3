"""The three versions a run is pinned to, in one place: package, corpus and protocol."""

from __future__ import annotations

__all__ = ["PROTOCOL_VERSION", "__version__"]

#: This package's version (``tokasm.__version__``; pyproject.toml reads it from here).
__version__ = "0.1.0"

#: The line-protocol version this kit speaks (spec/PROTOCOL.md); ``hello`` must agree on it.
PROTOCOL_VERSION = 1
