"""The corpus as pytest items for ``pytest --pyargs tokasm.conformance``, one per check and
``--tokasm-assembler`` (parametrized by ``tokasm.conformance.plugin``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tokasm.conformance.plugin import selection

if TYPE_CHECKING:
    import pytest

    from tokasm.conformance.pytest_suite import Check
    from tokasm.run.targets import Target

__all__ = ["test_case"]


def test_case(tokasm_subject: Target, tokasm_case: Check, pytestconfig: pytest.Config) -> None:
    """One corpus case, the cost probe or the fuzz phase against one target."""
    selection(pytestconfig).check(tokasm_subject, tokasm_case)
