"""pytest plugin (entry point ``pytest11``): ``--assembler MODULE:ATTR`` selects a target."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

__all__ = ["pytest_addoption"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tokasm", "tokasm conformance")
    group.addoption(
        "--assembler",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="run the tokasm conformance corpus (--pyargs tokasm.conformance) against this target",
    )
