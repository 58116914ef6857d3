"""The corpus as pytest items, for ``python -m pytest --pyargs tokasm.conformance``.

Parametrized by the plugin (``tokasm.conformance.plugin``) from ``--tokasm-assembler``;
without one, collecting it is a usage error saying what to pass.
"""

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
