"""Hypothesis strategies for event programs: what the fuzzer and the stateful test send.

A program is a list of operations with no expected values: the oracle supplies
those later (``fuzz_cases``), so every operation is independent of the others
and Hypothesis can delete, reorder and simplify them freely while shrinking.
The text pools lean on what implementations get wrong (SPEC APPEND-EXACT,
APPEND-EMPTY, EVT-ID-ANY): empty and whitespace-only text, CR/LF, tabs, NUL,
combining marks, emoji, ids that differ only by case, whitespace or
Unicode normalization.
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from hypothesis import strategies as st

from .steps import Apply, Get, ReadSince

if TYPE_CHECKING:
    from collections.abc import Callable

    from .steps import Step

_T = TypeVar("_T")

__all__ = [
    "INSTANCE_NAMES",
    "TRICKY_IDS",
    "Program",
    "deltas",
    "message_ids",
    "programs",
]

#: Ids that are distinct messages although they look alike (EVT-ID-ANY):
#: case, surrounding whitespace, NFC vs NFD, the empty id, an astral character.
TRICKY_IDS: tuple[str, ...] = (
    "m",
    "M",
    " m",
    "m ",
    "",
    "caf\u00e9",
    "cafe\u0301",
    "\U0001f600",
    "msg-1",
)

#: Id pools whose members are different messages that sloppy code merges.
_LOOKALIKE_POOLS: tuple[tuple[str, ...], ...] = (
    ("m", "M"),
    ("m", " m", "m "),
    ("caf\u00e9", "cafe\u0301"),
    ("", " ", "m"),
    ("\U0001f600", "\U0001f601"),
    ("k" * 256 + "1", "k" * 256 + "2"),  # equal in their first 256 characters
)

#: Deltas that have broken real implementations (APPEND-EXACT, APPEND-EMPTY).
_TRICKY_DELTAS: tuple[str, ...] = (
    "",
    " ",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "\x00",
    "hel",
    "lo",
    "  trailing  ",
    "e\u0301",
    "\u00e9",
    "\U0001f642",
    "\U0001f469\u200d\U0001f4bb",
    "\u4f60\u597d",
    "\u2028",
    "\x85",
    "\ufeff",
)

#: Instance names, as the case schema allows them (``^[a-z][a-z0-9_]*$``).
INSTANCE_NAMES: tuple[str, ...] = ("a", "b", "c", "d")

#: Where an event's ``final`` key stands: absent (EVT-SHAPE), false or true.
_FINAL_CHOICES: tuple[bool | None, ...] = (None, None, False, True)

_POOL_SIZE = 4  # distinct ids most programs use

# Hypothesis starts small; a few operations even in its first examples make
# each one count. Shorter counterexamples come from the fuzzer's final
# one-edit simplification, which may go below this.
_MIN_OPS = 4

#: Keys with no meaning that must not change a result (EVT-EXTRA-KEYS), as
#: real SDK events carry them; one event in four has one.
_EXTRA_KEYS: tuple[dict[str, object], ...] = (
    {"seq": 7},
    {"index": 0},
    {"type": "content_block_delta"},
    {"text": "not a delta"},
    {"finish_reason": "stop"},
)


def message_ids() -> st.SearchStrategy[str]:
    """Mostly look-alike ids from ``TRICKY_IDS``, sometimes any short text."""
    return st.one_of(st.sampled_from(TRICKY_IDS), st.text(max_size=3))


def _mostly(
    common: st.SearchStrategy[_T], rare: st.SearchStrategy[_T], one_in: int
) -> st.SearchStrategy[_T]:
    """``rare`` once in ``one_in`` draws, else ``common``; shrinks towards ``common``."""

    @st.composite
    def choose(draw: st.DrawFn) -> _T:
        is_rare = draw(st.integers(min_value=1, max_value=one_in)) == one_in
        return draw(rare if is_rare else common)

    return choose()


def deltas() -> st.SearchStrategy[str]:
    """Tricky and arbitrary short deltas, and now and then a long one (APPEND-LONG)."""
    long_deltas = st.builds(
        operator.mul, st.text(min_size=1, max_size=3), st.integers(min_value=64, max_value=3000)
    )
    short_deltas = st.sampled_from(_TRICKY_DELTAS) | st.text(max_size=8)
    return _mostly(short_deltas, long_deltas, one_in=12)


@dataclass(frozen=True)
class Program:
    """Steps with no expectations yet, on fresh instances, in order; ``instances`` lists
    every name used."""

    instances: tuple[str, ...]
    steps: tuple[Step, ...]


#: An operation waiting for its message id, and which id: an index into the
#: program's id pool (so ids collide, messages interleave and get finalized
#: twice) or an id of its own, which may name no message at all.
_Pending: TypeAlias = "tuple[Callable[[str], Step], int | str]"


def _apply(
    instance: str, delta: str | None, final: bool | None, extra: dict[str, object]
) -> Callable[[str], Step]:
    """A well-formed event (EVT-WELLFORMED) with ``delta`` and ``final`` present or absent."""

    def make(message_id: str) -> Step:
        event: dict[str, object] = {"id": message_id}
        if delta is not None:
            event["delta"] = delta
        if final is not None:
            event["final"] = final
        return Apply(instance, None, {**event, **extra})

    return make


def _get(instance: str) -> Callable[[str], Step]:
    return functools.partial(Get, instance, None)


def _read_since(instance: str, offset: int, from_end: bool) -> Callable[[str], Step]:
    def make(message_id: str) -> Step:
        return ReadSince(instance, None, message_id, offset, from_end)

    return make


def programs(
    *, instances: int = 2, read_since: bool = False, max_ops: int = 24
) -> st.SearchStrategy[Program]:
    """Programs over ``instances`` assemblers; ``read_since`` only if the target has it."""
    if not 1 <= instances <= len(INSTANCE_NAMES):
        raise ValueError(f"instances must be 1..{len(INSTANCE_NAMES)}, got {instances}")
    names = INSTANCE_NAMES[:instances]
    instance = st.sampled_from(names)
    pooled = st.integers(min_value=0, max_value=_POOL_SIZE - 1)
    any_id = pooled | message_ids()
    applies = st.builds(
        _apply,
        instance,
        _mostly(deltas(), st.none(), one_in=4),
        st.sampled_from(_FINAL_CHOICES),
        _mostly(st.just({}), st.sampled_from(_EXTRA_KEYS), one_in=4),
    )
    reads: list[st.SearchStrategy[_Pending]] = [st.tuples(st.builds(_get, instance), any_id)]
    if read_since:
        offsets = st.integers(min_value=0, max_value=12)
        reads.append(st.tuples(st.builds(_read_since, instance, offsets, st.booleans()), any_id))
    pending = _mostly(st.tuples(applies, pooled), st.one_of(reads), one_in=4)
    pendings = st.lists(pending, min_size=_MIN_OPS, max_size=max_ops)
    pools = st.one_of(
        st.sampled_from(_LOOKALIKE_POOLS).map(list),
        st.lists(message_ids(), min_size=1, max_size=_POOL_SIZE, unique=True),
    )

    @st.composite
    def build(draw: st.DrawFn) -> Program:
        pool = draw(pools)
        steps = tuple(
            make(pool[pick % len(pool)] if isinstance(pick, int) else pick)
            for make, pick in draw(pendings)
        )
        used = {step.instance for step in steps}
        return Program(tuple(n for n in names if n in used), steps)

    return build()
