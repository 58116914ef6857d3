"""``python -m tokasm.bench._worker SPEC``: measure one target, a JSON line per step.

It defends nothing: ``_sweep`` gives every line a deadline and kills it on a hang or death.
Lines: ``hello`` (or ``error``: it does not load); per scenario and size ``starting``,
``seconds``+``setup`` per batch (``text``: on a long text), ``memory`` [peak, text bytes,
seconds], ``skip``+``reason``; ``error``; ``done``.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from tokasm._display import error_text
from tokasm.bench._measure import (
    INCONCLUSIVE,
    Point,
    format_seconds,
    peak_memory,
    predict_seconds,
    verdicts,
)
from tokasm.bench._measure import time_action as _time
from tokasm.bench.scenarios import SCENARIOS, long_workload
from tokasm.corpus.steps import READ_SINCE, features_of
from tokasm.errors import TargetError
from tokasm.run.targets import resolve_target

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tokasm.bench.scenarios import Action, Scenario
    from tokasm.implementations import AssemblerFactory

Line = dict[str, Any]

#: A traced run is predicted at this many untraced ones (tracemalloc costs per allocation).
TRACE_FACTOR = 5.0
#: Rounds a size must have time for, and rounds run whatever they cost (a median of 3).
MIN_ROUNDS = 3
#: Runs of a batch on a long text: one that warms the caches up, then those of which the
#: fastest counts.
LONG_RUNS = 4


def has_read_since(name: str | None, factory: AssemblerFactory) -> bool:
    """Whether ``factory``'s assemblers offer ``read_since``; TargetError if calling it raises."""
    try:
        return READ_SINCE in features_of(factory())
    except (Exception, SystemExit) as error:
        raise TargetError(f"target {name!r}: calling it raised {error_text(error)}") from None


def measure(
    factory: AssemblerFactory, spec: dict[str, Any], clock: Callable[[], float]
) -> Iterator[Line]:
    """Every scenario of ``spec`` on ``factory``, timed with ``clock``, as lines."""
    deadline = math.inf if spec["seconds"] is None else time.perf_counter() + spec["seconds"]
    for name in spec["scenarios"]:
        try:
            yield from _climb(SCENARIOS[name], factory, spec, deadline, clock)
        except (Exception, SystemExit) as error:  # a target's sys.exit is its error
            yield {"scenario": name, "error": error_text(error)}
        yield {"scenario": name, "done": True}


