"""The corpus as pytest items for ``pytest --pyargs tokasm.conformance``, one per check and
``--tokasm-assembler`` (parametrized by ``tokasm.conformance.plugin``)."""

from tokasm.conformance.plugin import test_case

__all__ = ["test_case"]
