"""tokasm: conformance kit and reference implementations of the streaming token assembler.

``TokenAssembler`` is the recommended backend; ``tokasm.implementations``
holds the others, ``tokasm.conformance`` the corpus loader, oracle and runners.

Names are imported lazily (PEP 562): the pytest plugin lives in this package
and is loaded by every pytest session where tokasm is installed, so importing
the package must cost next to nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tokasm._versions import __version__

if TYPE_CHECKING:
    from tokasm.implementations import Assembler, Event
    from tokasm.implementations.chunked import ChunkedAssembler as TokenAssembler

__all__ = ["Assembler", "Event", "TokenAssembler", "__version__"]


def __getattr__(name: str) -> object:
    if name == "TokenAssembler":
        from tokasm.implementations.chunked import ChunkedAssembler

        return ChunkedAssembler
    if name in ("Assembler", "Event"):
        from tokasm import implementations

        return getattr(implementations, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
