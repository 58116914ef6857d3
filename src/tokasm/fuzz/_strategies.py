"""Hypothesis strategies for programs, steps with no expectations yet (the model supplies
them), so Hypothesis may delete and simplify any; a macro shrinks by its k."""

from __future__ import annotations

import functools
import operator
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from hypothesis import strategies as st

from tokasm.corpus.steps import Apply, Get, ReadSince
from tokasm.fuzz import INSTANCE_NAMES

if TYPE_CHECKING:
    from collections.abc import Callable

    from tokasm.corpus.steps import Step

_T = TypeVar("_T")

#: Ids that are distinct messages although they look alike (EVT-ID-ANY).
_TRICKY_IDS = ("m", "M", " m", "m ", "", "caf\u00e9", "cafe\u0301", "\U0001f600", "msg-1", "a/b",
               "m:done", "constructor", "__proto__", "None", "default")  # fmt: skip
#: Id pools whose members are different messages that sloppy code merges.
_LOOKALIKE_POOLS = (("m", "M"), ("m", " m", "m "), ("caf\u00e9", "cafe\u0301"), ("", " ", "m"),
                    ("\U0001f600", "\U0001f601"), ("k" * 256 + "1", "k" * 256 + "2"))  # fmt: skip
#: Id pools of the shapes implementations special-case (EVT-ID-ANY): paths and compound keys;
#: attribute, method and JS prototype names; the empty id beside the names a default might
#: take; pairs equal under CRC-32, Adler-32, FNV-1a, djb2 and Java's String.hashCode.
_SHAPED_POOLS = (
    ("a/b", "a//b", "a/./b", "a/c/../b"), ("m", "m:done", "m:done:done", "m_done"),
    ("a:b", "a::b", "a|b", "a||b"), ("a.b", "a..b", "a:b.c", "a/b|c"),
    ("constructor", "__proto__", "toString", "hasOwnProperty"),
    ("valueOf", "get", "apply", "__dict__"), ("__class__", "keys", "items", "_done"),
    ("_parts", "_messages", "prototype", "values"),
    ("", "default", "None", "null"), ("", "undefined", "0", "none"),
    ("id-z2t8lz", "id-fageyn"), ("msg-120", "msg-201"), ("id-jk6sz5", "id-pqcehz"),
    ("id-ento1g", "id-ep2msg"), ("Aa", "BB", "AaBB", "BBAa"),
)  # fmt: skip
#: The ids of the shaped pools; a case using one shows EVT-ID-ANY.
SHAPED_IDS = frozenset(i for pool in _SHAPED_POOLS for i in pool) - {"m"}
#: Stream sentinels and null-like texts, which are ordinary text (APPEND-EXACT).
SENTINEL_DELTAS = ("[DONE]", "<|endoftext|>", "data: ", "data: [DONE]\n\n", "None", "null",
                   "undefined")  # fmt: skip
#: Deltas that have broken real implementations (APPEND-EXACT, APPEND-EMPTY).
_TRICKY_DELTAS = ("", " ", "\n", "\r\n", "\r", "\t", "\x00", "hel", "lo", "  trailing  ",
                  "e\u0301", "\u00e9", "\U0001f642", "\U0001f469\u200d\U0001f4bb", "\u4f60\u597d",
                  "\u2028", "\x85", "\ufeff", *SENTINEL_DELTAS, "text\r")  # fmt: skip
#: Keys of real SDK events that must not change a result (EVT-EXTRA-KEYS).
_EXTRA_KEYS: tuple[dict[str, object], ...] = (
    {"seq": 7}, {"index": 0}, {"type": "content_block_delta"}, {"text": "not a delta"},
    {"finish_reason": "stop"}, {"role": "assistant"},
    {"object": "chat.completion.chunk", "role": "assistant"},
)  # fmt: skip
#: Where an event's ``final`` key stands: absent (EVT-SHAPE), false or true.
FINAL_CHOICES = (None, None, False, True)
#: After every how many deltas a stream reads its message (0: never in between).
_READ_EVERY = (0, 1, 2, 3, 7, 16, 63, 64)
#: Last deltas before a bare final, which an implementation may hold back (APPEND-EXACT).
_TAILS = ("\r", "text\r", "<|", "<|endo", "[DON", "data:", "\u00e9\u0301", "")
#: Long streams and many messages stop at block-size and compaction boundaries.
_BOUNDARIES = (15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129)
_POOL_SIZE, _MAX_POOLS = 4, 3  # distinct arbitrary ids in a program's pool; pools joined

