"""The benchmark scenarios (SPEC.md cites their names), for ``benchmarks/`` and ``tokasm bench``.

Deltas are sliced while streaming, so each is a fresh ``str``, as from a JSON decoder."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate, cycle, pairwise, repeat
from typing import TYPE_CHECKING, TypeAlias, cast

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tokasm.implementations import Assembler, AssemblerFactory, IncrementalAssembler

__all__ = ["SCENARIOS", "make_workload"]

#: The timed work of a scenario run, repeatable; returns the final texts (for peak memory).
Action: TypeAlias = Callable[[], list[str]]
#: Feeds a workload's deltas to the message ids in turn, reading as the scenario does;
#: ``offsets``: each message's text length, for ``read_since``.
Feed: TypeAlias = Callable[["Assembler", "Workload", "Iterator[str]", dict[str, int]], None]

#: Reads timed by the re-read scenarios, whatever the message size.
READS = 1000
#: Events timed on a long text; the default lengths: a copy of the text outweighs 300us.
APPENDS = 50
LONG_TEXTS = (256_000, 1_000_000, 4_000_000, 16_000_000)
#: Messages open at once in the interleaved scenario.
MESSAGES = 64
#: Deltas of each message when messages come one after another (SIZE / 8 messages).
DELTAS_PER_MESSAGE = 8
#: Same seed, same text: runs and machines compare like with like.
SEED = 20260401
#: Delta lengths 1-12 weighted as LLM token text (mostly 2-6), rarely a multi-kilobyte one
#: (a tool call's arguments); ASCII (the string kind is each backend's tests' concern).
_WEIGHTS = (4, 8, 10, 12, 10, 8, 6, 4, 3, 2, 1, 1)
_LARGE_CHANCE, _LARGE_LENGTHS = 1e-4, (1024, 8192)
_ALPHABET = "abcdefghijklmnopqrstuvwxyz" + " " * 6 + ".,\n"


@dataclass(frozen=True)
class Workload:
    """``size`` deltas: delta ``i`` is ``source[bounds[i]:bounds[i + 1]]``."""

    size: int
    source: str
    bounds: tuple[int, ...]


@lru_cache(maxsize=8)
def make_workload(size: int) -> Workload:
    """The ``size``-delta workload, built once per process."""
    rng = random.Random(SEED)
    lengths = rng.choices(range(1, 13), weights=_WEIGHTS, k=size)
    for index in range(size):
        if rng.random() < _LARGE_CHANCE:
            lengths[index] = rng.randint(*_LARGE_LENGTHS)
    source = "".join(rng.choices(_ALPHABET, k=sum(lengths)))
    return Workload(size, source, (0, *accumulate(lengths)))


@lru_cache(maxsize=8)
def long_workload(length: int) -> Workload:
    """A text of ``length`` characters, to be followed by the ``APPENDS`` deltas."""
    small = make_workload(APPENDS)
    return Workload(length, (small.source * (length // len(small.source) + 1))[:length], ())


def _apply_each(
    assembler: Assembler, workload: Workload, ids: Iterator[str], offsets: dict[str, int]
) -> None:
    apply, source = assembler.apply, workload.source
    for message_id, (start, end) in zip(ids, pairwise(workload.bounds), strict=False):
        apply({"id": message_id, "delta": source[start:end]})


def _one_after_another(
    assembler: Assembler, workload: Workload, ids: Iterator[str], offsets: dict[str, int]
) -> None:
    """Each delta to the message ``ids`` names (a message's in a row), and a message's final
    as soon as the next one's first delta comes."""
    apply, source, current = assembler.apply, workload.source, None
    for message_id, (start, end) in zip(ids, pairwise(workload.bounds), strict=False):
        if message_id != current:
            if current is not None:
                apply({"id": current, "final": True})
            current = message_id
        apply({"id": message_id, "delta": source[start:end]})


def _read_each(keep: bool) -> Feed:
    def feed(
        assembler: Assembler, workload: Workload, ids: Iterator[str], offsets: dict[str, int]
    ) -> None:
        apply, get, source = assembler.apply, assembler.get, workload.source
        snapshot: str | None = None
        for message_id, (start, end) in zip(ids, pairwise(workload.bounds), strict=False):
            apply({"id": message_id, "delta": source[start:end]})
            # `text = a.get(id)` in a UI loop keeps the previous snapshot while the next
            # delta arrives, so no backend can grow that string in place.
            snapshot = get(message_id)
            if not keep:
                snapshot = None  # rendered, then dropped
        del snapshot

    return feed


def _read_since_each(
    assembler: Assembler, workload: Workload, ids: Iterator[str], offsets: dict[str, int]
) -> None:
    incremental, source = cast("IncrementalAssembler", assembler), workload.source
    for message_id, (start, end) in zip(ids, pairwise(workload.bounds), strict=False):
        incremental.apply({"id": message_id, "delta": source[start:end]})
        new_text = incremental.read_since(message_id, offsets[message_id])
        offsets[message_id] += 0 if new_text is None else len(new_text)


def _reads(factory: AssemblerFactory, workload: Workload, final: bool) -> Action:
    """``READS`` re-reads of a message streamed in the set-up, finalized or open (read once)."""
    assembler = factory()
    _apply_each(assembler, workload, repeat("m"), {})
    text = assembler.apply({"id": "m", "final": True}) if final else assembler.get("m")
    texts, get = [] if text is None else [text], assembler.get

    def run() -> list[str]:
        for _ in repeat(None, READS):
            get("m")
        return texts

    return run


@dataclass(frozen=True)
class Scenario:
    """A stream of ``event``s fed by ``feed`` over ``messages``, ``READS`` re-``read``s (of a
    ``final`` message or not), or ``APPENDS`` ``append``s to a message of each text length."""

    name: str
    summary: str
    unit: str
    feed: Feed = _apply_each
    messages: int = 1  # or, with ``per_message``, SIZE / per_message (and no long texts)
    per_message: int = 0
    needs_read_since: bool = False
    final: bool = False

    @property
    def per_operation(self) -> bool:
        """A fixed count of operations at every size; a stream's events are timed on long texts."""
        return self.unit != "event"

    @property
    def text_sizes(self) -> bool:
        """Sized by lengths of text, not numbers of deltas (so never traced: no final texts)."""
        return self.unit == "append"

    @property
    def on_long_texts(self) -> bool:
        """Whether its events are also timed on messages holding long texts."""
        return self.unit == "event" and not self.per_message

    @property
    def traced(self) -> bool:
        return not self.text_sizes

    def sizes(self, asked: Sequence[int], texts: Sequence[int]) -> list[int]:
        return sorted(texts if self.text_sizes else asked)

    def workload(self, size: int) -> Workload:
        return long_workload(size) if self.text_sizes else make_workload(size)

    def operations(self, size: int, long_text: bool = False) -> int:
        """How many ``unit``s one run of the action performs at ``size``."""
        return APPENDS if long_text else {"read": READS, "append": APPENDS}.get(self.unit, size)

    def prepare(self, factory: AssemblerFactory, workload: Workload) -> Action:
        """The action on ``factory``'s assemblers; a stream's ends with every message final."""
        if self.unit == "read":
            return _reads(factory, workload, self.final)
        if self.unit == "append":
            return self.long_text(factory, workload)
        per, feed = self.per_message, self.feed  # SIZE / per messages, each's deltas in a row
        ids = self._ids(-(-workload.size // per) if per else self.messages)

        def run() -> list[str]:
            assembler = factory()
            order = (i for i in ids for _ in range(per)) if per else cycle(ids)
            feed(assembler, workload, order, dict.fromkeys(ids, 0))
            texts = (assembler.apply({"id": message_id, "final": True}) for message_id in ids)
            return [text for text in texts if text is not None]

        return run

    def long_text(self, factory: AssemblerFactory, workload: Workload) -> Action:
        """``APPENDS`` events fed as the stream does to messages holding the text (one delta)."""
        assembler, ids, small = factory(), self._ids(self.messages), make_workload(APPENDS)
        share = len(workload.source) // self.messages
        for message_id in ids:
            assembler.apply({"id": message_id, "delta": workload.source[:share]})
        offsets, feed = dict.fromkeys(ids, share), self.feed

        def run() -> list[str]:
            feed(assembler, small, cycle(ids), offsets)
            return []

        return run

    @staticmethod
    def _ids(count: int) -> list[str]:
        return [f"m{index}" for index in range(count)] if count > 1 else ["m"]


#: Every scenario by name, in the order reports show them.
SCENARIOS: dict[str, Scenario] = {
    scenario.name: scenario
    for scenario in (
        Scenario("stream_then_finalize", "apply every delta of one message, then final "
                 "(STREAM-LINEAR)", "event"),
        Scenario("read_each_delta_keep", "get() after every delta, caller keeps the snapshot "
                 "until the next one", "event", _read_each(keep=True)),
        Scenario("read_each_delta_drop", "get() after every delta, caller drops it at once",
                 "event", _read_each(keep=False)),
        Scenario("reread_unchanged", f"{READS} get() calls on an open message with no new "
                 "delta", "read"),
        Scenario("get_after_final", f"{READS} get() calls on a finalized message (CACHE-FINAL)",
                 "read", final=True),
        Scenario("interleaved", f"deltas spread round-robin over {MESSAGES} open messages, then "
                 "all finalized", "event", messages=MESSAGES),
        Scenario("message_after_message", f"SIZE/{DELTAS_PER_MESSAGE} messages one after "
                 f"another, {DELTAS_PER_MESSAGE} deltas then final each (a lookup that scans the "
                 "messages, or the finalized ids, is quadratic)", "event", _one_after_another,
                 per_message=DELTAS_PER_MESSAGE),
        Scenario("append_to_long", f"{APPENDS} appends to an open message of SIZE characters "
                 "(STREAM-LINEAR: an append that grows with the text makes a stream quadratic)",
                 "append"),
        Scenario("read_since_each_delta", "read_since(offset) after every delta, offset "
                 "advanced (INC-LINEAR)", "event", _read_since_each, needs_read_since=True),
    )
}  # fmt: skip
