"""Hypothesis strategies for event programs: what the fuzzer and the stateful test send.

A program's steps carry no expected values (the model supplies them), so Hypothesis may
delete and simplify any of them. The pools lean on what implementations get wrong (SPEC
APPEND-EXACT, APPEND-EMPTY, EVT-ID-ANY, EVT-EXTRA-KEYS). Macros (k deltas to one message,
r reads, k messages) expand to plain steps, and shrink by their k.
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from hypothesis import strategies as st

from tokasm.corpus.steps import Apply, Get, ReadSince
from tokasm.fuzz._limits import INSTANCE_NAMES

if TYPE_CHECKING:
    from collections.abc import Callable

    from tokasm.corpus.steps import Step

_T = TypeVar("_T")

__all__ = [
    "SENTINEL_DELTAS",
    "SHAPED_IDS",
    "TRICKY_IDS",
    "Program",
    "any_texts",
    "deltas",
    "message_ids",
    "programs",
]

#: Ids that are distinct messages although they look alike (EVT-ID-ANY).
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
    "a/b",
    "m:done",
    "constructor",
    "__proto__",
    "None",
    "default",
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

#: Id pools of the shapes implementations special-case (EVT-ID-ANY).
_SHAPED_POOLS: tuple[tuple[str, ...], ...] = (
    # Paths and compound keys: separators, doubled ones, suffixes that mark state.
    ("a/b", "a//b", "a/./b", "a/c/../b"),
    ("m", "m:done", "m:done:done", "m_done"),
    ("a:b", "a::b", "a|b", "a||b"),
    ("a.b", "a..b", "a:b.c", "a/b|c"),
    # Attribute, method and JS prototype names, and a store's own attributes.
    ("constructor", "__proto__", "toString", "hasOwnProperty"),
    ("valueOf", "get", "apply", "__dict__"),
    ("__class__", "keys", "items", "_done"),
    ("_parts", "_messages", "prototype", "values"),
    # The empty id beside the names a default might take.
    ("", "default", "None", "null"),
    ("", "undefined", "0", "none"),
    # Pairs equal under CRC-32, Adler-32, FNV-1a, djb2 and Java's String.hashCode.
    ("id-z2t8lz", "id-fageyn"),
    ("msg-120", "msg-201"),
    ("id-jk6sz5", "id-pqcehz"),
    ("id-ento1g", "id-ep2msg"),
    ("Aa", "BB", "AaBB", "BBAa"),
)


#: Stream sentinels and null-like texts, which are ordinary text (APPEND-EXACT).
SENTINEL_DELTAS: tuple[str, ...] = (
    "[DONE]",
    "<|endoftext|>",
    "data: ",
    "data: [DONE]\n\n",
    "None",
    "null",
    "undefined",
)

#: The ids of the shaped pools; a case using one shows EVT-ID-ANY.
SHAPED_IDS: frozenset[str] = frozenset(i for pool in _SHAPED_POOLS for i in pool) - {"m"}

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
    *SENTINEL_DELTAS,
    "text\r",
)

#: Where an event's ``final`` key stands: absent (EVT-SHAPE), false or true.
_FINAL_CHOICES: tuple[bool | None, ...] = (None, None, False, True)

_POOL_SIZE = 4  # distinct ids in a program's pool of arbitrary ids
_MAX_POOLS = 3  # pools joined into one program's pool

_MIN_OPS = 4  # even Hypothesis's first, small examples do something

#: Keys of real SDK events that must not change a result (EVT-EXTRA-KEYS).
_EXTRA_KEYS: tuple[dict[str, object], ...] = (
    {"seq": 7},
    {"index": 0},
    {"type": "content_block_delta"},
    {"text": "not a delta"},
    {"finish_reason": "stop"},
    {"role": "assistant"},
    {"object": "chat.completion.chunk", "role": "assistant"},
)


#: Every character but the surrogates, drawn as ``st.text()`` draws them, but told apart by
#: code point: Hypothesis's table of Unicode categories costs 1.5 s to build.
_CHARACTERS = st.characters(
    exclude_categories=(), exclude_characters="".join(map(chr, range(0xD800, 0xE000)))
)


def any_texts(*, min_size: int = 0, max_size: int) -> st.SearchStrategy[str]:
    """Texts of any characters but the surrogates (``_CHARACTERS``)."""
    return st.text(_CHARACTERS, min_size=min_size, max_size=max_size)


def message_ids() -> st.SearchStrategy[str]:
    """Mostly look-alike ids from ``TRICKY_IDS``, sometimes any short text."""
    return st.one_of(st.sampled_from(TRICKY_IDS), any_texts(max_size=3))


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
        operator.mul, any_texts(min_size=1, max_size=3), st.integers(min_value=64, max_value=3000)
    )
    short_deltas = st.sampled_from(_TRICKY_DELTAS) | any_texts(max_size=8)
    return _mostly(short_deltas, long_deltas, one_in=12)


@dataclass(frozen=True)
class Program:
    """Steps with no expectations yet, on fresh instances, in order; ``instances`` lists
    every name used."""

    instances: tuple[str, ...]
    steps: tuple[Step, ...]


#: An operation waiting for its message id, and the id: an index into the program's
#: pool (so ids collide and messages interleave) or an id of its own.
_Pending: TypeAlias = "tuple[Callable[[str], Step], int | str]"

#: Operations drawn together; a macro's block is all of them, expanded.
_Block: TypeAlias = "list[_Pending]"

#: After every how many deltas a stream reads its message (0: never in between).
_READ_EVERY: tuple[int, ...] = (0, 1, 2, 3, 7, 16, 63, 64)

#: Last deltas before a bare final, which an implementation may hold back (APPEND-EXACT).
_TAILS: tuple[str, ...] = ("\r", "text\r", "<|", "<|endo", "[DON", "data:", "\u00e9\u0301", "")

#: Long streams and many messages stop at block-size and compaction boundaries.
_BOUNDARIES: tuple[int, ...] = (15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129)

#: Stems of the ids a many-messages macro numbers, plain and compound.
_STEMS: tuple[str, ...] = ("f", "m:", "a/", "id-")

#: How a stream ends: open, a bare final (no ``delta``), or a final with a last delta.
_ENDINGS: tuple[str, ...] = ("open", "bare", "delta")


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


def _sizes(few: int, many: tuple[int, ...]) -> st.SearchStrategy[int]:
    """A macro's k: 2 to ``few`` mostly, one of ``many`` one time in four; shrinks to 2."""
    return _mostly(st.integers(min_value=2, max_value=few), st.sampled_from(many), one_in=4)


