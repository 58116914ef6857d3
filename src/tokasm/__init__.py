"""tokasm: conformance kit and reference implementations of the streaming token assembler.

``TokenAssembler`` is the recommended backend; ``tokasm.implementations``
holds the others, ``tokasm.conformance`` the corpus loader, oracle and runners.
"""

from __future__ import annotations

from ._versions import __version__
from .implementations import Assembler, Event
from .implementations.chunked import ChunkedAssembler as TokenAssembler

__all__ = ["Assembler", "Event", "TokenAssembler", "__version__"]
