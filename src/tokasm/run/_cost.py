"""The cost probes: a read after final re-joins nothing (CACHE-FINAL), an append copies nothing.

No corpus case can see a cost, so these probes measure one through ``Target.perform``,
in process and over the protocol alike; the design is in docs/cost.md. Each ratio is
a minimum of interleaved rounds, measured again when above its limit: a probe fails
only if all ``ATTEMPTS`` measurements exceed it (load only adds time).
"""

from __future__ import annotations

import gc
import random
import secrets
import sys
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tokasm import _clocks
from tokasm._display import show
from tokasm.corpus.steps import Apply, Get
from tokasm.errors import ImplementationError, TargetFault
from tokasm.run.results import CaseResult
from tokasm.run.targets import PythonTarget

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from tokasm.corpus.steps import Step
    from tokasm.run.results import Outcome
    from tokasm.run.targets import Target

__all__ = ["ATTEMPTS", "PROBE_IDS", "PROBE_STEPS", "Timing", "judge", "probe_named", "run_probe"]

#: The probes' case ids (what --xfail, -k, JUnit and JSON name them by) and their rules.
PROBE_ID = "cost.cache-final"
CACHE_FINAL = "CACHE-FINAL"
STREAM_PROBE_ID = "cost.stream-linear"
STREAM_LINEAR = "STREAM-LINEAR"
#: Every check of ``tokasm check`` that is not a corpus case.
PROBE_IDS: tuple[str, ...] = (PROBE_ID, STREAM_PROBE_ID)


@dataclass(frozen=True)
class _Route:
    """How much traffic, and what limit, for one route (in process or over the protocol)."""

    long: int  # long messages
    parts: tuple[int, int]  # parts of each long message, drawn in this range
    chars: tuple[float, float]  # characters per part of a long message (some deltas empty)
    fillers: int  # short finalized messages, all read between rounds
    filler_chars: tuple[int, int]
    limit: float  # of a long read against its reference
    stream_limit: float  # of an append to a long text against one to a short text
    stream_deltas: int  # deltas building the long text of STREAM_CHARS
    rounds: int  # timed reads (or appends) of each message per measurement; the minimum is kept


#: In process a join of 2500 to 3500 parts costs 5 to 25 copies of their text, a decode 10
#: to 70; a cached read costs under one (measured with two CPU burners on 2 cores).
IN_PROCESS = _Route(4, (2500, 3500), (5, 40), 1100, (10, 3000), 3.0, 4.0, 200, 15)
#: Over the protocol a read is a round trip (about 60 µs) of a text serialized each time;
#: a re-join of 16000 to 20000 parts doubles it.
OVER_PROTOCOL = _Route(2, (16000, 20000), (0.3, 0.6), 150, (10, 600), 1.4, 1.6, 200, 40)
#: Characters of the long text the STREAM-LINEAR probe appends to (a copy costs more
#: than a round trip).
STREAM_CHARS = 2_000_000
#: Characters of the text every text of the probe is cut from.
_POOL = 300_000
#: Measurements that must all exceed the limit before a probe fails (or finds growth).
ATTEMPTS = 3
#: Seconds the target may take to receive the probe's messages; a slower one skips it.
BUILD_BUDGET = 60.0

_INSTANCE = "cost"
_DESCRIPTION = (
    "a read after final joins and decodes nothing: it costs at most about a copy of the text "
    "(CACHE-FINAL)"
)
_STREAM_DESCRIPTION = (
    "an append costs the same whatever the length of the message's text (STREAM-LINEAR)"
)
#: What texts are made of: words, spaces, punctuation, accented letters, CJK and emoji,
#: as the corpus's texts (so that decoding a text costs many times copying it).
_UNITS = (
    "the", " ", "token", "s", ", ", ".", "\n", "42", "é", "ñ", "über", "ça", "Ünïcode", "à",
    "°", "½", "ß", "data", "-", "¿", "ø",
)  # fmt: skip