def _joined(lookalikes: tuple[str, ...], shaped: list[tuple[str, ...]]) -> list[str]:
    """A look-alike pool and shaped ones as one, so a program mixes kinds of ids."""
    pools = (lookalikes, *shaped)
    return list(dict.fromkeys(message_id for pool in pools for message_id in pool))


def _alone(pending: _Pending) -> _Block:
    return [pending]


def _repeated(pending: _Pending, count: int) -> _Block:
    return [pending] * count


class _Draws:
    """The strategies of one ``programs`` call, each made once (not in every draw)."""

    def __init__(self, names: tuple[str, ...], read_since: bool) -> None:
        self.instance = st.sampled_from(names)
        self.deltas = deltas()
        self.pieces = st.lists(self.deltas, min_size=1, max_size=3)
        self.texts = st.none() | self.deltas
        self.stream_sizes = _sizes(12, _BOUNDARIES)
        self.message_sizes = _sizes(12, (*_BOUNDARIES, 255, 256, 257))
        self.every = st.sampled_from(_READ_EVERY)
        self.endings = st.sampled_from(_ENDINGS)
        self.tails = st.sampled_from(_TAILS)
        self.stems = st.sampled_from(_STEMS)
        most = max(_POOL_SIZE, _MAX_POOLS * max(map(len, _LOOKALIKE_POOLS + _SHAPED_POOLS)))
        self.pooled = st.integers(min_value=0, max_value=most - 1)
        self.extra = _mostly(st.just({}), st.sampled_from(_EXTRA_KEYS), one_in=4)
        self.read_since = read_since
        self.readers = {name: self._reader(name) for name in names}
        self.reader = st.one_of(list(self.readers.values()))

    def _reader(self, instance: str) -> st.SearchStrategy[Callable[[str], Step]]:
        """A read of some message on ``instance``: ``get``, or ``read_since`` if offered."""
        gets = st.just(_get(instance))
        if not self.read_since:
            return gets
        offsets = st.integers(min_value=0, max_value=12)
        return gets | st.builds(_read_since, st.just(instance), offsets, st.booleans())

    def single(self) -> st.SearchStrategy[_Block]:
        """One event (three times in four) or one read, of a pooled or any id."""
        applies = st.builds(
            _apply,
            self.instance,
            _mostly(self.deltas, st.none(), one_in=4),
            st.sampled_from(_FINAL_CHOICES),
            self.extra,
        )
        any_id = self.pooled | message_ids()
        reads = st.tuples(self.reader, any_id)
        return _mostly(st.tuples(applies, self.pooled), reads, one_in=4).map(_alone)

    def macro(self) -> st.SearchStrategy[_Block]:
        return st.one_of(self.stream(), self.rereads(), self.messages())

    def stream(self) -> st.SearchStrategy[_Block]:
        """k deltas to one message, read as drawn, an extra key on the middle event, then
        left open or finalized (APPEND, ORDER)."""

        @st.composite
        def build(draw: st.DrawFn) -> _Block:
            name, pick = draw(self.instance), draw(self.pooled)
            pieces, count = draw(self.pieces), draw(self.stream_sizes)
            read_first, every = draw(st.booleans()), draw(self.every)
            read = draw(self.readers[name])
            middle = draw(self.extra)
            read_last, ending = draw(st.booleans()), draw(self.endings)
            block: _Block = []
            for index in range(1, count + 1):
                extra = middle if index == count // 2 + 1 else {}
                block.append((_apply(name, pieces[index % len(pieces)], None, extra), pick))
                if (index == 1 and read_first) or (every and index % every == 0):
                    block.append((read, pick))
            if read_last:
                block.append((read, pick))
            if ending == "bare":
                block.append((_apply(name, draw(self.tails), None, {}), pick))
                block.append((_apply(name, None, True, {}), pick))
            elif ending == "delta":
                block.append((_apply(name, draw(self.deltas), True, {}), pick))
            if draw(st.booleans()):
                block.append((read, pick))
            return block

        return build()

    def rereads(self) -> st.SearchStrategy[_Block]:
        """r reads in a row of one message, for read caches that count reads."""
        return st.builds(_repeated, st.tuples(self.reader, self.pooled), _sizes(6, (16, 32, 33)))

    def messages(self) -> st.SearchStrategy[_Block]:
        """k numbered messages, perhaps read before they exist, then opened or finalized
        (GET-UNKNOWN, FINAL-UNSEEN, INTERLEAVE)."""

        @st.composite
        def build(draw: st.DrawFn) -> _Block:
            name, stem, count = draw(self.instance), draw(self.stems), draw(self.message_sizes)
            read_before, final = draw(st.booleans()), draw(st.booleans())
            text = draw(self.texts)  # None: each its own numbered text
            block: _Block = []
            for index in range(count):
                message_id = f"{stem}{index}"
                if read_before:
                    block.append((_get(name), message_id))
                delta = f"<{index}>" if text is None else text
                block.append((_apply(name, delta, final or None, {}), message_id))
            return block

        return build()


