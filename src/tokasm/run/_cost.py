"""The cost probe (CACHE-FINAL): does a read after final re-join the message's parts?

No corpus case can see a cost, so this probe measures one, through the same
``Subject.perform`` and steps as every case, in process and over the protocol
alike. It finalizes two *long* messages of ``PARTS`` deltas, one by a bare
final and one by a final that carries the last delta, and two *short* ones
of the same text in a few parts, shaped the same way (so no fast path for a
message that arrives whole is taken for growth), then ``AFTER`` messages
never read (so a faster form for the newest texts favours neither side).
Reads are timed three ways (``_WAYS``): each long message against the short
one shaped like it (a cache set on one finalization path only is seen), and
the two read in turn (a cache of the last text read misses each time) with
an apply to another, open, message before each read (a cache that any write
empties misses each time). A cached target reads long and short alike (ratio
near 1); an uncached one re-joins all those parts on every long read.

Every message has the same text: returning it costs the same for all (over
the protocol it is serialized), so only work per part differs. In process,
where a read costs the kit under a microsecond, the short messages have a
tenth of the long ones' parts, not two: a correct target that keeps long
messages in another form (an object with a lock of its own) reads both kinds
the same way, and the text is long, as returning it costs nothing there.

The machine may be loaded, and load only ever adds time. Reads are timed in
batches, short and long interleaved, the minimum of ``ROUNDS`` kept for each
(``tokasm.bench._measure``); a ratio above the limit is measured again, and
the probe fails only if every one of ``ATTEMPTS`` measurements exceeds it.
"""

from __future__ import annotations

import functools
import gc
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tokasm._clocks import Clocks
from tokasm._display import show
from tokasm.bench._measure import interleaved_min
from tokasm.corpus.steps import Apply, Get
from tokasm.errors import ImplementationError, SubjectFault
from tokasm.run.results import CaseResult
from tokasm.run.subjects import PythonSubject

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from tokasm.bench.scenarios import Action
    from tokasm.corpus.steps import Step
    from tokasm.run.results import Outcome
    from tokasm.run.subjects import Subject

__all__ = [
    "AFTER",
    "ATTEMPTS",
    "CACHE_FINAL",
    "IN_PROCESS_DELTA",
    "IN_PROCESS_LIMIT",
    "IN_PROCESS_PARTS",
    "IN_PROCESS_SHORT_PARTS",
    "LIMIT",
    "PARTS",
    "PROBE_ID",
    "PROBE_IDS",
    "Timing",
    "Verdict",
    "judge",
    "probe_cache_final",
    "probe_result",
]

#: The probe's case id (what --xfail, -k, JUnit and JSON name it by) and its rule.
PROBE_ID = "cost.cache-final"
CACHE_FINAL = "CACHE-FINAL"
#: Every check of ``tokasm check`` that is not a corpus case.
PROBE_IDS: tuple[str, ...] = (PROBE_ID,)

#: Deltas of each long message over the protocol, sent pipelined (well under a
#: second): an uncached read of 30k parts costs about twice a cached one even
#: over the protocol, round trip included (ratio 2 for Python, 4 for Node, measured
#: under load). The short messages have two.
PARTS = 30_000
#: Over the protocol one delta in this many carries a character, the others are empty:
#: the texts stay short (cheap to send), the parts many (costly to re-join).
TEXT_EVERY = 10
#: In process: the long messages' deltas, each ``IN_PROCESS_DELTA`` (a text of 100,000
#: characters, as returning a text costs nothing there whatever its length), and the
#: short ones' parts, a tenth as many, of the same text.
IN_PROCESS_PARTS = 10_000
IN_PROCESS_DELTA = "0123456789"
IN_PROCESS_SHORT_PARTS = IN_PROCESS_PARTS // 10
#: A long read costing more than this many short reads is re-joining parts;
#: a cached target measures 0.95 to 1.05, on a loaded machine too.
LIMIT = 1.4
#: The same in process, where an uncached read of 10k parts costs several times one of
#: 1k, and a cached target measures 1 unless it keeps the newest or the smallest texts
#: in a faster form than the probe can avoid.
IN_PROCESS_LIMIT = 3.0
#: Messages finalized after the timed ones and never read: a target may keep its newest
#: finalized texts in a faster form, and the timed messages are older than that.
AFTER = 20
#: Measurements that must all exceed the limit before the probe fails.
ATTEMPTS = 3
#: Interleaved rounds per measurement, and seconds of back-to-back reads per timing:
#: short enough that most timings fit in one scheduler time slice on a busy machine.
ROUNDS = 25
BATCH = 0.0005
#: Seconds the target may take to receive the long messages; a slower one skips the probe.
BUILD_BUDGET = 60.0