def _climb(
    scenario: Scenario,
    factory: AssemblerFactory,
    spec: dict[str, Any],
    deadline: float,
    clock: Callable[[], float],
) -> Iterator[Line]:
    """One batch per size ascending, each predicted first, over the sweep's sizes and then
    the long texts; then rounds over them all, at least ``MIN_ROUNDS`` and up to ``repeats``,
    until the verdict and the growth are the same at one error and at three (then two are
    well inside it), or the scenario has used its time."""
    budget, name = spec["budget"], scenario.name
    ladders = [
        (False, scenario.sizes(spec["sizes"], spec["texts"]), scenario.prepare, scenario.workload)
    ]
    if not scenario.per_operation:
        ladders.append((True, spec["texts"], scenario.long_text, long_workload))
    timed: dict[bool, list[tuple[Point, Action]]] = {}
    spent, rounds, one_run = 0.0, 1, {False: scenario.text_sizes, True: True}

    def batch(text: bool, point: Point, action: Action) -> Line:
        """Time one batch; on a long text, the fastest of three single runs after one that
        warms the caches up (which leaves out a rare step that copies the text, such as a
        realloc that cannot grow in place, even in a single round)."""
        seconds = _time(action, 0.0 if one_run[text] else spec["batch"], clock)
        if one_run[text]:
            seconds = min(_time(action, 0.0, clock) for _ in range(LONG_RUNS - 1))
        point.batches.append(seconds)
        return {"scenario": name, "size": point.size, "seconds": seconds,
                "setup": point.setup_seconds, "text": text}  # fmt: skip

    for text, sizes, prepare, workload in ladders:
        timed[text] = []
        steepest = 1.5 if text or scenario.per_operation else math.inf  # fixed count of ops
        for size in sizes:
            costs = [p.setup_seconds + p.batches[0] for p, _ in timed[text]]
            done = [p.size for p, _ in timed[text]]
            predicted = predict_seconds(done, costs, size, steepest)
            left, runs = deadline - time.perf_counter(), LONG_RUNS if one_run[text] else 1
            if runs * predicted > budget or MIN_ROUNDS * runs * predicted > left:
                batch_of = f", {runs} runs a batch" if runs > 1 else ""
                why = (
                    f"budget: predicted {format_seconds(predicted)} per run with its set-up"
                    f"{batch_of}, budget {budget:g} s"
                    if runs * predicted > budget
                    else f"max-time: predicted {format_seconds(predicted * runs * MIN_ROUNDS)} for "
                    f"{MIN_ROUNDS} batches, {max(left, 0.0):.3g} s left of --max-time"
                )
                if not text:  # a long text not timed only leaves the growth unknown
                    skip = {"skip": why.partition(":")[0], "reason": f"over --{why}"}
                    yield {"scenario": name, "size": size, **skip}
                break
            yield {"scenario": name, "size": size, "starting": "time", "text": text}
            start = time.perf_counter()
            action = prepare(factory, workload(size))
            point = Point(size, scenario.operations(size, text), [], time.perf_counter() - start)
            timed[text].append((point, action))
            yield batch(text, point, action)
        costs = [p.setup_seconds + p.batches[0] for p, _ in timed[text]]
        spent += sum(costs)
        traced = [
            p.size
            for (p, _), cost in zip(timed[text], costs, strict=True)
            if cost <= budget / 5 / TRACE_FACTOR
        ]
        if spec["memory"] and scenario.traced and traced and not text:
            yield {"scenario": name, "size": traced[-1], "starting": "memory"}
            peak = peak_memory(scenario, factory, scenario.workload(traced[-1]))
            memory = [peak.peak_bytes, peak.text_bytes, peak.seconds]
            yield {"scenario": name, "size": traced[-1], "memory": memory}
    while rounds < spec["repeats"] and time.perf_counter() < deadline:
        if rounds >= MIN_ROUNDS and (
            spent > budget * spec["repeats"] / 6 or _settled(scenario, timed)
        ):
            return
        rounds += 1
        for text, points in timed.items():
            for point, action in points:
                yield {"scenario": name, "size": point.size, "starting": "time", "text": text}
                yield batch(text, point, action)
                last = point.batches[-1]
                spent += LONG_RUNS * last if one_run[text] else max(last, spec["batch"])


def _settled(scenario: Scenario, timed: dict[bool, list[tuple[Point, Action]]]) -> bool:
    """The verdict, and the growth on long texts, are the same at one error and at three,
    and neither is in doubt."""
    points = {text: [point for point, _ in ladder] for text, ladder in timed.items()}
    (sweep, long), (sweep3, long3) = (
        verdicts(points[False], points.get(True), scenario.per_operation, z) for z in (1, 3)
    )
    pairs = [(sweep.verdict, sweep3.verdict)]
    pairs += [(long.verdict, long3.verdict)] if long and long3 else []
    return all(a == b and a != INCONCLUSIVE and "at least" not in a for a, b in pairs)


def main() -> int:
    """Measure the target of the JSON spec ``sys.argv[1]``; lines on a private copy of fd 1."""
    spec = json.loads(sys.argv[1])
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")  # before the target runs any code
    os.dup2(2, 1)  # what the target prints goes to stderr
    sys.stdout = sys.stderr

    def send(line: Line) -> None:
        channel.write(json.dumps(line) + "\n")
        channel.flush()

    try:
        factory = resolve_target(spec["target"])
        send({"hello": {"read_since": has_read_since(spec["target"], factory)}})
    except TargetError as error:
        send({"error": str(error)})
        return 2
    for line in measure(factory, spec, time.thread_time):
        send(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
