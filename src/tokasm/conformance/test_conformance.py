"""The corpus as pytest items, for ``python -m pytest --pyargs tokasm.conformance``.

Parametrized by the plugin (``tokasm.conformance.plugin``) from
``--tokasm-assembler MODULE:ATTR`` (repeatable) and ``--tokasm-profile``; without
``--tokasm-assembler`` collecting it is a usage error saying what to pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tokasm.conformance.plugin import fuzz_examples, selected_profiles
from tokasm.conformance.pytest_suite import check_case

if TYPE_CHECKING:
    import pytest

    from tokasm.conformance.pytest_suite import Check
    from tokasm.run.subjects import Subject

__all__ = ["test_case"]


def test_case(tokasm_subject: Subject, tokasm_case: Check, pytestconfig: pytest.Config) -> None:
    """One corpus case, the cost probe or the fuzz phase against one target."""
    check_case(
        tokasm_subject, tokasm_case, selected_profiles(pytestconfig), fuzz_examples(pytestconfig)
    )
