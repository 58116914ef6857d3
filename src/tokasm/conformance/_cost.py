"""The cost probe (CACHE-FINAL): does a read after final re-join the message's parts?

No corpus case can see a cost, so this probe measures one, through the same
``Subject.perform`` and steps as every case, in process and over the protocol
alike. It finalizes two messages with the same text: ``short`` from one
delta and ``long`` from ``PARTS`` deltas (mostly empty, one character in
``TEXT_EVERY``). Returning the text costs the same for both (over the
protocol it is serialized), so their per-read costs differ only by what the
target does per part: a cached target reads both alike (ratio near 1), an
uncached one re-joins ``PARTS`` parts on every read.

The machine may be loaded, and load only ever adds time. Reads are timed in
batches, short and long interleaved, the minimum of ``ROUNDS`` kept for each
(``tokasm.bench._measure``); a ratio above ``LIMIT`` is measured again, and
the probe fails only if every one of ``ATTEMPTS`` measurements exceeds it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._clocks import Clocks
from ..bench._measure import interleaved_min
from ..errors import ImplementationError, SubjectFault
from ._display import show
from .results import CaseResult
from .steps import Apply, Get

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..bench.scenarios import Action
    from .results import Outcome
    from .steps import Step
    from .subjects import Subject

__all__ = [
    "ATTEMPTS",
    "CACHE_FINAL",
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

#: Deltas of the long message, sent pipelined over the protocol (well under a
#: second); an uncached read of 30k parts costs about twice a cached one even
#: over the protocol, round trip included (ratio 2 for Python, 4 for Node, measured
#: under load); in process it costs a few hundred times a cached read.
PARTS = 30_000
#: One delta in this many carries a character, the others are empty: the
#: texts stay short (cheap to send), the parts many (costly to re-join).
TEXT_EVERY = 10
#: A long read costing more than this many short reads is re-joining parts;
#: a cached target measures 0.95 to 1.05, on a loaded machine too.
LIMIT = 1.4
#: Measurements that must all exceed ``LIMIT`` before the probe fails.
ATTEMPTS = 3
#: Interleaved rounds per measurement, and seconds of back-to-back reads per timing:
#: short enough that most timings fit in one scheduler time slice on a busy machine.
ROUNDS = 25
BATCH = 0.0005
#: Seconds the target may take to receive the long message; a slower one skips the probe.
BUILD_BUDGET = 60.0

_INSTANCE = "cost"
_DESCRIPTION = (
    f"reads after final cost the same for a text of 1 part and of {PARTS} parts (CACHE-FINAL)"
)


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


def _expect(subject: Subject, step: Get | Apply, text: str) -> None:
    actual = subject.perform(step)
    if not (isinstance(actual, str) and str.__eq__(actual, text)):
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
    read is timed against which (an id is ``m`` and 8 random hex digits); ``newest`` is
    finalized last and never read."""

    short: str
    long: str
    newest: str

    @classmethod
    def drawn(cls) -> _Ids:
        return cls(*(f"m{secrets.token_hex(4)}" for _ in range(3)))


def _build(subject: Subject, parts: int, ids: _Ids) -> str:
    """Finalize the long and the short message on a fresh instance, then a third one, so
    that neither timed message is the newest (a correct target may keep a fast path for
    the message finalized last); return their text."""
    subject.new(_INSTANCE)
    deltas = ["x" if index % TEXT_EVERY == 0 else "" for index in range(parts)]
    text = "".join(deltas)
    # Two steps, each sent many times (a step is frozen, and its event is lent as a copy):
    # building 30,000 of them cost a tenth of the probe.
    steps = {d: Apply(_INSTANCE, None, {"id": ids.long, "delta": d}) for d in dict.fromkeys(deltas)}
    applies = [steps[delta] for delta in deltas]
    _performed(subject, applies, Clocks.monotonic() + BUILD_BUDGET)
    _expect(subject, Apply(_INSTANCE, None, {"id": ids.long, "final": True}), text)
    _expect(subject, Apply(_INSTANCE, None, {"id": ids.short, "delta": text, "final": True}), text)
    _expect(subject, Apply(_INSTANCE, None, {"id": ids.newest, "delta": "z", "final": True}), "z")
    return text


def _read(subject: Subject, message_id: str) -> Action:
    """One ``get``, a round trip over the protocol. Not pipelined: sent ahead, reads would
    overlap with the kit's own work on their answers, and a testee's re-join could hide
    behind it (a ratio near 1 for an uncached testee on a busy machine)."""
    step = Get(_INSTANCE, None, message_id)

    def read() -> list[str]:
        subject.perform(step)  # the answer was checked once; a timed read never touches it
        return []

    return read


def _measure(subject: Subject, ids: _Ids) -> Timing:
    reads = {message_id: _read(subject, message_id) for message_id in (ids.short, ids.long)}
    best = interleaved_min(reads, ROUNDS, BATCH)
    return Timing(best[ids.short], best[ids.long])


def _micro(seconds: float) -> str:
    return f"{seconds * 1e6:.3g} µs"


def _message(verdict: Verdict, parts: int) -> str:
    best = verdict.best
    costs = f"1 part {_micro(best.short)}, {parts} parts {_micro(best.long)} per get"
    ratios = ", ".join(f"{timing.ratio:.1f}" for timing in verdict.timings)
    return (
        f"reads after final grow with the message length: {costs}\n"
        f"ratio {best.ratio:.1f} (limit {LIMIT:g}; {len(verdict.timings)} interleaved "
        f"measurements of {ROUNDS} rounds, all above: {ratios}; fastest read of each)\n"
        "the completed text must be cached at finalization, not re-joined on every read"
    )


def probe_result(outcome: Outcome, message: str) -> CaseResult:
    """The probe's result, named and described as a case (for a hang, too)."""
    return CaseResult(PROBE_ID, _DESCRIPTION, outcome, message, (CACHE_FINAL,))


def probe_cache_final(subject: Subject, parts: int = PARTS) -> CaseResult:
    """Run the probe on ``subject``: a case-like result for CACHE-FINAL."""

    try:
        ids = _Ids.drawn()
        text = _build(subject, parts, ids)
        # A first read of each, checked: a target that caches at its first read passes too.
        _expect(subject, Get(_INSTANCE, None, ids.long), text)
        _expect(subject, Get(_INSTANCE, None, ids.short), text)
        verdict = judge(lambda: _measure(subject, ids))
    except _NotMeasurable as unmeasurable:
        return probe_result(unmeasurable.outcome, unmeasurable.message)
    except SubjectFault as fault:
        return probe_result("errored", f"testee fault during the cost probe: {fault}")
    except ImplementationError as error:
        return probe_result("errored", f"raised during the cost probe: {error}")
    if not verdict.grows:
        return probe_result("passed", "")  # a passed case has no message (spec/report.schema.json)
    return probe_result("failed", _message(verdict, parts))