PROBE_STEPS = (
    f"cost probes (not corpus cases; docs/cost.md), profile required:\n"
    f"{PROBE_ID} [{CACHE_FINAL}]\n"
    f"  1  stream, interleaved, messages drawn anew per run, ids of the corpus's shapes: "
    f"{IN_PROCESS.fillers}\n     short ones ({OVER_PROTOCOL.fillers} over the protocol), "
    f"{IN_PROCESS.long} long ones of {IN_PROCESS.parts[0]} to {IN_PROCESS.parts[1]} parts "
    f"({OVER_PROTOCOL.long} of {OVER_PROTOCOL.parts[0]} to\n     {OVER_PROTOCOL.parts[1]}), "
    "and a reference for each (a short text; over the protocol the same\n     text in 2 "
    "parts); finalized in a random order, by bare finals and by finals with a delta\n"
    "  2  get each once: each must return its text (else the probe is skipped)\n"
    "  3  rounds of: a delta to an open message, a new message finalized, a get of every\n"
    "     short one (untimed); then one timed get of each long message and of its reference\n"
    "     (in process plus a copy of the long text), interleaved; fails if a long get costs\n"
    f"     over {OVER_PROTOCOL.limit:g}x its reference ({IN_PROCESS.limit:g}x in process), "
    f"minimum of {OVER_PROTOCOL.rounds} rounds ({IN_PROCESS.rounds} in\n     process), in "
    f"{ATTEMPTS} measurements out of {ATTEMPTS}\n"
    f"{STREAM_PROBE_ID} [{STREAM_LINEAR}] (a finding; it fails only when asked)\n"
    f"  1  stream a message to {STREAM_CHARS} characters, and another to one\n"
    "  2  time appends of two characters to each, interleaved, minimum of rounds; finds\n"
    f"     growth if one to the long text costs over {OVER_PROTOCOL.stream_limit:g}x one to "
    f"the short ({IN_PROCESS.stream_limit:g}x in\n     process), in {ATTEMPTS} measurements "
    f"out of {ATTEMPTS}"
)


@dataclass(frozen=True)
class Timing:
    """Seconds of a timed operation (``long``) and of its reference (``short``)."""

    short: float
    long: float
    about: str = ""

    @property
    def ratio(self) -> float:
        return self.long / self.short if self.short > 0 else float("inf")


@dataclass(frozen=True)
class Verdict:
    """Whether the cost grows, and every measurement that decided it."""

    grows: bool
    timings: tuple[Timing, ...]

    @property
    def best(self) -> Timing:
        """The minimum of each side over every measurement (noise only adds time)."""
        return Timing(
            min(timing.short for timing in self.timings),
            min(timing.long for timing in self.timings),
            self.timings[-1].about,
        )


def judge(measure: Callable[[], Timing], limit: float, attempts: int = ATTEMPTS) -> Verdict:
    """Measure until one ratio is within ``limit`` (no growth) or ``attempts`` all exceed it
    (then so does ``Verdict.best``'s)."""
    timings: list[Timing] = []
    while len(timings) < attempts:
        timings.append(measure())
        if timings[-1].ratio <= limit:
            return Verdict(False, tuple(timings))
    return Verdict(True, tuple(timings))


class _NotMeasured(Exception):
    """The target gave a wrong answer: the probe cannot measure it (the cases say why)."""


def _clock(in_process: bool) -> Callable[[], float]:
    """In process CPU time, which the scheduler does not move (not on Windows: 15 ms ticks);
    over the protocol the wall clock, the work being in another process."""
    return _clocks.process_time if in_process and sys.platform != "win32" else _clocks.perf_counter


class _Copy(str):
    """The kit's copy of a text, in process: what a target copying at each read pays."""

    __slots__ = ()


