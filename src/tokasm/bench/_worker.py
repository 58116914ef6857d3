"""The measuring side of ``tokasm bench``: climb the sizes of each scenario on one assembler.

``python -m tokasm.bench._worker SPEC`` imports the target named in the JSON
``SPEC``, measures it, and writes one JSON object per line on a private
channel (a copy of fd 1; fd 1 itself then goes to stderr, for whatever the
target prints). It defends nothing: the parent (``_sweep``) gives every line a
deadline and kills the worker's process group if it hangs or dies. The same
``measure`` runs in process for protocol testees and ``--in-process``.

Lines: ``{"hello": {"read_since": bool}}`` first; then per scenario, per size,
``{"scenario", "size", "seconds", "setup"}`` for each timed batch, maybe
``{"scenario", "size", "memory": [peak, text bytes, seconds]}``,
``{"scenario", "size", "skip": limit, "reason"}`` where the climb stops,
``{"scenario", "error"}`` if the target raised; ``{"scenario", "done": true}``.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from tokasm._display import error_text
from tokasm.bench._fit import predict_seconds
from tokasm.bench._measure import peak_memory, time_action
from tokasm.bench._units import format_seconds
from tokasm.bench.scenarios import SCENARIOS
from tokasm.corpus.steps import READ_SINCE, features_of
from tokasm.errors import TargetError
from tokasm.run.subjects import resolve_target

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tokasm.bench.scenarios import Action, Scenario
    from tokasm.implementations import AssemblerFactory

__all__ = ["TRACE_FACTOR", "base_size", "main", "measure"]

Line = dict[str, Any]

#: A traced run is predicted at this many untraced ones (tracemalloc costs per allocation).
TRACE_FACTOR = 5.0
#: A size is started only if this many batches of it fit the time left (the later rounds
#: stop when it runs out: "min of 3 to 7").
MIN_BATCHES = 3


def base_size(sizes: list[int]) -> int:
    """Where a per-operation scenario is measured first, below the sizes asked for: the
    fixed cost that its growth is reckoned from (``_fit``)."""
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
    """The sizes ascending, one batch each, each predicted from the smaller ones before it
    starts; then the other rounds, every size in turn in each (so that a slow spell of a
    shared machine lands on one round of every size, which the minimum discards)."""
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
    budget, repeats = spec["budget"], spec["repeats"]
    if predicted > budget:
        limit = "budget"
        reason = (
            f"predicted {format_seconds(predicted)} per run with its set-up, budget {budget:g} s"
        )
    else:
        limit = "max-time"
        reason = (
            f"predicted {format_seconds(predicted * min(repeats, MIN_BATCHES))} for "
            f"{min(repeats, MIN_BATCHES)} batches, "
            f"{max(left, 0.0):.3g} s left of this scenario's share of --max-time"
        )
    reason = f"over --{limit}: {reason}"
    return {"scenario": scenario.name, "size": size, "skip": limit, "reason": reason}


def _private_channel() -> Any:
    """A copy of fd 1 for the lines; fd 1 (and ``sys.stdout``) then write to stderr."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


def main() -> int:
    """Measure ``sys.argv[1]`` (a JSON spec with a ``target``), lines on the channel."""
    spec = json.loads(sys.argv[1])
    channel = _private_channel()  # before the target's module runs any code
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
