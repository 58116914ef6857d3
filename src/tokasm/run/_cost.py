"""The cost probes: a read after final re-joins nothing (CACHE-FINAL), an append copies nothing.

No corpus case can see a cost, so these probes time ``Target.perform``, in process and over
the protocol alike (docs/cost.md). Each ratio is a minimum of interleaved rounds; a probe
fails only if all ``ATTEMPTS`` measurements exceed its limit (load only adds time).
"""

from __future__ import annotations

import gc
import random
import uuid
from dataclasses import dataclass
from itertools import product
from typing import TYPE_CHECKING, cast

from tokasm import _clocks
from tokasm._display import show
from tokasm.corpus.steps import Apply, Get
from tokasm.errors import ImplementationError, TargetFault
from tokasm.run.results import CaseResult
from tokasm.run.targets import PythonTarget, Worker

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from tokasm.corpus.steps import Step
    from tokasm.run.results import Outcome
    from tokasm.run.targets import Target

__all__ = ["ATTEMPTS", "PROBE_IDS", "PROBE_STEPS", "Timing", "judge", "probe_named", "run_probe"]

#: The probes' case ids (what --xfail, -k, JUnit and JSON name them by) and their rules.
PROBE_ID, CACHE_FINAL = "cost.cache-final", "CACHE-FINAL"
STREAM_PROBE_ID, STREAM_LINEAR = "cost.stream-linear", "STREAM-LINEAR"
_PROBES = {  # each probe's rule and description
    PROBE_ID: (CACHE_FINAL, "a read after final joins and decodes nothing: it costs at most "
               "about a copy of the text (CACHE-FINAL)"),
    STREAM_PROBE_ID: (STREAM_LINEAR, "an append costs the same whatever the length of the "
                      "message's text (STREAM-LINEAR)"),
}  # fmt: skip
#: Every check of ``tokasm check`` that is not a corpus case.
PROBE_IDS: tuple[str, ...] = tuple(_PROBES)


@dataclass(frozen=True)
class _Route:
    """Traffic and limits of one route (see ``PROBE_STEPS``): ``chars`` per part, the long
    read's ``limit`` against its reference, an append's ``stream_limit``, minima of ``rounds``."""

    in_process: bool
    long: int
    parts: tuple[int, int]
    chars: tuple[float, float]
    fillers: int
    filler_chars: tuple[int, int]
    limit: float
    stream_limit: float
    stream_deltas: int
    rounds: int


#: In process a join of 2500 to 3500 parts costs 5 to 25 copies of their text, a decode 10
#: to 70; a cached read costs under one (measured with two CPU burners on 2 cores).
IN_PROCESS = _Route(True, 4, (2500, 3500), (1, 40), 1100, (10, 3000), 3.0, 4.0, 200, 15)
#: Over the protocol a read is a round trip (about 60 µs) of a text serialized each time;
#: a re-join of 16000 to 20000 parts doubles it.
OVER_PROTOCOL = _Route(False, 2, (16000, 20000), (0.3, 0.6), 150, (10, 600), 1.4, 1.6, 200, 40)
#: Characters of the long text STREAM-LINEAR appends to (a copy costs more than a round trip).
STREAM_CHARS = 2_000_000
_POOL = 300_000  # characters of the text every text of the probe is cut from
#: Measurements that must all exceed the limit before a probe fails (or finds growth).
ATTEMPTS = 3
#: Seconds the target may take to receive the probe's messages; a slower one skips it.
BUILD_BUDGET = 60.0
_FINE_STEP = 1e-4  # seconds: a CPU clock that moves in larger steps ticks (a read: 1 µs)
_INSTANCE = "cost"
#: What texts are made of, as the corpus's (so that decoding costs many copies).
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
    "  3  rounds of: a delta to an open message, a new message streamed and finalized bare,\n"
    "     one finalized whole, a get of the open one and of every short one (untimed); then\n"
    "     two timed gets in a row of each long message and of its reference (in process plus\n"
    "     a copy of the long text), interleaved; fails if a long get, first or second, costs\n"
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
        shortest = min(t.short for t in self.timings)
        return Timing(shortest, min(t.long for t in self.timings), self.timings[-1].about)


