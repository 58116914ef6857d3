"""Deprecated path of ``tokasm.fuzz.stateful``, kept so older imports work."""

from tokasm.fuzz.stateful import assembler_machine, run_conformance_test

__all__ = ["assembler_machine", "run_conformance_test"]