class _Traffic:
    """Ids and texts of ordinary shape, drawn from one seed per run."""

    _SHAPES: tuple[Callable[[random.Random, int], str], ...] = (
        lambda rng, n: f"m{n}",
        lambda rng, n: f"msg-{n}",
        lambda rng, n: f"{chr(97 + n % 26)}{n // 26}",
        lambda rng, n: f"chatcmpl-{rng.getrandbits(64):016x}",
        lambda rng, n: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        lambda rng, n: f"call_{rng.getrandbits(96):024x}",
    )

    def __init__(self) -> None:
        self.rng = random.Random(secrets.randbits(64))
        self._used: set[str] = set()
        self._pool = "".join(self.rng.choices(_UNITS, k=_POOL // 3))  # texts are cut from it

    def id(self, shape: int | None = None) -> str:
        """A new id, of the given shape (index into ``_SHAPES``) or of a random one."""
        while True:
            make = self.rng.choice(self._SHAPES) if shape is None else self._SHAPES[shape]
            made = make(self.rng, len(self._used))
            if made not in self._used:
                self._used.add(made)
                return made

    def shapes(self, count: int) -> list[int]:
        """``count`` id shapes, short and long in turn: a cache kept by id shape misses some."""
        rng, half = self.rng, len(self._SHAPES) // 2
        short, long = rng.sample(range(half), half), rng.sample(range(half, 2 * half), half)
        order = [shape for pair in zip(short, long, strict=True) for shape in pair]
        return [order[index % len(order)] for index in range(count)]

    def text(self, chars: int) -> str:
        """A text of ``chars`` characters (at most ``_POOL // 2``)."""
        start = self.rng.randrange(len(self._pool) - chars)
        return self._pool[start : start + chars]

    def deltas(self, parts: int, chars: int) -> list[str]:
        """A text of ``chars`` characters cut at random into ``parts`` (some empty)."""
        text = self.text(chars)
        cuts = sorted(self.rng.choices(range(1, chars), k=parts - 1))
        return [text[a:b] for a, b in zip([0, *cuts], [*cuts, chars], strict=True)]


def _apply(message_id: str, delta: str | None = None, *, final: bool = False) -> Apply:
    event: dict[str, object] = {"id": message_id}
    if delta is not None:
        event["delta"] = delta
    if final:
        event["final"] = True
    return Apply(_INSTANCE, None, event)


def _get(message_id: str) -> Get:
    return Get(_INSTANCE, None, message_id)


def _performed(subject: Target, steps: Sequence[tuple[Step, str | None]]) -> None:
    """Perform ``steps`` pipelined; each must return its expected answer."""
    deadline = _clocks.monotonic() + BUILD_BUDGET
    outcomes = subject.perform_steps([step for step, _ in steps])
    for done, (outcome, (step, want)) in enumerate(zip(outcomes, steps, strict=True), 1):
        if isinstance(outcome, ImplementationError):
            raise outcome
        if outcome != want:
            said = f"a text of {len(want)} characters" if isinstance(want, str) else "None"
            raise _NotMeasured(
                f"the target answered wrong: {step.describe()[:80]} returned "
                f"{show(outcome)[:80]}, not {said}"
            )
        if done % 1000 == 0 and _clocks.monotonic() > deadline:
            raise _NotMeasured(
                f"the target took over {BUILD_BUDGET:g} s to apply {done} events; "
                f"the cost probe needs {len(steps)}"
            )


def _streamed(
    traffic: _Traffic, messages: dict[str, list[str]], bare: Mapping[str, bool]
) -> list[tuple[Step, str | None]]:
    """The messages' deltas interleaved at random, each finalized after its last delta by a
    bare final or by a final carrying that delta (as ``bare`` says, else at random):
    (step, expected answer) pairs."""
    rng = traffic.rng
    owners = [key for key, deltas in messages.items() for _ in deltas]
    rng.shuffle(owners)
    sent = dict.fromkeys(messages, 0)
    steps: list[tuple[Step, str | None]] = []
    for key in owners:
        deltas = messages[key]
        index = sent[key] = sent[key] + 1
        if index < len(deltas):
            steps.append((_apply(key, deltas[index - 1]), None))
        elif not bare.get(key, rng.random() < 0.5):
            steps.append((_apply(key, deltas[-1], final=True), "".join(deltas)))
        else:
            steps += [(_apply(key, deltas[-1]), None), (_apply(key, final=True), "".join(deltas))]
    return steps


@dataclass(frozen=True)
class _Pair:
    """A long message, its reference, the long one's text and number of parts."""

    long: str
    reference: str
    text: str
    parts: int


@dataclass
class _Probe:
    """The CACHE-FINAL probe's messages, once streamed into the target."""

    traffic: _Traffic
    pairs: list[_Pair]
    fillers: list[str]
    opened: str  # an open message, written to between rounds

    @classmethod
    def built(cls, subject: Target, route: _Route, in_process: bool) -> _Probe:
        """Stream the probe's messages into a fresh instance, and read each once, checked
        (a target that caches at its first read passes)."""
        traffic = _Traffic()
        rng = traffic.rng
        messages: dict[str, list[str]] = {}
        pairs = []
        for shape in traffic.shapes(route.long):
            long, parts = traffic.id(shape), rng.randint(*route.parts)
            chars = int(parts * rng.uniform(*route.chars))
            deltas = messages[long] = traffic.deltas(parts, chars)
            text = "".join(deltas)
            # In process a short text; over the protocol the same text in two parts.
            twin = traffic.text(rng.randint(20, 200)) if in_process else text
            cut = rng.randint(1, len(twin) - 1) if len(twin) > 1 else 1
            reference = traffic.id()
            messages[reference] = [twin[:cut], twin[cut:]]
            pairs.append(_Pair(long, reference, text, len(deltas)))
        # Half the fillers are streamed after the rest: every timed message is old.
        later: dict[str, list[str]] = {}
        for index in range(route.fillers):
            key = traffic.id()
            chars = rng.randint(*route.filler_chars)
            (messages if index % 2 else later)[key] = traffic.deltas(rng.randint(1, 3), chars)
        fillers = [*messages.keys() - {key for p in pairs for key in (p.long, p.reference)}, *later]
        subject.new(_INSTANCE)
        opened = traffic.id()
        steps = [
            # Long messages are finalized either way in turn.
            *_streamed(traffic, messages, {p.long: i % 2 == 0 for i, p in enumerate(pairs)}),
            *_streamed(traffic, later, {}),
            (_apply(opened, traffic.text(5)), None),
        ]
        messages.update(later)
        reads: list[tuple[Step, str | None]] = [
            (_get(key), "".join(deltas)) for key, deltas in messages.items()
        ]
        rng.shuffle(reads)
        _performed(subject, [*steps, *reads])
        return cls(traffic, pairs, fillers, opened)

    def between(self) -> list[Step]:
        """The untimed traffic before each round: a delta to the open message, a new
        message finalized, a read of every filler in a new order."""
        rng, traffic = self.traffic.rng, self.traffic
        rng.shuffle(self.fillers)
        return [
            _apply(self.opened, traffic.text(rng.randint(1, 8))),
            _apply(traffic.id(), traffic.text(rng.randint(1, 40)), final=True),
            *(_get(key) for key in self.fillers),
        ]


def _timer(subject: Target, in_process: bool) -> Callable[[Step, str | None], float]:
    """Seconds of one unpipelined step (in process its answer dropped as it is), plus in
    process the kit's copy of ``copy``."""
    clock = _clock(in_process)
    perform = subject.perform_unread if isinstance(subject, PythonTarget) else subject.perform

    def timed(step: Step, copy: str | None) -> float:
        start = clock()
        perform(step)
        if copy is not None:
            _Copy(copy)
        return clock() - start

    return timed


def _measure_reads(subject: Target, probe: _Probe, route: _Route, in_process: bool) -> Timing:
    """One measurement: ``route.rounds`` rounds of traffic, then a timed read of each long
    message and of its reference, in a random order; the Timing of the worst long message."""
    timed = _timer(subject, in_process)
    rng = probe.traffic.rng
    best = {(pair, side): float("inf") for pair in probe.pairs for side in (0, 1)}
    order = list(probe.pairs)
    for _ in range(route.rounds):
        for outcome in subject.perform_steps(probe.between()):
            if isinstance(outcome, ImplementationError):
                raise outcome
        rng.shuffle(order)
        for pair in order:
            copy = pair.text if in_process else None
            reads = [(1, pair.long, None), (0, pair.reference, copy)]
            for side, key, copied in reads if rng.random() < 0.5 else reads[::-1]:
                best[pair, side] = min(best[pair, side], timed(_get(key), copied))
    timings = [
        Timing(best[pair, 0], best[pair, 1], f"{pair.parts} parts, {len(pair.text)} characters")
        for pair in probe.pairs
    ]
    return max(timings, key=lambda timing: timing.ratio)


def _micro(seconds: float) -> str:
    return f"{seconds * 1e6:.3g} µs"


def _measured(measure: Callable[[], Timing], limit: float) -> tuple[Verdict, Timing]:
    """``judge``, the garbage collector off meanwhile; the verdict and the timing to show
    (the pooled minima of a growth, else the passing measurement)."""
    gc.collect()
    gc.disable()
    try:
        verdict = judge(measure, limit)
    finally:
        gc.enable()
    if any(timing.short <= 0 for timing in verdict.timings):
        raise _NotMeasured("the clock did not move (a target that stopped it?)")
    return verdict, verdict.best if verdict.grows else verdict.timings[-1]


def probe_named(probe_id: str, outcome: Outcome, message: str, note: str = "") -> CaseResult:
    """The result of the probe ``probe_id`` (one of ``PROBE_IDS``), named as a case."""
    if probe_id == PROBE_ID:
        return CaseResult(PROBE_ID, _DESCRIPTION, outcome, message, (CACHE_FINAL,), note=note)
    return CaseResult(
        STREAM_PROBE_ID, _STREAM_DESCRIPTION, outcome, message, (STREAM_LINEAR,), note=note
    )


def probe_result(outcome: Outcome, message: str, note: str = "") -> CaseResult:
    """The CACHE-FINAL probe's result."""
    return probe_named(PROBE_ID, outcome, message, note)


def run_probe(probe_id: str, subject: Target, *, strict: bool = False) -> CaseResult:
    """Run the probe ``probe_id`` on ``subject``: a case-like result, a pass carrying its
    figure in ``note``; a target answering wrong is not measured (skipped). ``strict``:
    a STREAM-LINEAR finding fails it (``--strict-cost``)."""
    in_process = isinstance(subject, PythonTarget)
    route = IN_PROCESS if in_process else OVER_PROTOCOL
    measure = _cache_final if probe_id == PROBE_ID else _stream_linear
    try:
        return measure(subject, route, in_process, strict)
    except _NotMeasured as why:
        return probe_named(probe_id, "skipped", f"not measured: {why}")
    except TargetFault as fault:
        return probe_named(probe_id, "errored", f"testee fault during the cost probe: {fault}")
    except ImplementationError as error:
        return probe_named(probe_id, "errored", f"raised during the cost probe: {error}")


def probe_cache_final(subject: Target) -> CaseResult:
    return run_probe(PROBE_ID, subject)


def probe_stream_linear(subject: Target, *, strict: bool = False) -> CaseResult:
    return run_probe(STREAM_PROBE_ID, subject, strict=strict)


def _cache_final(subject: Target, route: _Route, in_process: bool, strict: bool) -> CaseResult:
    probe = _Probe.built(subject, route, in_process)
    verdict, best = _measured(
        lambda: _measure_reads(subject, probe, route, in_process), route.limit
    )
    against = (
        "a short text's read and a copy of the text"
        if in_process
        else "a read of the same text in 2 parts"
    )
    figure = (
        f"a read after final of {best.about} costs {best.ratio:.1f}x {against} "
        f"({_micro(best.long)} against {_micro(best.short)}; limit {route.limit:g})"
    )
    if not verdict.grows:
        return probe_result("passed", "", note=figure)
    ratios = ", ".join(f"{timing.ratio:.1f}" for timing in verdict.timings)
    return probe_result(
        "failed",
        f"reads after final grow with the message: {figure}\n"
        f"{len(verdict.timings)} measurements of {route.rounds} rounds, all above: {ratios}; "
        "fastest read of each\n"
        "the completed text must be cached at finalization, not joined or decoded again "
        "at every read",
    )


def _stream_linear(subject: Target, route: _Route, in_process: bool, strict: bool) -> CaseResult:
    """Appends of two characters to a short and to a long text, in turn, each timed."""
    traffic = _Traffic()
    short, long = traffic.id(), traffic.id()
    # A character past Latin-1: each character is two bytes, a copy twice as long.
    block = traffic.text(STREAM_CHARS // route.stream_deltas - 1) + "€"
    subject.new(_INSTANCE)
    _performed(
        subject,
        [(_apply(short, "x"), None), *((_apply(long, block), None),) * route.stream_deltas],
    )
    timed = _timer(subject, in_process)
    steps = {key: _apply(key, "ab") for key in (short, long)}

    def measure() -> Timing:
        best = {short: float("inf"), long: float("inf")}
        for _ in range(route.rounds):
            for key in (short, long):
                best[key] = min(best[key], timed(steps[key], None))
        return Timing(best[short], best[long], f"{STREAM_CHARS} characters")

    verdict, best = _measured(measure, route.stream_limit)
    appended = "ab" * (len(verdict.timings) * route.rounds)
    _performed(
        subject,
        [
            (_apply(short, final=True), "x" + appended),
            (_apply(long, final=True), block * route.stream_deltas + appended),
        ],
    )
    figure = (
        f"an append to a text of {len(block) * route.stream_deltas} characters costs "
        f"{best.ratio:.1f}x one to a short text ({_micro(best.long)} against "
        f"{_micro(best.short)}; limit {route.stream_limit:g})"
    )
    if not verdict.grows:
        return probe_named(STREAM_PROBE_ID, "passed", "", note=figure)
    finding = (
        f"appends grow with the length of the message's text: {figure}; applying n "
        "events should cost O(n) (a copy of the whole text per delta is quadratic)"
    )
    if strict:
        return probe_named(STREAM_PROBE_ID, "failed", finding)
    return probe_named(STREAM_PROBE_ID, "passed", "", note=finding)
