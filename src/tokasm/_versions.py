"""The package version (pyproject.toml reads it here) and the protocol version tokasm speaks."""

__all__ = ["PROTOCOL_VERSION", "__version__"]

__version__ = "0.1.0"
#: The line-protocol version this kit speaks (spec/PROTOCOL.md); ``hello`` must agree on it.
PROTOCOL_VERSION = 1