def programs(
    *, instances: int = 2, read_since: bool = False, max_ops: int = 16
) -> st.SearchStrategy[Program]:
    """Programs over ``instances`` assemblers of up to ``max_ops`` draws (one in five a
    macro); ``read_since`` only if the target has it."""
    if not 1 <= instances <= len(INSTANCE_NAMES):
        raise ValueError(f"instances must be 1..{len(INSTANCE_NAMES)}, got {instances}")
    names = INSTANCE_NAMES[:instances]
    draws = _Draws(names, read_since)
    blocks = st.lists(
        _mostly(draws.single(), draws.macro(), one_in=5), min_size=_MIN_OPS, max_size=max_ops
    )
    pools = _mostly(
        st.builds(
            _joined,
            st.sampled_from(_LOOKALIKE_POOLS),
            st.lists(st.sampled_from(_SHAPED_POOLS), max_size=_MAX_POOLS - 1),
        ),
        st.lists(message_ids(), min_size=1, max_size=_POOL_SIZE, unique=True),
        one_in=4,
    )

    @st.composite
    def build(draw: st.DrawFn) -> Program:
        pool = draw(pools)
        steps = tuple(
            make(pool[pick % len(pool)] if isinstance(pick, int) else pick)
            for block in draw(blocks)
            for make, pick in block
        )
        used = {step.instance for step in steps}
        return Program(tuple(n for n in names if n in used), steps)

    return build()
