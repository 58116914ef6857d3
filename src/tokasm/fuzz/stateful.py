"""A Hypothesis state machine that drives any assembler beside the model, step by step,
checking every return value and, after every step, every message. In your own tests::

    from tokasm.fuzz.stateful import run_conformance_test

    def test_my_assembler_matches_the_model() -> None:
        run_conformance_test(MyAssembler)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import stateful as hs
from hypothesis import strategies as st

from tokasm.corpus.model import ModelAssembler
from tokasm.corpus.steps import Apply, Get, ReadSince
from tokasm.fuzz import INSTANCE_NAMES
from tokasm.fuzz._strategies import DELTAS, FINAL_CHOICES, MESSAGE_IDS, apply_step

if TYPE_CHECKING:
    from hypothesis import settings as Settings

    from tokasm.corpus.steps import Step
    from tokasm.implementations import Assembler, AssemblerFactory

__all__ = ["assembler_machine", "run_conformance_test"]  # what the old path re-exports

_NAMES = INSTANCE_NAMES[:2]  # two instances, so shared state shows (ASM-STATE)
_INSTANCES = st.sampled_from(_NAMES)
#: Well-formed events (APPEND-EMPTY: "" is sent, never dropped) and reads of any id (GET-UNKNOWN).
_STEPS = st.builds(
    apply_step,
    _INSTANCES,
    MESSAGE_IDS,
    st.none() | DELTAS,
    st.sampled_from(FINAL_CHOICES),
    st.just({}),
) | st.builds(Get, _INSTANCES, st.none(), MESSAGE_IDS)
_READS_SINCE = st.builds(ReadSince, _INSTANCES, st.none(), MESSAGE_IDS, st.integers(0, 12))


def assembler_machine(
    factory: AssemblerFactory, *, incremental: bool = False
) -> type[hs.RuleBasedStateMachine]:
    """A state machine class comparing ``factory``'s assemblers with the model;
    ``incremental``: it calls ``read_since`` too (the incremental profile)."""
    steps = _STEPS | _READS_SINCE if incremental else _STEPS

    class AssemblerMachine(hs.RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.real: dict[str, Assembler] = {name: factory() for name in _NAMES}
            self.model = {name: ModelAssembler() for name in _NAMES}
            self.named: dict[tuple[str, str], None] = {}  # (instance, id) of every apply

        @hs.rule(step=steps)
        def perform(self, step: Step) -> None:
            if isinstance(step, Apply):
                self.named[step.instance, str(step.message_id)] = None
            self.compare(step)

        def compare(self, step: Step) -> None:
            """The model first, then the target: None, or any ``str`` of the same text
            (RETURN-TYPE: a subclass too, by its real type; '' is not None)."""
            expected = step.perform(self.model[step.instance])
            actual = step.perform(self.real[step.instance])
            if expected is None:
                agrees = actual is None
            else:
                agrees = issubclass(type(actual), str) and str.__str__(actual) == expected
            if not agrees:
                call = f"{step.instance}.{step.describe()}"
                raise AssertionError(f"{call} returned {actual!r}; the model says {expected!r}")

        @hs.invariant()
        def every_message_reads_as_in_the_model(self) -> None:
            for instance, message_id in self.named:
                self.compare(Get(instance, None, message_id))

    AssemblerMachine.__name__ = f"AssemblerMachine[{getattr(factory, '__name__', factory)}]"
    return AssemblerMachine


def run_conformance_test(
    factory: AssemblerFactory, settings: Settings | None = None, *, incremental: bool = False
) -> None:
    """Run the state machine against ``factory``; raises with the failing steps on a mismatch.
    ``incremental``: check ``read_since`` too (the incremental profile)."""
    machine = assembler_machine(factory, incremental=incremental)
    hs.run_state_machine_as_test(machine, settings=settings)
