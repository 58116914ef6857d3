"""pytest-benchmark over the shared scenarios (``tokasm.bench``): options, grid, budget.

``pytest benchmarks`` runs every scenario on every bundled backend over the
full sweep of sizes; ``--bench-smoke`` (or ``TOKASM_BENCH_SMOKE=1``) runs
tiny sizes once, which is what CI does so the suite cannot rot. A cell whose
time per run is predicted (from the smaller sizes of the same scenario and
backend) to exceed ``--bench-budget`` seconds is skipped, saying why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from tokasm.bench import FULL, SMOKE, predict_seconds
from tokasm.bench.scenarios import SCENARIOS
from tokasm.cli.options import positive_seconds
from tokasm.implementations import BACKENDS

if TYPE_CHECKING:
    from tokasm.bench import SweepSettings

__all__ = ["BenchCell", "TargetReport", "Timings"]

SMOKE_ENV = "TOKASM_BENCH_SMOKE"
_TIMINGS = pytest.StashKey["Timings"]()
_TARGETS = pytest.StashKey["list[str]"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tokasm-bench", "tokasm benchmark suite")
    group.addoption(
        "--bench-smoke",
        action="store_true",
        help=f"tiny sizes, run once, targets reported but not asserted (also {SMOKE_ENV}=1)",
    )
    group.addoption(
        "--bench-budget",
        type=positive_seconds,
        default=10.0,
        metavar="SECONDS",
        help="skip a cell predicted to take longer than this per run (default 10)",
    )


def smoke_mode(config: pytest.Config) -> bool:
    """Whether this run is the smoke run (option or environment variable)."""
    return bool(config.getoption("--bench-smoke")) or os.environ.get(SMOKE_ENV, "") not in (
        "",
        "0",
    )


def sweep_settings(config: pytest.Config) -> SweepSettings:
    return SMOKE if smoke_mode(config) else FULL


@dataclass(frozen=True)
class BenchCell:
    """One scenario on one backend at one size: a test of ``test_scenarios.py``."""

    scenario: str
    backend: str
    size: int


@dataclass
class Timings:
    """Best seconds per run so far, per (scenario, backend), sizes ascending."""

    budget: float
    seen: dict[tuple[str, str], list[tuple[int, float]]] = field(default_factory=dict)

    def predicted(self, cell: BenchCell) -> float:
        points = self.seen.get((cell.scenario, cell.backend), [])
        return predict_seconds([s for s, _ in points], [t for _, t in points], cell.size)

    def record(self, cell: BenchCell, seconds: float) -> None:
        self.seen.setdefault((cell.scenario, cell.backend), []).append((cell.size, seconds))


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_TIMINGS] = Timings(config.getoption("--bench-budget"))
    config.stash[_TARGETS] = []


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The targets of the recommended backend, measured against their limits."""
    lines = terminalreporter.config.stash.get(_TARGETS, [])
    if lines:
        terminalreporter.section("tokasm targets (recommended backend)")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``bench_cell`` over scenarios x backends x sizes (sizes ascending)."""
    if "bench_cell" not in metafunc.fixturenames:
        return
    settings = sweep_settings(metafunc.config)
    cells = [
        BenchCell(scenario, backend, size)
        for scenario in SCENARIOS
        for backend in BACKENDS
        for size in SCENARIOS[scenario].sizes(settings.sizes, settings.texts)
    ]
    metafunc.parametrize(
        "bench_cell", cells, ids=[f"{c.scenario}-{c.backend}-{c.size}" for c in cells]
    )


@dataclass(frozen=True)
class TargetReport:
    """Records a target's measured value in the benchmark JSON and the run's summary."""

    config: pytest.Config
    smoke: bool

    def __call__(
        self,
        extra_info: dict[str, object],
        *,
        target: str,
        measured: float,
        limit: float,
        holds: bool,
        details: str,
    ) -> bool:
        """Return whether the target must be asserted (never in the smoke run)."""
        verdict = "holds" if holds else "MISSED"
        if self.smoke:
            verdict += " (smoke sizes: not asserted)"
        extra_info.update(target=target, measured=measured, limit=limit, holds=holds)
        line = f"{target}: {measured:.3g} (limit {limit:g}) {verdict}; {details}"
        self.config.stash[_TARGETS].append(line)
        print(line)
        return not self.smoke


@pytest.fixture
def report_target(request: pytest.FixtureRequest) -> TargetReport:
    return TargetReport(request.config, smoke_mode(request.config))


@pytest.fixture
def smoke(request: pytest.FixtureRequest) -> bool:
    """True in the smoke run: measure tiny sizes, assert no target."""
    return smoke_mode(request.config)


@pytest.fixture
def timings(request: pytest.FixtureRequest) -> Timings:
    return request.config.stash[_TIMINGS]
