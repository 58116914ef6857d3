"""``main()`` on TARGET BATCH: a target's side of a sweep, undefended (``_sweep`` kills it).

On a private copy of fd 1 it answers ``{"ok": ...}`` or ``{"error": ...}``: first whether
the target has ``read_since``, then each step line ``[op, scenario, size, text]``."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from tokasm import _clocks
from tokasm._display import error_text, safe_block
from tokasm.bench._measure import peak_memory, time_action
from tokasm.bench.scenarios import SCENARIOS, long_workload
from tokasm.corpus.steps import READ_SINCE, features_of
from tokasm.errors import TargetError, TargetFault, TokasmExit, TokasmInterrupt
from tokasm.protocol.testee import bound_memory, private_channel
from tokasm.run.targets import resolve_target

if TYPE_CHECKING:
    from collections.abc import Callable

    from tokasm.bench.scenarios import Action, Scenario
    from tokasm.implementations import AssemblerFactory

#: Batches on a long text: a run warms the caches up, the fastest of the other batches counts;
#: each of LONG_BATCH runs, or fewer if they take the sweep's batch time (a copy of the text).
LONG_RUNS, LONG_BATCH = 4, 8


class Raised(Exception):
    """The target raised (or exited) in a step: its scenario's error."""


def has_read_since(name: str | None, factory: AssemblerFactory) -> bool:
    """Whether ``factory``'s assemblers offer ``read_since``; TargetError if calling it raises."""
    try:
        return READ_SINCE in features_of(factory())
    except (TokasmExit, TokasmInterrupt):  # tokasm's own signal handlers, in process
        raise
    except BaseException as error:
        raise TargetError(f"target {name!r}: calling it raised {error_text(error)}") from None


class Bench:
    """The steps of a sweep on one target, timed with ``clock``; keeps the scenario's actions."""

    def __init__(self, factory: AssemblerFactory, clock: Callable[[], float], batch: float):
        self.factory, self.clock, self.batch = factory, clock, batch
        self.actions: dict[tuple[int, bool], Action] = {}  # a scenario's, until its drop

    def __call__(self, op: str, name: str, size: int, text: bool = False) -> Any:
        """Step ``op`` of scenario ``name`` at ``size``; Raised if the target raised in it."""
        try:
            return getattr(self, op)(SCENARIOS[name], size, text)
        except TargetFault as fault:  # a testee's, whole: what happened is in its middle
            raised = Raised(safe_block(fault))
        except (TokasmExit, TokasmInterrupt):
            raise
        except BaseException as error:  # a target's sys.exit or KeyboardInterrupt is its error
            raised = Raised(error_text(error))
        self.drop(SCENARIOS[name], size, text)  # the error ends the scenario (its frames gone)
        raise raised

    def prepare(self, scenario: Scenario, size: int, text: bool) -> list[float]:
        """The set-up's seconds and the first batch's."""
        start, make = _clocks.perf_counter(), scenario.long_text if text else scenario.prepare
        workload = long_workload(size) if text else scenario.workload(size)
        self.actions[size, text] = make(self.factory, workload)
        return [_clocks.perf_counter() - start, self.time(scenario, size, text)]

    def time(self, scenario: Scenario, size: int, text: bool) -> float:
        """Seconds per run of a batch; on a long text, of the fastest batch (a rare realloc that
        copies the text is left out even in a single round, a copy every 64 events is not)."""
        action = self.actions[size, text]
        if not (text or scenario.text_sizes):
            return time_action(action, self.batch, self.clock)
        time_action(action, 0.0, self.clock)
        return min(
            time_action(action, self.batch, self.clock, LONG_BATCH) for _ in range(LONG_RUNS - 1)
        )

    def drop(self, scenario: Scenario, size: int, text: bool) -> None:
        """The scenario's end: the assemblers it kept go, so what their finalizers do costs it."""
        self.actions = {}

    def memory(self, scenario: Scenario, size: int, text: bool) -> list[float]:
        peak = peak_memory(scenario, self.factory, scenario.workload(size))
        return [peak.peak_bytes, peak.text_bytes, peak.traced_seconds]


def main() -> int:
    """Load the target ``sys.argv[1]`` and answer steps until stdin ends."""
    target, batch = sys.argv[1], float(sys.argv[2])
    steps, channel = private_channel()  # before the target runs any code
    bound_memory()

    def send(line: dict[str, Any]) -> None:
        channel.write(json.dumps(line).encode() + b"\n")
        channel.flush()

    try:
        factory = resolve_target(target)
        send({"ok": has_read_since(target, factory)})
    except TargetError as error:
        send({"error": str(error)})
        return 2
    bench = Bench(factory, _clocks.thread_time, batch)  # the target may replace time's
    for step in steps:
        try:
            send({"ok": bench(*json.loads(step))})
        except Raised as error:
            send({"error": str(error)})
    return 0
