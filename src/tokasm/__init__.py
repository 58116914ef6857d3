"""tokasm: conformance kit and reference implementations of the streaming token assembler.

Names load lazily: the pytest plugin loads this package in every pytest session."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tokasm._versions import __version__

if TYPE_CHECKING:
    from tokasm.implementations import Assembler, Event
    from tokasm.implementations.chunked import ChunkedAssembler as TokenAssembler

__all__ = ["Assembler", "Event", "TokenAssembler", "__version__"]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from tokasm import implementations
    from tokasm.implementations.chunked import ChunkedAssembler

    return ChunkedAssembler if name == "TokenAssembler" else getattr(implementations, name)
