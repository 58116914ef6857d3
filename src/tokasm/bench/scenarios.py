"""The benchmark scenarios, defined once for ``benchmarks/`` and ``tokasm bench``.

A scenario makes an *action*: a repeatable zero-argument call doing the timed work and
returning the final texts (the yardstick of peak memory). SPEC.md cites the names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import cycle, pairwise, repeat
from typing import TYPE_CHECKING, TypeAlias, cast

from tokasm.bench.workload import Workload, make_workload

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tokasm.implementations import Assembler, AssemblerFactory, Event, IncrementalAssembler

__all__ = ["APPENDS", "LONG_TEXTS", "MESSAGES", "READS", "SCENARIOS", "Action", "Scenario"]

#: The timed work of one scenario run; returns the final texts.
Action: TypeAlias = Callable[[], list[str]]

#: Reads timed by the re-read scenarios, whatever the message size.
READS = 1000
#: Appends timed by ``append_to_long``, to texts of these lengths whatever the sizes asked
#: for: long enough that copying the text outweighs a fixed cost of 300us per event.
APPENDS = 50
LONG_TEXTS = (256_000, 1_000_000, 4_000_000, 16_000_000)
#: Messages open at once in the interleaved scenario.
MESSAGES = 64
_ID = "m"


@dataclass(frozen=True)
class Scenario:
    """One way of using an assembler, timed over a sweep of stream sizes."""

    name: str
    summary: str
    #: What one operation is, for the cost-per-operation column.
    unit: str
    prepare: Callable[[AssemblerFactory, Workload], Action]
    #: Only for assemblers that have ``read_since`` (the incremental profile).
    needs_read_since: bool = False
    #: Whether a traced run says anything (its final texts are the yardstick).
    traced: bool = True
    #: Sizes of its own (characters of text), instead of the sweep's (deltas).
    own_sizes: tuple[int, ...] = ()

    def sizes(self, asked: Sequence[int]) -> list[int]:
        return sorted(self.own_sizes or asked)

    def workload(self, size: int) -> Workload:
        """For ``own_sizes``, a text of ``size`` characters with a small workload's deltas."""
        if not self.own_sizes:
            return make_workload(size)
        small = make_workload(APPENDS)
        source = small.source * (size // len(small.source) + 1)
        return Workload(size, source[:size], small.bounds)

    def operations(self, size: int) -> int:
        """How many ``unit``s one run of the action performs at ``size`` deltas."""
        return {"read": READS, "append": min(APPENDS, size)}.get(self.unit, size)

    @property
    def per_operation(self) -> bool:
        """Whether a fixed count of operations is timed at every size, not a whole stream."""
        return self.unit != "event"


def _finalize(assembler: Assembler, message_id: str = _ID) -> list[str]:
    text = assembler.apply({"id": message_id, "final": True})
    return [] if text is None else [text]


def _streamed(factory: AssemblerFactory, workload: Workload) -> Assembler:
    assembler, source = factory(), workload.source
    apply = assembler.apply
    for start, end in pairwise(workload.bounds):
        apply({"id": _ID, "delta": source[start:end]})
    return assembler


def _stream_then_finalize(factory: AssemblerFactory, workload: Workload) -> Action:
    return lambda: _finalize(_streamed(factory, workload))


def _read_each_delta(keep: bool) -> Callable[[AssemblerFactory, Workload], Action]:
    """``get()`` after every delta; ``keep``: the caller holds it until the next read."""

    def prepare(factory: AssemblerFactory, workload: Workload) -> Action:
        def run() -> list[str]:
            assembler, source = factory(), workload.source
            apply, get = assembler.apply, assembler.get
            snapshot: str | None = None
            for start, end in pairwise(workload.bounds):
                apply({"id": _ID, "delta": source[start:end]})
                # `text = a.get(id)` in a UI loop keeps the previous snapshot while
                # the next delta arrives, so no backend can grow that string in place.
                snapshot = get(_ID)
                if not keep:
                    snapshot = None  # rendered, then dropped
            del snapshot
            return _finalize(assembler)

        return run

    return prepare


def _reads(final: bool) -> Callable[[AssemblerFactory, Workload], Action]:
    """``READS`` calls of ``get()`` on a message streamed in the set-up, finalized or open
    (then read once first: the first read may join, the timed ones are re-reads)."""

    def prepare(factory: AssemblerFactory, workload: Workload) -> Action:
        assembler = _streamed(factory, workload)
        texts = _finalize(assembler) if final else [text for text in [assembler.get(_ID)] if text]
        get = assembler.get

        def run() -> list[str]:
            for _ in repeat(None, READS):
                get(_ID)
            return texts

        return run

    return prepare


def _interleaved(factory: AssemblerFactory, workload: Workload) -> Action:
    ids = [f"{_ID}{index}" for index in range(MESSAGES)]

    def run() -> list[str]:
        assembler, source = factory(), workload.source
        apply = assembler.apply
        for message_id, (start, end) in zip(cycle(ids), pairwise(workload.bounds)):
            apply({"id": message_id, "delta": source[start:end]})
        return [text for message_id in ids for text in _finalize(assembler, message_id)]

    return run


def _append_to_long(factory: AssemblerFactory, workload: Workload) -> Action:
    """``APPENDS`` small deltas to a message already holding the text (fed in 4 large ones,
    fast even for a class that copies per delta, whose stream this shows is quadratic)."""
    assembler, source = factory(), workload.source
    quarter = len(source) // 4
    for start in range(0, 4 * quarter, quarter):
        assembler.apply({"id": _ID, "delta": source[start : start + quarter]})
    deltas: list[Event] = [
        {"id": _ID, "delta": source[a:b]} for a, b in pairwise(workload.bounds[: APPENDS + 1])
    ]

    def run() -> list[str]:
        for event in deltas:
            assembler.apply(event)
        return []

    return run


def _read_since_each_delta(factory: AssemblerFactory, workload: Workload) -> Action:
    def run() -> list[str]:
        assembler = cast("IncrementalAssembler", factory())
        source, offset = workload.source, 0
        for start, end in pairwise(workload.bounds):
            assembler.apply({"id": _ID, "delta": source[start:end]})
            new_text = assembler.read_since(_ID, offset)
            offset += 0 if new_text is None else len(new_text)
        return _finalize(assembler)

    return run


#: Every scenario by name, in the order reports show them.
SCENARIOS: dict[str, Scenario] = {
    scenario.name: scenario
    for scenario in (
        Scenario("stream_then_finalize", "apply every delta of one message, then final "
                 "(STREAM-LINEAR)", "event", _stream_then_finalize),
        Scenario("read_each_delta_keep", "get() after every delta, caller keeps the snapshot "
                 "until the next one", "event", _read_each_delta(keep=True)),
        Scenario("read_each_delta_drop", "get() after every delta, caller drops it at once",
                 "event", _read_each_delta(keep=False)),
        Scenario("reread_unchanged", f"{READS} get() calls on an open message with no new "
                 "delta", "read", _reads(final=False)),
        Scenario("get_after_final", f"{READS} get() calls on a finalized message (CACHE-FINAL)",
                 "read", _reads(final=True)),
        Scenario("interleaved", f"deltas spread round-robin over {MESSAGES} open messages, then "
                 "all finalized", "event", _interleaved),
        Scenario("append_to_long", f"{APPENDS} appends to an open message of SIZE characters "
                 "(STREAM-LINEAR: an append that grows with the text makes a stream quadratic)",
                 "append", _append_to_long, traced=False, own_sizes=LONG_TEXTS),
        Scenario("read_since_each_delta", "read_since(offset) after every delta, offset "
                 "advanced (INC-LINEAR)", "event", _read_since_each_delta, needs_read_since=True),
    )
}  # fmt: skip
