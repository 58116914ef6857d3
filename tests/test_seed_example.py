"""The seed specification's example, verbatim, against every bundled backend."""

from __future__ import annotations

import pytest

import tokasm
from tokasm.implementations import BACKENDS, Assembler


@pytest.mark.parametrize(
    "make", [*BACKENDS.values(), tokasm.TokenAssembler], ids=[*BACKENDS, "TokenAssembler"]
)
def test_seed_example(make: type[Assembler]) -> None:
    a = make()
    assert a.apply({"id": "m", "delta": "hel"}) is None
    assert a.apply({"id": "m", "delta": "lo", "final": True}) == "hello"
    assert a.apply({"id": "m", "delta": "ignored", "final": True}) == "hello"
    assert a.apply({"id": "empty", "final": True}) == ""
    assert a.get("empty") == ""
    assert a.get("unseen") is None