#: Every character but the surrogates, told apart by code point, not by category (whose
#: table costs Hypothesis 1.5 s to build).
_CHARACTERS = st.characters(
    exclude_categories=(), exclude_characters="".join(map(chr, range(0xD800, 0xE000)))
)


def any_texts(*, min_size: int = 0, max_size: int) -> st.SearchStrategy[str]:
    return st.text(_CHARACTERS, min_size=min_size, max_size=max_size)


def _mostly(
    common: st.SearchStrategy[_T], rare: st.SearchStrategy[_T], one_in: int
) -> st.SearchStrategy[_T]:
    """``rare`` once in ``one_in`` draws; shrinks towards ``common``."""
    return st.integers(min_value=1, max_value=one_in).flatmap(
        lambda drawn: rare if drawn == one_in else common
    )


MESSAGE_IDS = st.sampled_from(_TRICKY_IDS) | any_texts(max_size=3)
#: Tricky and arbitrary short deltas, and now and then a long one (APPEND-LONG).
DELTAS = _mostly(
    st.sampled_from(_TRICKY_DELTAS) | any_texts(max_size=8),
    st.builds(operator.mul, any_texts(min_size=1, max_size=3), st.integers(64, 3000)),
    one_in=12,
)
_POOLED = st.integers(min_value=0, max_value=_MAX_POOLS * max(map(len, _SHAPED_POOLS)) - 1)
_EXTRA = _mostly(st.just({}), st.sampled_from(_EXTRA_KEYS), one_in=4)


#: An operation waiting for its message id, and the id: an index into the program's pool
#: (so ids collide and messages interleave) or its own. A block: one draw's operations.
_Pending: TypeAlias = "tuple[Callable[[str], Step], int | str]"
_Block: TypeAlias = "list[_Pending]"


def apply_step(
    instance: str, delta: str | None, final: bool | None, extra: dict[str, object]
) -> Callable[[str], Step]:
    """A well-formed event (EVT-WELLFORMED), ``delta`` and ``final`` absent when None."""
    shown = {k: v for k, v in {"delta": delta, "final": final}.items() if v is not None}
    return lambda message_id: Apply(instance, None, {"id": message_id, **shown, **extra})


def _read_since(instance: str, offset: int, from_end: bool) -> Callable[[str], Step]:
    return functools.partial(ReadSince, instance, None, offset=offset, from_end=from_end)


def _reader(instance: str, read_since: bool) -> st.SearchStrategy[Callable[[str], Step]]:
    gets = st.just(functools.partial(Get, instance, None))
    if not read_since:
        return gets
    offsets = st.integers(min_value=0, max_value=12)
    return gets | st.builds(_read_since, st.just(instance), offsets, st.booleans())


def _sizes(few: int, many: tuple[int, ...]) -> st.SearchStrategy[int]:
    """A macro's k: 2 to ``few`` mostly, one of ``many`` one time in four; shrinks to 2."""
    return _mostly(st.integers(min_value=2, max_value=few), st.sampled_from(many), one_in=4)