def judge(measure: Callable[[], Timing], limit: float) -> Verdict:
    """Measure until one ratio is within ``limit`` or ``ATTEMPTS`` all exceed it."""
    timings: list[Timing] = []
    while len(timings) < ATTEMPTS and (not timings or timings[-1].ratio > limit):
        timings.append(measure())
    if any(timing.short <= 0 for timing in timings):
        raise _NotMeasured("the clock did not move (a target that stopped it?)")
    return Verdict(timings[-1].ratio > limit, tuple(timings))


class _NotMeasured(Exception):
    """The target answered wrong or too slowly: the probe is skipped (the cases say why)."""


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
        self.rng = random.Random(random.SystemRandom().getrandbits(64))
        self._used: set[str] = set()
        self._pool = "".join(self.rng.choices(_UNITS, k=_POOL // 3))

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
        start = self.rng.randrange(len(self._pool) - chars)
        return self._pool[start : start + chars]

    def deltas(self, parts: int, chars: int) -> list[str]:
        """A text of ``chars`` characters cut at random into ``parts`` (some empty)."""
        text = self.text(chars)
        cuts = sorted(self.rng.choices(range(1, chars), k=parts - 1))
        return [text[a:b] for a, b in zip([0, *cuts], [*cuts, chars], strict=True)]


def _apply(message_id: str, delta: str | None = None, *, final: bool = False) -> Apply:
    event: dict[str, object] = {"id": message_id}
    event |= {} if delta is None else {"delta": delta}
    return Apply(_INSTANCE, None, event | {"final": True} if final else event, flat=True)


def _performed(target: Target, steps: Sequence[tuple[Step, str | None]]) -> None:
    """Perform ``steps`` pipelined; each must return its expected answer."""
    deadline = _clocks.monotonic() + BUILD_BUDGET
    outcomes = target.perform_steps([step for step, _ in steps])
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
    traffic: _Traffic, messages: dict[str, list[str]], bare: dict[str, bool]
) -> list[tuple[Step, str | None]]:
    """The deltas interleaved at random, each message finalized bare or with its last delta
    (as ``bare`` says, else at random), with the expected answers."""
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


def _built(target: Target, route: _Route) -> tuple[_Traffic, list[_Pair], list[str], str]:
    """Stream the messages into a fresh instance, read each once (a cache at the first read
    passes), checked: traffic, pairs, fillers and an open message."""
    traffic = _Traffic()
    rng = traffic.rng
    messages: dict[str, list[str]] = {}
    pairs = []
    low, high = route.chars
    for index, shape in enumerate(traffic.shapes(route.long)):
        long, parts = traffic.id(shape), rng.randint(*route.parts)
        # The longest text and the shortest: a cache kept for short or long texts only misses.
        each = (high, low)[index] if index < 2 else rng.uniform(low, high)
        deltas = messages[long] = traffic.deltas(parts, int(parts * each))
        text = "".join(deltas)
        # In process a short text; over the protocol the same text in two parts.
        twin = traffic.text(rng.randint(20, 200)) if route.in_process else text
        cut = rng.randint(1, len(twin) - 1) if len(twin) > 1 else 1
        reference = traffic.id()
        messages[reference] = [twin[:cut], twin[cut:]]
        pairs.append(_Pair(long, reference, text, len(deltas)))
    # Half the fillers are streamed after the rest: every timed message is old.
    later: dict[str, list[str]] = {}
    for index in range(route.fillers):
        key, chars = traffic.id(), rng.randint(*route.filler_chars)
        (messages if index % 2 else later)[key] = traffic.deltas(rng.randint(1, 3), chars)
    fillers = [*messages.keys() - {key for p in pairs for key in (p.long, p.reference)}, *later]
    target.new(_INSTANCE)
    opened = traffic.id()
    steps = [  # long messages finalized either way in turn
        *_streamed(traffic, messages, {p.long: i % 2 == 0 for i, p in enumerate(pairs)}),
        *_streamed(traffic, later, {}),
        (_apply(opened, traffic.text(5)), None),
    ]
    messages.update(later)
    reads = [(Get(_INSTANCE, None, key), "".join(deltas)) for key, deltas in messages.items()]
    rng.shuffle(reads)
    _performed(target, [*steps, *reads])
    return traffic, pairs, fillers, opened


def _fine(clock: Callable[[], float]) -> bool:
    """Whether ``clock`` moves in steps under ``_FINE_STEP``: a process's CPU clock ticks (1 to
    16 ms) on Windows, and on Linux while a CPU-time limit or timer is set (``ulimit -t``)."""
    start = clock()
    for _ in range(1_000_000):  # a clock stopped by the target never moves
        if (now := clock()) != start:
            return now - start < _FINE_STEP
    return False


def _timer(target: Target) -> Callable[[Step, str | None], float]:
    """Seconds of one unpipelined step, in process plus a copy of ``copy`` and in CPU time
    (which the scheduler does not move) where that clock does not tick, else wall time."""
    clock, perform = _clocks.perf_counter, cast("Callable[[Step], object]", target.perform)
    if isinstance(target, PythonTarget):
        clock = _clocks.process_time if _fine(_clocks.process_time) else clock
        perform = target.perform_raw

    def timed(step: Step, copy: str | None) -> float:
        start = clock()
        perform(step)
        if copy is not None:
            _Copy(copy)
        return clock() - start

    return timed


def _measure_reads(target: Target, route: _Route) -> Callable[[], Timing]:
    """One measurement: rounds of untimed traffic, each then two reads of every long message
    and its reference in a random order; the Timing of the worst. In process each measurement
    after the first streams fresh messages: a state of the process (where a text lies in
    memory) can slow one text's copies for a whole measurement of a correct target."""
    fresh: tuple[_Traffic, list[_Pair], list[str], str] | None = _built(target, route)
    timed = _timer(target)

    def measure() -> Timing:
        nonlocal fresh
        traffic, pairs, fillers, opened = fresh or _built(target, route)
        fresh = None if route.in_process else fresh
        rng = traffic.rng
        # Two reads in a row, each its own minimum: a cache that drops every other misses.
        best = dict.fromkeys(product(pairs, (0, 1), (0, 1)), float("inf"))
        for _ in range(route.rounds):
            rng.shuffle(fillers)
            between = [
                _apply(opened, traffic.text(rng.randint(1, 8))),
                _apply(new := traffic.id(), traffic.text(rng.randint(1, 8))),
                _apply(new, final=True),
                _apply(traffic.id(), traffic.text(rng.randint(1, 40)), final=True),
                *(Get(_INSTANCE, None, key) for key in (opened, *fillers)),
            ]
            for outcome in target.perform_steps(between):
                if isinstance(outcome, ImplementationError):
                    raise outcome
            if route.in_process:  # untimed; what only a reference cycle kept is freed, as
                gc.collect(0)  # in a program (all the probe made is young: gc is off)
            rng.shuffle(pairs)
            for pair in pairs:
                copy = pair.text if route.in_process else None
                reads = [(1, pair.long, None), (0, pair.reference, copy)]
                for side, key, copied in reads if rng.random() < 0.5 else reads[::-1]:
                    for nth in (0, 1):
                        seconds = timed(Get(_INSTANCE, None, key), copied)
                        best[pair, side, nth] = min(best[pair, side, nth], seconds)
        about = {p: f"{p.parts} parts, {len(p.text)} characters" for p in pairs}
        timings = [Timing(best[p, 0, n], best[p, 1, n], about[p]) for p in pairs for n in (0, 1)]
        return max(timings, key=lambda timing: timing.ratio)

    return measure


def _figure(verdict: Verdict, what: str, against: str, limit: float) -> str:
    """What a report shows: the pooled minima of a growth, else the passing measurement."""
    best = verdict.best if verdict.grows else verdict.timings[-1]
    return (
        f"{what.format(about=best.about)}{best.ratio:.1f}x {against} ({best.long * 1e6:.3g} µs "
        f"against {best.short * 1e6:.3g} µs; limit {limit:g})"
    )


def probe_named(probe_id: str, outcome: Outcome, message: str = "", note: str = "") -> CaseResult:
    """The result of the probe ``probe_id`` (one of ``PROBE_IDS``), named as a case."""
    rule, description = _PROBES[probe_id]
    return CaseResult(probe_id, description, outcome, message, (rule,), note=note)


def run_probe(probe_id: str, target: Target, *, strict: bool = False) -> CaseResult:
    """A pass carries its figure in ``note``; ``strict``: a STREAM-LINEAR finding fails."""
    if isinstance(target, Worker):  # timed in the worker's process
        return target.probe(probe_id, strict=strict)
    route = IN_PROCESS if isinstance(target, PythonTarget) else OVER_PROTOCOL
    # The garbage collector off: a collection would stall a timed read, and one over the
    # probe's many messages (none in a cycle) costs a run more than the probe itself.
    gc.disable()
    try:
        probe = _cache_final if probe_id == PROBE_ID else _stream_linear
        grows, figure, failure = probe(target, route)
    except _NotMeasured as why:
        return probe_named(probe_id, "skipped", f"not measured: {why}")
    except TargetFault as fault:
        return probe_named(probe_id, "errored", f"testee fault during the cost probe: {fault}")
    except ImplementationError as error:
        return probe_named(probe_id, "errored", f"raised during the cost probe: {error}")
    finally:
        gc.enable()
    if grows and (strict or probe_id == PROBE_ID):
        return probe_named(probe_id, "failed", failure)
    return probe_named(probe_id, "passed", note=failure if grows else figure)  # a finding passes


def probe_cache_final(target: Target) -> CaseResult:
    return run_probe(PROBE_ID, target)


def probe_stream_linear(target: Target, *, strict: bool = False) -> CaseResult:
    return run_probe(STREAM_PROBE_ID, target, strict=strict)


def _cache_final(target: Target, route: _Route) -> tuple[bool, str, str]:
    """Whether reads after final grow, the figure, and the failure's message."""
    verdict = judge(_measure_reads(target, route), route.limit)
    against = (
        "a short text's read and a copy of the text"
        if route.in_process
        else "a read of the same text in 2 parts"
    )
    figure = _figure(verdict, "a read after final of {about} costs ", against, route.limit)
    ratios = ", ".join(f"{timing.ratio:.1f}" for timing in verdict.timings)
    failure = (
        f"reads after final grow with the message: {figure}\n"
        f"{len(verdict.timings)} measurements of {route.rounds} rounds, all above: {ratios}; "
        "fastest read of each\nthe completed text must be cached at finalization, not joined "
        "or decoded again at every read"
    )
    return verdict.grows, figure, failure


def _stream_linear(target: Target, route: _Route) -> tuple[bool, str, str]:
    """Appends of two characters to a short and to a long text, in turn, each timed."""
    traffic = _Traffic()
    short, long = traffic.id(), traffic.id()
    # A character past Latin-1: each character is two bytes, a copy twice as long.
    block = traffic.text(STREAM_CHARS // route.stream_deltas - 1) + "€"
    target.new(_INSTANCE)
    _performed(
        target,
        [(_apply(short, "x"), None), *((_apply(long, block), None),) * route.stream_deltas],
    )
    timed = _timer(target)
    steps = {key: _apply(key, "ab") for key in (short, long)}

    def measure() -> Timing:
        best = {short: float("inf"), long: float("inf")}
        for _ in range(route.rounds):
            for key in (short, long):
                best[key] = min(best[key], timed(steps[key], None))
        return Timing(best[short], best[long], f"{STREAM_CHARS} characters")

    verdict = judge(measure, route.stream_limit)
    appended = "ab" * (len(verdict.timings) * route.rounds)
    _performed(
        target,
        [
            (_apply(short, final=True), "x" + appended),
            (_apply(long, final=True), block * route.stream_deltas + appended),
        ],
    )
    what = f"an append to a text of {len(block) * route.stream_deltas} characters costs "
    figure = _figure(verdict, what, "one to a short text", route.stream_limit)
    finding = (
        f"appends grow with the length of the message's text: {figure}; applying n "
        "events should cost O(n) (a copy of the whole text per delta is quadratic)"
    )
    return verdict.grows, figure, finding
