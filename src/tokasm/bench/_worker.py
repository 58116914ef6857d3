"""``python -m tokasm.bench._worker SPEC``: measure one target, a JSON line per step.

It defends nothing: ``_sweep`` gives every line a deadline and kills it on a hang or death.
Lines: ``hello``; per scenario and size ``starting``, ``seconds``+``setup`` per batch,
``memory`` [peak, text bytes, seconds], ``skip``+``reason``; ``error``; ``done``.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from tokasm._display import error_text
from tokasm.bench._measure import format_seconds, peak_memory, predict_seconds, time_action
from tokasm.bench.scenarios import SCENARIOS
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
#: A size is started only if this many batches of it fit the time left.
MIN_BATCHES = 3


def base_size(sizes: list[int]) -> int:
    """Where a per-operation scenario is measured first: the fixed cost its growth is from."""
    return max(1, min(sizes) // 4)


def measure(
    factory: AssemblerFactory, spec: dict[str, Any], clock: Callable[[], float]
) -> Iterator[Line]:
    """Every scenario of ``spec`` on ``factory``, timed with ``clock``, as lines."""
    try:
        read_since = READ_SINCE in features_of(factory())
    except (Exception, SystemExit) as error:
        yield {"error": f"calling it raised {error_text(error)}"}
        return
    yield {"hello": {"read_since": read_since}}
    started = time.perf_counter()
    names: list[str] = spec["scenarios"]
    for index, name in enumerate(names):
        scenario = SCENARIOS[name]
        if scenario.needs_read_since and not read_since:
            continue
        share = None
        if spec["seconds"] is not None:
            left = spec["seconds"] - (time.perf_counter() - started)
            share = 2 * left / (len(names) - index + 1)  # up to twice an equal share
        try:
            yield from _climb(scenario, factory, spec, share, clock)
        except (Exception, SystemExit) as error:  # a target's sys.exit is its error
            yield {"scenario": name, "error": error_text(error)}
        yield {"scenario": name, "done": True}


def _climb(
    scenario: Scenario,
    factory: AssemblerFactory,
    spec: dict[str, Any],
    share: float | None,
    clock: Callable[[], float],
) -> Iterator[Line]:
    """One batch per size ascending, each predicted first; then rounds over every size (a
    slow spell of a shared machine lands on one round of each, which the minimum discards)."""
    budget, repeats, name = spec["budget"], spec["repeats"], scenario.name
    started = time.perf_counter()
    asked = scenario.sizes(spec["sizes"])
    actions: list[tuple[int, Action, float]] = []
    costs: list[float] = []
    for size in [base_size(asked), *asked] if scenario.per_operation else asked:
        steepest = 1.5 if scenario.per_operation else math.inf  # a fixed count of operations
        predicted = predict_seconds([n for n, _, _ in actions], costs, size, steepest)
        left = math.inf if share is None else share - (time.perf_counter() - started)
        if predicted > budget or predicted * min(repeats, MIN_BATCHES) > left:
            yield _skip(scenario, size, predicted, left, spec)
            break
        yield {"scenario": name, "size": size, "starting": "time"}
        workload = scenario.workload(size)
        start = time.perf_counter()
        action = scenario.prepare(factory, workload)
        setup = time.perf_counter() - start
        seconds = time_action(action, spec["batch"], clock)
        yield {"scenario": name, "size": size, "seconds": seconds, "setup": setup}
        actions.append((size, action, setup))
        costs.append(setup + seconds)
        if spec["memory"] and scenario.traced and TRACE_FACTOR * costs[-1] <= budget:
            yield {"scenario": name, "size": size, "starting": "memory"}
            peak = peak_memory(scenario, factory, workload)
            memory = [peak.peak_bytes, peak.text_bytes, peak.seconds]
            yield {"scenario": name, "size": size, "memory": memory}
    for _ in range(repeats - 1):
        for size, action, setup in actions:
            if share is not None and time.perf_counter() - started > share:
                return  # fewer batches for the sizes left: "min of 2 to 5"
            yield {"scenario": name, "size": size, "starting": "time"}
            seconds = time_action(action, spec["batch"], clock)
            yield {"scenario": name, "size": size, "seconds": seconds, "setup": setup}


def _skip(
    scenario: Scenario, size: int, predicted: float, left: float, spec: dict[str, Any]
) -> Line:
    budget, batches = spec["budget"], min(spec["repeats"], MIN_BATCHES)
    if predicted > budget:
        limit = "budget"
        why = f"predicted {format_seconds(predicted)} per run with its set-up, budget {budget:g} s"
    else:
        limit = "max-time"
        why = (
            f"predicted {format_seconds(predicted * batches)} for {batches} batches, "
            f"{max(left, 0.0):.3g} s left of this scenario's share of --max-time"
        )
    reason = f"over --{limit}: {why}"
    return {"scenario": scenario.name, "size": size, "skip": limit, "reason": reason}


def main() -> int:
    """Measure the target of the JSON spec ``sys.argv[1]``; lines on a private copy of fd 1."""
    spec = json.loads(sys.argv[1])
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")  # before the target runs any code
    os.dup2(2, 1)  # what the target prints goes to stderr
    sys.stdout = sys.stderr
    try:
        factory = resolve_target(spec["target"])
    except TargetError as error:
        channel.write(json.dumps({"error": str(error), "loading": True}) + "\n")
        return 2
    for line in measure(factory, spec, time.thread_time):
        channel.write(json.dumps(line) + "\n")
        channel.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