@st.composite
def _stream(
    draw: st.DrawFn,
    instance: st.SearchStrategy[str],
    readers: dict[str, st.SearchStrategy[Callable[[str], Step]]],
) -> _Block:
    """k deltas to one message, read as drawn, an extra key on the middle one, then left
    open or finalized (APPEND, ORDER)."""
    name, pick = draw(instance), draw(_POOLED)
    pieces = draw(st.lists(DELTAS, min_size=1, max_size=3))
    count = draw(_sizes(12, _BOUNDARIES))
    read_first, every = draw(st.booleans()), draw(st.sampled_from(_READ_EVERY))
    read, middle = draw(readers[name]), draw(_EXTRA)
    read_last, ending = draw(st.booleans()), draw(st.sampled_from(("open", "bare", "delta")))
    block: _Block = []
    for index in range(1, count + 1):
        keys = middle if index == count // 2 + 1 else {}
        block.append((apply_step(name, pieces[index % len(pieces)], None, keys), pick))
        if (index == 1 and read_first) or (every and index % every == 0):
            block.append((read, pick))
    block += [(read, pick)] if read_last else []
    if ending == "bare":  # a last delta, then a final without one
        block.append((apply_step(name, draw(st.sampled_from(_TAILS)), None, {}), pick))
        block.append((apply_step(name, None, True, {}), pick))
    elif ending == "delta":
        block.append((apply_step(name, draw(DELTAS), True, {}), pick))
    return block + ([(read, pick)] if draw(st.booleans()) else [])


@st.composite
def _messages(draw: st.DrawFn, instance: st.SearchStrategy[str]) -> _Block:
    """k numbered messages, perhaps read before they exist, then opened or finalized
    (GET-UNKNOWN, FINAL-UNSEEN, INTERLEAVE)."""
    name, stem = draw(instance), draw(st.sampled_from(("f", "m:", "a/", "id-")))
    count = draw(_sizes(12, (*_BOUNDARIES, 255, 256, 257)))
    read_before, final = draw(st.booleans()), draw(st.booleans())
    text = draw(st.none() | DELTAS)  # None: each its own numbered text
    block: _Block = []
    for index in range(count):
        if read_before:
            block.append((functools.partial(Get, name, None), f"{stem}{index}"))
        piece = f"<{index}>" if text is None else text
        block.append((apply_step(name, piece, final or None, {}), f"{stem}{index}"))
    return block


def programs(instances: int, read_since: bool) -> st.SearchStrategy[tuple[Step, ...]]:
    """Programs on ``instances`` assemblers, of 4 to 16 draws (one in five a macro)."""
    names = INSTANCE_NAMES[:instances]
    instance = st.sampled_from(names)
    readers = {name: _reader(name, read_since) for name in names}
    reader = st.one_of(list(readers.values()))

    applies = st.builds(
        apply_step,
        instance,
        _mostly(DELTAS, st.none(), one_in=4),
        st.sampled_from(FINAL_CHOICES),
        _EXTRA,
    )
    reads = st.tuples(reader, _POOLED | MESSAGE_IDS)
    single = _mostly(st.tuples(applies, _POOLED), reads, one_in=4).map(lambda pending: [pending])
    rereads = st.builds(  # r reads in a row of one message, for read caches that count reads
        lambda pending, count: [pending] * count,
        st.tuples(reader, _POOLED),
        _sizes(6, (16, 32, 33)),
    )
    macro = st.one_of(_stream(instance, readers), rereads, _messages(instance))
    blocks = st.lists(_mostly(single, macro, one_in=5), min_size=4, max_size=16)
    pools = _mostly(
        st.builds(  # a look-alike pool and shaped ones as one: a program mixes kinds of ids
            lambda *pools: list(dict.fromkeys(i for pool in (pools[0], *pools[1]) for i in pool)),
            st.sampled_from(_LOOKALIKE_POOLS),
            st.lists(st.sampled_from(_SHAPED_POOLS), max_size=_MAX_POOLS - 1),
        ),
        st.lists(MESSAGE_IDS, min_size=1, max_size=_POOL_SIZE, unique=True),
        one_in=4,
    )

    @st.composite
    def build(draw: st.DrawFn) -> tuple[Step, ...]:
        pool = draw(pools)
        return tuple(
            make(pool[pick % len(pool)] if isinstance(pick, int) else pick)
            for block in draw(blocks)
            for make, pick in block
        )

    return build()
