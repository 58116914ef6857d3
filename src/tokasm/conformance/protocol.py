"""The line protocol spoken with foreign-language testees (spec/PROTOCOL.md)."""

from __future__ import annotations

__all__ = ["PROTOCOL_VERSION"]

#: The protocol version this kit speaks; ``hello`` must agree on it.
PROTOCOL_VERSION = 1