_INSTANCE = "cost"
_DESCRIPTION = "reads after final cost the same for a text of few parts and of many (CACHE-FINAL)"


@dataclass(frozen=True)
class Timing:
    """Seconds per ``get`` of the one-part and the many-part message, from one measurement."""

    short: float
    long: float

    @property
    def ratio(self) -> float:
        return self.long / self.short if self.short > 0 else float("inf")


@dataclass(frozen=True)
class Verdict:
    """Whether reads grow with the parts, and every measurement that decided it."""

    grows: bool
    timings: tuple[Timing, ...]

    @property
    def best(self) -> Timing:
        """The best estimate: the minimum of each side over every measurement (noise only
        adds time, so the fastest read seen of each is the closest to its true cost)."""
        return Timing(
            min(timing.short for timing in self.timings),
            min(timing.long for timing in self.timings),
        )


def judge(measure: Callable[[], Timing], limit: float = LIMIT, attempts: int = ATTEMPTS) -> Verdict:
    """Measure until one ratio is within ``limit`` (pass) or ``attempts`` all exceed it (fail).

    When every measurement exceeds the limit, so does the ratio of the pooled
    minima (``Verdict.best``): the fastest long read is over ``limit`` times
    some short read, hence over ``limit`` times the fastest one."""
    timings: list[Timing] = []
    while len(timings) < attempts:
        timings.append(measure())
        if timings[-1].ratio <= limit:
            return Verdict(False, tuple(timings))
    return Verdict(True, tuple(timings))


