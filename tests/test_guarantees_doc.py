"""The limits the docs state are the ones the code enforces: one source per fact.

docs/guarantees.md and spec/PROTOCOL.md name each limit's constant in a table
row (`| what | `CONSTANT` | value |`); the first number after the constant's
cell must be the constant's value, and every constant must be stated.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tokasm import _display, errors
from tokasm.cli import options
from tokasm.corpus import _load, _yaml
from tokasm.corpus._paths import spec_dir
from tokasm.protocol import _client as _protocol_client
from tokasm.protocol import _codec as _protocol
from tokasm.protocol import testee
from tokasm.report import _render as _reports
from tokasm.report import _xfail

DOCS = Path(__file__).resolve().parent.parent / "docs"

CONSTANTS: dict[str, float] = {
    name: getattr(module, name)
    for module, names in (
        (
            _protocol,
            ("MAX_LINE_BYTES", "MAX_NAME_CHARS", "MAX_TEXT_CHARS"),
        ),
        (
            _protocol_client,
            (
                "DEFAULT_TIMEOUT",
                "START_TIMEOUT",
                "LOAD_TIMEOUT",
                "BEATS_FOR",
                "BREAKER_FAULTS",
                "EXIT_GRACE",
                "STDERR_TAIL_BYTES",
                "STDERR_TAIL_LINES",
                "PIPELINE_WINDOW",
                "FUZZ_SECONDS",
            ),
        ),
        (options, ("MAX_SECONDS",)),
        (testee, ("WORKER_MEMORY",)),
        (errors, ("EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERRUPTED", "EXIT_TERMINATED")),
    )
    for name in names
}
#: The "Reports and inputs" section of guarantees.md.
REPORTS_SECTION = DOCS / "guarantees.md"
REPORT_LIMITS: dict[str, float] = {
    name: getattr(module, name)
    for module, names in (
        (_xfail, ("MAX_XFAIL_BYTES",)),
        (_yaml, ("MAX_CASE_FILE_BYTES", "MAX_ALIASED_NODES")),
        (_load, ("MAX_CASE_STEPS", "MAX_CASE_TEXT_CHARS")),
        (_display, ("BLOCK_LIMIT",)),
        (_reports, ("NAME_LIMIT", "REPORT_VERSION")),
    )
    for name in names
}
ALL_IN = DOCS / "guarantees.md"
PROTOCOL_LIMITS = ("MAX_LINE_BYTES", "MAX_NAME_CHARS", "MAX_TEXT_CHARS")


def stated(path: Path, known: dict[str, float] = CONSTANTS) -> dict[str, float]:
    """Each constant named in a table row, with the first number of the next cell."""
    values: dict[str, float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        for index, cell in enumerate(cells[:-1]):
            name = re.fullmatch(r"`([A-Z_]+)`", cell)
            number = re.search(r"\d[\d,]*(\.\d+)?", cells[index + 1])
            if name and name[1] in known and number:
                values[name[1]] = float(number[0].replace(",", ""))
    return values


@pytest.mark.parametrize(
    ("path", "names"),
    [(ALL_IN, tuple(CONSTANTS)), (spec_dir() / "PROTOCOL.md", PROTOCOL_LIMITS)],
    ids=["guarantees.md", "PROTOCOL.md"],
)
def test_every_limit_is_stated_with_the_value_of_its_constant(
    path: Path, names: tuple[str, ...]
) -> None:
    values = stated(path)
    assert {name: values.get(name) for name in names} == {name: CONSTANTS[name] for name in names}


def test_the_reports_section_states_each_limit_with_its_constant() -> None:
    assert stated(REPORTS_SECTION, REPORT_LIMITS) == REPORT_LIMITS
