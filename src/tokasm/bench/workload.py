"""The text stream every scenario feeds: realistic delta sizes from a fixed seed.

The scenarios slice each delta while streaming, so every delta is a fresh ``str``, as from a
JSON decoder, and an assembler that keeps its deltas pays for them in the traced run.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["SEED", "Workload", "make_workload"]

#: Same seed, same text: runs and machines compare like with like.
SEED = 20260401

#: Delta lengths 1-12, weighted as LLM token text is (mostly 2-6) ...
_SMALL_LENGTHS = range(1, 13)
_SMALL_WEIGHTS = (4, 8, 10, 12, 10, 8, 6, 4, 3, 2, 1, 1)
#: ... and now and then a multi-kilobyte one (a tool call's arguments): chance and range.
_LARGE_CHANCE = 1e-4
_LARGE_LENGTHS = (1024, 8192)
#: ASCII: wider characters change only the string kind, which each backend's tests cover.
_ALPHABET = "abcdefghijklmnopqrstuvwxyz" + " " * 6 + ".,\n"


@dataclass(frozen=True)
class Workload:
    """``size`` deltas: delta ``i`` is ``source[bounds[i]:bounds[i + 1]]``."""

    size: int
    source: str
    bounds: tuple[int, ...]

    @property
    def text_length(self) -> int:
        """Characters in the whole stream (the final text of one message)."""
        return len(self.source)


@lru_cache(maxsize=8)
def make_workload(size: int, seed: int = SEED) -> Workload:
    """The ``size``-delta workload for ``seed``, built once per process."""
    if size < 1:
        raise ValueError(f"a workload needs at least one delta, got size {size}")
    rng = random.Random(seed)
    lengths = rng.choices(_SMALL_LENGTHS, weights=_SMALL_WEIGHTS, k=size)
    for index in range(size):
        if rng.random() < _LARGE_CHANCE:
            lengths[index] = rng.randint(*_LARGE_LENGTHS)
    source = "".join(rng.choices(_ALPHABET, k=sum(lengths)))
    return Workload(size, source, (0, *itertools.accumulate(lengths)))