class _NotMeasurable(Exception):
    """The probe could not measure: the outcome and why."""

    def __init__(self, outcome: Outcome, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.message = message


def _expect(subject: Subject, step: Get | Apply, text: str | None) -> None:
    """Perform ``step``, which must return ``text`` (None for a non-final apply)."""
    actual = subject.perform(step)
    if text is None:
        if actual is not None:
            raise _NotMeasurable(
                "failed",
                f"not measured, because a non-final apply returned {show(actual)}, not None "
                f"(NONFINAL-NONE): {step.describe()}",
            )
    elif not (isinstance(actual, str) and str.__eq__(actual, text)):
        raise _NotMeasurable(
            "failed",
            f"not measured, because the text is wrong (APPEND, GET-TEXT): {step.describe()} "
            f"returned {show(actual)}, expected a text of {len(text)} characters",
        )


def _performed(subject: Subject, steps: Sequence[Step], deadline: float) -> None:
    """Perform ``steps`` (pipelined over the protocol), raising what the target raised."""
    for done, outcome in enumerate(subject.perform_steps(steps), 1):
        if isinstance(outcome, ImplementationError):
            raise outcome
        if done % 1000 == 0 and Clocks.monotonic() > deadline:
            raise _NotMeasurable(
                "skipped",
                f"the target took over {BUILD_BUDGET:g} s to apply {done} events; "
                f"the cost probe needs {len(steps)}",
            )


@dataclass(frozen=True)
class _Ids:
    """The messages' ids, new for each probe, so that no target can tell by the id which
    read is timed against which (an id is ``m`` and 8 random hex digits). ``stream`` stays
    open, written to between timed reads; ``after`` are finalized last and never read."""

    long_bare: str
    long_joined: str
    short_bare: str
    short_joined: str
    stream: str
    after: tuple[str, ...]

    @classmethod
    def drawn(cls) -> _Ids:
        long_bare, long_joined, short_bare, short_joined, stream, *after = (
            f"m{secrets.token_hex(4)}" for _ in range(5 + AFTER)
        )
        return cls(long_bare, long_joined, short_bare, short_joined, stream, tuple(after))

    @property
    def long(self) -> tuple[str, str]:
        return (self.long_bare, self.long_joined)

    @property
    def short(self) -> tuple[str, str]:
        return (self.short_bare, self.short_joined)


def _apply(message_id: str, delta: str | None = None, *, final: bool = False) -> Apply:
    event: dict[str, object] = {"id": message_id}
    if delta is not None:
        event["delta"] = delta
    if final:
        event["final"] = True
    return Apply(_INSTANCE, None, event)


@dataclass(frozen=True)
class _Plan:
    """The deltas of the long and of the short messages (the same text), and the limit."""

    long: tuple[str, ...]
    short: tuple[str, ...]
    limit: float

    @classmethod
    def made(cls, parts: int, in_process: bool) -> _Plan:
        if in_process:
            long = (IN_PROCESS_DELTA,) * parts
            short_parts = max(2, parts * IN_PROCESS_SHORT_PARTS // IN_PROCESS_PARTS)
            limit = IN_PROCESS_LIMIT
        else:
            long = tuple("x" if index % TEXT_EVERY == 0 else "" for index in range(parts))
            short_parts, limit = 2, LIMIT
        text = "".join(long)
        size = -(-len(text) // short_parts)
        return cls(long, tuple(text[at : at + size] for at in range(0, len(text), size)), limit)

    @property
    def text(self) -> str:
        return "".join(self.long)


def _performed_all(subject: Subject, message_id: str, deltas: Sequence[str]) -> None:
    """Apply ``deltas`` to ``message_id``, pipelined: few distinct steps, each sent many
    times (a step is frozen, and its event is lent as a copy): building 30,000 of them
    cost a tenth of the probe."""
    steps = {delta: _apply(message_id, delta) for delta in dict.fromkeys(deltas)}
    _performed(subject, [steps[delta] for delta in deltas], Clocks.monotonic() + BUILD_BUDGET)


def _build(subject: Subject, plan: _Plan, ids: _Ids) -> None:
    """On a fresh instance: each long message and the short one shaped like it, one
    finalized by a bare final and one by a final carrying its last delta, finalized in
    turn, long then short (a target may treat a message by its age); an open message;
    then ``AFTER`` messages finalized last, so that no timed message is among the newest
    (a correct target may keep a fast path for those)."""
    subject.new(_INSTANCE)
    text, kinds = plan.text, ((plan.long, *ids.long), (plan.short, *ids.short))
    for deltas, bare, joined in kinds:
        _performed_all(subject, bare, deltas)
        _performed_all(subject, joined, deltas[:-1])
    for _, bare, _ in kinds:
        _expect(subject, _apply(bare, final=True), text)
    for deltas, _, joined in kinds:
        _expect(subject, _apply(joined, deltas[-1], final=True), text)
    _expect(subject, _apply(ids.stream, "s"), None)
    for message_id in ids.after:
        _expect(subject, _apply(message_id, "z", final=True), "z")


def _reads(subject: Subject, message_ids: Sequence[str], write_to: str | None) -> Action:
    """Reads of ``message_ids`` in turn, each a round trip over the protocol (not
    pipelined: sent ahead, reads would overlap with the kit's own work on their answers,
    and a testee's re-join could hide behind it). With ``write_to``, each read goes with an
    empty delta to that open message before it, the two sent together (one round trip:
    a round trip of the write's own would hide a re-join). The answers were checked once;
    a timed read never touches them."""
    reads = [Get(_INSTANCE, None, message_id) for message_id in message_ids]
    if isinstance(subject, PythonSubject):  # a write costs no round trip here
        perform_unread = subject.perform_unread  # a str subclass's text is not copied
        steps = (
            reads
            if write_to is None
            else [step for read in reads for step in (_apply(write_to, ""), read)]
        )

        def read_in_process() -> list[str]:
            for step in steps:
                perform_unread(step)
            return []

        return read_in_process
    perform, perform_steps = subject.perform, subject.perform_steps
    if write_to is None:

        def read() -> list[str]:
            for step in reads:
                perform(step)
            return []

        return read
    pairs = [(_apply(write_to, ""), read) for read in reads]

    def read_among_writes() -> list[str]:
        for pair in pairs:  # sent together: one round trip
            for _ in perform_steps(pair):
                pass
        return []

    return read_among_writes


@dataclass(frozen=True)
class _Way:
    """One way of timing reads: of which messages, and what a failure says it shows."""

    shows: str
    short: Callable[[_Ids], tuple[str, ...]]
    long: Callable[[_Ids], tuple[str, ...]]
    #: An empty delta to the open message before each read.
    writes: bool = False


#: Each way must pass. Each finalization path is read on its own (over the protocol a
#: target caching on one path only would measure 1.5 in pairs, too near the limit).
_WAYS = (
    _Way("", lambda ids: (ids.short_bare,), lambda ids: (ids.long_bare,)),
    _Way(
        " when its final carried its last delta",
        lambda ids: (ids.short_joined,),
        lambda ids: (ids.long_joined,),
    ),
    _Way(
        " when two messages are read in turn, another one written before each read (a cache "
        "of the last text read, or one that any write empties, is no cache)",
        lambda ids: ids.short,
        lambda ids: ids.long,
        writes=True,
    ),
)


def _measure(subject: Subject, ids: _Ids, way: _Way) -> Timing:
    """Seconds per read of a short and of a long message, the way ``way`` reads them."""
    write_to = ids.stream if way.writes else None
    short, long = way.short(ids), way.long(ids)
    reads = {"short": _reads(subject, short, write_to), "long": _reads(subject, long, write_to)}
    best = interleaved_min(reads, ROUNDS, BATCH, collect=False)  # collected once, after building
    return Timing(best["short"] / len(short), best["long"] / len(long))


def _micro(seconds: float) -> str:
    return f"{seconds * 1e6:.3g} µs"


def _message(verdict: Verdict, plan: _Plan, way: _Way) -> str:
    best = verdict.best
    sizes = (
        f"{len(plan.short)} parts {_micro(best.short)}, {len(plan.long)} parts {_micro(best.long)}"
    )
    limit = plan.limit
    ratios = ", ".join(f"{timing.ratio:.1f}" for timing in verdict.timings)
    return (
        f"reads after final grow with the message length{way.shows}: {sizes} per get\n"
        f"ratio {best.ratio:.1f} (limit {limit:g}; {len(verdict.timings)} interleaved "
        f"measurements of {ROUNDS} rounds, all above: {ratios}; fastest read of each)\n"
        "the completed text must be cached at finalization, not re-joined on every read"
    )


def probe_result(outcome: Outcome, message: str) -> CaseResult:
    """The probe's result, named and described as a case (for a hang, too)."""
    return CaseResult(PROBE_ID, _DESCRIPTION, outcome, message, (CACHE_FINAL,))


def probe_cache_final(subject: Subject, parts: int | None = None) -> CaseResult:
    """Run the probe on ``subject``: a case-like result for CACHE-FINAL. ``parts``: of each
    long message (default ``IN_PROCESS_PARTS`` in process, else ``PARTS``). The limit is
    ``IN_PROCESS_LIMIT`` in process, else ``LIMIT``."""
    in_process = isinstance(subject, PythonSubject)
    if parts is None:
        parts = IN_PROCESS_PARTS if in_process else PARTS
    try:
        ids, plan = _Ids.drawn(), _Plan.made(parts, in_process)
        _build(subject, plan, ids)
        # A first read of each, checked: a target that caches at its first read passes too.
        text = plan.text
        for message_id in (*ids.long, *ids.short):
            _expect(subject, Get(_INSTANCE, None, message_id), text)
        gc.collect()  # the building's garbage, once for every way (the timing turns it off)
        for way in _WAYS:
            verdict = judge(functools.partial(_measure, subject, ids, way), plan.limit)
            if verdict.grows:
                return probe_result("failed", _message(verdict, plan, way))
    except _NotMeasurable as unmeasurable:
        return probe_result(unmeasurable.outcome, unmeasurable.message)
    except SubjectFault as fault:
        return probe_result("errored", f"testee fault during the cost probe: {fault}")
    except ImplementationError as error:
        return probe_result("errored", f"raised during the cost probe: {error}")
    return probe_result("passed", "")  # a passed case has no message (spec/report.schema.json)
