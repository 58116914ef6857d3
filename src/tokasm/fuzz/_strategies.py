"""Hypothesis strategies for programs, steps with no expectations yet (the model supplies
them), so Hypothesis may delete and simplify any; a macro shrinks by its k."""

from __future__ import annotations

import operator
from functools import partial
from typing import TYPE_CHECKING, TypeVar

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
#: Mostly a look-alike pool and shaped ones as one (a program mixes kinds of ids), else own ids.
_POOLS = _mostly(
    st.builds(
        lambda *pools: list(dict.fromkeys(i for pool in (pools[0], *pools[1]) for i in pool)),
        st.sampled_from(_LOOKALIKE_POOLS),
        st.lists(st.sampled_from(_SHAPED_POOLS), max_size=_MAX_POOLS - 1),
    ),
    st.lists(MESSAGE_IDS, min_size=1, max_size=_POOL_SIZE, unique=True),
    one_in=4,
)
_EXTRA = _mostly(st.just({}), st.sampled_from(_EXTRA_KEYS), one_in=4)
_SINGLE_DELTAS = _mostly(DELTAS, st.none(), one_in=4)


def apply_step(
    instance: str, message_id: str, delta: str | None, final: bool | None, extra: dict[str, object]
) -> Step:
    """A well-formed event (EVT-WELLFORMED), ``delta`` and ``final`` absent when None."""
    shown = {k: v for k, v in {"delta": delta, "final": final}.items() if v is not None}
    return Apply(instance, None, {"id": message_id, **shown, **extra})


def _sizes(few: int, many: tuple[int, ...]) -> st.SearchStrategy[int]:
    """A macro's k: 2 to ``few`` mostly, one of ``many`` one time in four; shrinks to 2."""
    return _mostly(st.integers(min_value=2, max_value=few), st.sampled_from(many), one_in=4)


def _stream(draw: st.DrawFn, event: Callable[..., Step], read: Step) -> list[Step]:
    """k deltas to one message, read as drawn, an extra key on the middle one, then left
    open or finalized (APPEND, ORDER)."""
    pieces = draw(st.lists(DELTAS, min_size=1, max_size=3))
    count = draw(_sizes(12, _BOUNDARIES))
    read_first, every = draw(st.booleans()), draw(st.sampled_from(_READ_EVERY))
    middle, read_last = draw(_EXTRA), draw(st.booleans())
    ending = draw(st.sampled_from(("open", "bare", "delta")))
    block = []
    for index in range(1, count + 1):
        block.append(
            event(pieces[index % len(pieces)], None, middle if index == count // 2 + 1 else {})
        )
        if (index == 1 and read_first) or (every and index % every == 0):
            block.append(read)
    block += [read] if read_last else []
    if ending == "bare":  # a last delta, then a final without one
        block += [event(draw(st.sampled_from(_TAILS)), None, {}), event(None, True, {})]
    elif ending == "delta":
        block.append(event(draw(DELTAS), True, {}))
    return block + ([read] if draw(st.booleans()) else [])


def _messages(draw: st.DrawFn, name: str) -> list[Step]:
    """k numbered messages, perhaps read before they exist, then opened or finalized
    (GET-UNKNOWN, FINAL-UNSEEN, INTERLEAVE)."""
    stem = draw(st.sampled_from(("f", "m:", "a/", "id-")))
    count = draw(_sizes(12, (*_BOUNDARIES, 255, 256, 257)))
    read_before, final = draw(st.booleans()), draw(st.booleans())
    text = draw(st.none() | DELTAS)  # None: each its own numbered text
    block: list[Step] = []
    for index in range(count):
        block += [Get(name, None, f"{stem}{index}")] if read_before else []
        piece = f"<{index}>" if text is None else text
        block.append(apply_step(name, f"{stem}{index}", piece, final or None, {}))
    return block


def programs(instances: int, read_since: bool) -> st.SearchStrategy[tuple[Step, ...]]:
    """Programs on ``instances`` assemblers, of 4 to 16 draws (one in five a macro), their
    ids mostly from one pool, so ids collide and messages interleave."""
    names = st.sampled_from(INSTANCE_NAMES[:instances])

    def read(draw: st.DrawFn, message_id: str) -> Step:
        if read_since and draw(st.booleans()):
            offset = draw(st.integers(min_value=0, max_value=12))
            return ReadSince(draw(names), None, message_id, offset, from_end=draw(st.booleans()))
        return Get(draw(names), None, message_id)

    @st.composite
    def block(draw: st.DrawFn, pooled: st.SearchStrategy[str]) -> list[Step]:
        if draw(st.integers(min_value=1, max_value=5)) < 5:  # a single step
            if draw(st.integers(min_value=1, max_value=4)) < 4:
                delta, final = draw(_SINGLE_DELTAS), draw(st.sampled_from(FINAL_CHOICES))
                return [apply_step(draw(names), draw(pooled), delta, final, draw(_EXTRA))]
            return [read(draw, draw(MESSAGE_IDS if draw(st.booleans()) else pooled))]
        macro = draw(st.sampled_from(("stream", "rereads", "messages")))
        if macro == "messages":
            return _messages(draw, draw(names))
        once = read(draw, draw(pooled))
        if macro == "rereads":  # r reads in a row of one message, for read caches that count
            return [once] * draw(_sizes(6, (16, 32, 33)))
        return _stream(draw, partial(apply_step, once.instance, str(once.message_id)), once)

    @st.composite
    def build(draw: st.DrawFn) -> tuple[Step, ...]:
        pooled = st.sampled_from(draw(_POOLS))
        blocks = draw(st.lists(block(pooled), min_size=4, max_size=16))
        return tuple(step for steps in blocks for step in steps)

    return build()
