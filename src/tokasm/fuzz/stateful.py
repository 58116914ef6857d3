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
from tokasm.corpus.steps import READ_SINCE, Get, ReadSince, features_of
from tokasm.fuzz import INSTANCE_NAMES
from tokasm.fuzz._strategies import DELTAS, FINAL_CHOICES, MESSAGE_IDS, apply_step

if TYPE_CHECKING:
    from hypothesis import settings as Settings

    from tokasm.corpus.steps import Step
    from tokasm.implementations import Assembler, AssemblerFactory

__all__ = ["assembler_machine", "run_conformance_test"]  # what the old path re-exports

_INSTANCES = INSTANCE_NAMES[:2]  # two instances, so shared state shows (ASM-STATE)
_instances = st.sampled_from(_INSTANCES)
_finals = st.sampled_from(FINAL_CHOICES)


def assembler_machine(factory: AssemblerFactory) -> type[hs.RuleBasedStateMachine]:
    """A state machine class comparing ``factory``'s assemblers with the model."""
    incremental = READ_SINCE in features_of(factory())

    class AssemblerMachine(hs.RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.real: dict[str, Assembler] = {name: factory() for name in _INSTANCES}
            self.model = {name: ModelAssembler() for name in _INSTANCES}
            self.named: dict[str, set[str]] = {name: set() for name in _INSTANCES}

        @hs.rule(
            instance=_instances, message_id=MESSAGE_IDS, delta=st.none() | DELTAS, final=_finals
        )
        def apply(
            self, instance: str, message_id: str, delta: str | None, final: bool | None
        ) -> None:
            self.named[instance].add(message_id)  # APPEND-EMPTY: "" is sent, never dropped
            self.compare(apply_step(instance, delta, final, {})(message_id))

        @hs.rule(instance=_instances, message_id=MESSAGE_IDS)
        def get(self, instance: str, message_id: str) -> None:
            # GET-TEXT, GET-UNKNOWN: unknown ids read as None and stay unknown
            self.compare(Get(instance, None, message_id))

        @hs.precondition(lambda _: incremental)
        @hs.rule(instance=_instances, message_id=MESSAGE_IDS, offset=st.integers(0, 12))
        def read_since(self, instance: str, message_id: str, offset: int) -> None:
            self.compare(ReadSince(instance, None, message_id, offset))

        def compare(self, step: Step) -> None:
            """The model first, then the target: equal and of one type ('' is not None)."""
            expected = step.perform(self.model[step.instance])
            actual = step.perform(self.real[step.instance])
            if actual != expected or type(actual) is not type(expected):
                call = f"{step.instance}.{step.describe()}"
                raise AssertionError(f"{call} returned {actual!r}; the model says {expected!r}")

        @hs.invariant()
        def every_message_reads_as_in_the_model(self) -> None:
            for instance, named in self.named.items():
                for message_id in named:
                    self.compare(Get(instance, None, message_id))

    AssemblerMachine.__name__ = f"AssemblerMachine[{getattr(factory, '__name__', factory)}]"
    return AssemblerMachine


def run_conformance_test(factory: AssemblerFactory, settings: Settings | None = None) -> None:
    """Run the state machine against ``factory``; raises with the failing steps on a mismatch."""
    hs.run_state_machine_as_test(assembler_machine(factory), settings=settings)
