"""``tokasm bench`` as a user runs it (tiny sizes), the verdicts, and the smoke run of benchmarks/.

Timings are never asserted: only the shape of what is reported, the exit
codes, and the verdicts on synthetic timings whose growth is known. A run is
in-process in the user's folder (``user_folder``) where its output is the point;
a real process where a target exits or hangs, the interval timer stops a run,
or a testee is started.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from helpers import Ran, tokasm_cmd, tokasm_main, user_folder
from tokasm.bench import (
    format_seconds,
    format_size,
    parse_size,
    predict_seconds,
    scaling_exponent,
    verdict,
)
from tokasm.bench._watchdog import watchdog
from tokasm.bench.scenarios import SCENARIOS
from tokasm.cli import main
from tokasm.implementations import BACKENDS, DEFAULT_BACKEND

__all__: list[str] = []

REPO = Path(__file__).resolve().parent.parent
# The budget is huge so that a loaded machine never skips a size the tests assert.
TINY = ("--quick", "--sizes", "40,80,160", "--repeats", "1", "--budget", "600", "--quiet")

# A quadratic assembler of the user's own: every delta copies the whole text.
QUADRATIC = """\
class Impl:
    def __init__(self):
        self.texts = {}
        self.done = {}

    def apply(self, event):
        key = event["id"]
        if key in self.done:
            return self.done[key] if event.get("final") else None
        self.texts[key] = self.texts.get(key, "") + event.get("delta", "")
        if event.get("final"):
            self.done[key] = self.texts.pop(key)
            return self.done[key]
        return None

    def get(self, key):
        return self.done.get(key, self.texts.get(key))
"""

# Raises on the 50th event of any instance: the sweep records it and goes on.
FLAKY = """\
class Impl:
    def __init__(self):
        self.count = 0
        self.texts = {}

    def apply(self, event):
        self.count += 1
        if self.count == 50:
            raise RuntimeError("fiftieth event")
        self.texts[event["id"]] = self.texts.get(event["id"], "") + event.get("delta", "")
        return self.texts[event["id"]] if event.get("final") else None

    def get(self, key):
        return self.texts.get(key)
"""


#: A correct class that joins its whole text after every delta (tests/slow_assemblers.py).
SLOW = "slow_assemblers:RebuildsTextEachDelta"
#: One scenario, one run per size, the slow class alone: the bound is under test, not the grid.
SLOW_ALONE = (SLOW, "--only", "--quick", "--repeats", "1", "--scenario", "stream_then_finalize")


# Exits the process on the 50th event: it is that series' error, not tokasm's exit status.
EXITS = FLAKY.replace('raise RuntimeError("fiftieth event")', "raise SystemExit(3)")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "mine.py").write_text(QUADRATIC, encoding="utf-8")
    (tmp_path / "flaky.py").write_text(FLAKY, encoding="utf-8")
    (tmp_path / "exits.py").write_text(EXITS, encoding="utf-8")
    shutil.copy(Path(__file__).with_name("slow_assemblers.py"), tmp_path)
    return tmp_path


def _report(project: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((project / "out.json").read_text(encoding="utf-8"))
    return report


def _bench(capsys: pytest.CaptureFixture[str], project: Path, *args: str) -> Ran:
    """``tokasm bench ARGS`` in-process in ``project``."""
    with user_folder(project):
        return tokasm_main(capsys, "bench", *args)


def _cell_log(ran: Ran) -> list[str]:
    return [line for line in ran.err.splitlines() if line.startswith("bench: ")]


@pytest.mark.parametrize(
    ("growth", "expected"),
    [
        (lambda n: 5e-3, "constant"),
        (lambda n: 2e-7 * n, "linear"),
        (lambda n: 1e-9 * n**1.4, "superlinear"),
        (lambda n: 3e-12 * n * n, "quadratic"),
        (lambda n: 1e-15 * n**3, "worse than quadratic"),
    ],
)
def test_verdicts_on_synthetic_timings(growth: object, expected: str) -> None:
    sizes = [1_000, 4_000, 16_000, 64_000, 256_000]
    seconds = [growth(n) for n in sizes]  # type: ignore[operator]
    assert verdict(scaling_exponent(sizes, seconds)) == expected


def test_exponent_is_fitted_over_the_largest_sizes() -> None:
    """Per-call overhead flattens small sizes; the fit must see the quadratic tail."""
    sizes = [1_000, 4_000, 16_000, 64_000, 256_000]
    seconds = [1e-6 * n + 1e-10 * n * n for n in sizes]  # overhead first, then n^2
    assert scaling_exponent(sizes, seconds) > 1.6
    assert verdict(scaling_exponent(sizes, seconds)) == "quadratic"


def test_fit_refuses_a_single_size() -> None:
    with pytest.raises(ValueError, match="two or more sizes"):
        scaling_exponent([1_000, 1_000], [1.0, 1.1])


def test_budget_prediction_errs_high() -> None:
    assert predict_seconds([], [], 1_000) == 0.0
    assert predict_seconds([1_000], [0.5], 4_000) == pytest.approx(8.0)  # quadratic at first
    assert predict_seconds([1_000, 2_000], [1.0, 2.0], 4_000) == pytest.approx(2.0 * 2**1.5)
    assert predict_seconds([1_000, 2_000], [1.0, 4.0], 4_000) == pytest.approx(16.0)
    assert predict_seconds([1_000, 2_000], [1.0, 8.0], 4_000) == pytest.approx(64.0)


@pytest.mark.parametrize(
    "sizes",
    [(1_000, 4_000, 16_000, 64_000, 256_000), (10_000, 100_000, 1_000_000)],
    ids=["4x apart", "10x apart"],
)
@pytest.mark.parametrize("overhead", [1e-8, 1e-7, 1e-6, 1e-5, 1e-4])
def test_prediction_never_under_predicts_a_cost_turning_quadratic(
    sizes: tuple[int, ...], overhead: float
) -> None:
    """A per-call overhead hides a quadratic term at small sizes; the prediction must not."""

    def cost(n: int) -> float:
        return overhead * n + 1e-10 * n * n

    assert predict_seconds(sizes[:1], [cost(sizes[0])], sizes[1]) >= cost(sizes[1])
    for index in range(2, len(sizes)):
        known = sizes[index - 2 : index]
        assert predict_seconds(known, [cost(n) for n in known], sizes[index]) >= cost(sizes[index])


@pytest.mark.parametrize(("text", "size"), [("500", 500), ("4k", 4_000), ("1M", 1_000_000)])
def test_sizes_read_and_print_alike(text: str, size: int) -> None:
    assert parse_size(text) == size
    assert format_size(size) == text


def test_tiny_sweep_reports_every_backend_and_writes_json(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _bench(capsys, project, *TINY, "--scenario", "stream_then_finalize", "--json", "out.json")
    assert ran.code == 0, ran.out + ran.err
    assert "stream_then_finalize" in ran.out
    assert f"{DEFAULT_BACKEND} (default)" in ran.out
    report = json.loads((project / "out.json").read_text(encoding="utf-8"))
    assert report["default"] == DEFAULT_BACKEND
    assert report["settings"]["sizes"] == [40, 80, 160]
    assert [r["implementation"] for r in report["results"]] == list(BACKENDS)
    for result in report["results"]:
        assert result["scenario"] == "stream_then_finalize"
        assert result["unit"] == "event"
        assert result["verdict"] in {
            "constant",
            "linear",
            "superlinear",
            "quadratic",
            "worse than quadratic",
        }
        assert isinstance(result["exponent"], float)
        sizes = [point["size"] for point in result["points"]]
        assert sizes == [40, 80, 160]
        assert result["skipped_sizes"] == []
        for point in result["points"]:
            assert point["operations"] == point["size"]
            assert point["seconds"] > 0
        assert result["memory"]["ratio"] > 0
        assert result["memory"]["size"] == sizes[-1]
        assert result["error"] is None


def test_a_users_target_is_measured_beside_or_alone(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _bench(capsys, project, "mine:Impl", "--only", *TINY, "--no-memory", "--json", "out.json")
    assert ran.code == 0, ran.out + ran.err
    report = json.loads((project / "out.json").read_text(encoding="utf-8"))
    names = {result["implementation"] for result in report["results"]}
    assert names == {"mine:Impl"}
    scenarios = [result["scenario"] for result in report["results"]]
    assert "read_since_each_delta" not in scenarios  # it has no read_since
    assert set(scenarios) == set(SCENARIOS) - {"read_since_each_delta"}
    assert all(result["memory"] is None for result in report["results"])


def test_a_target_that_raises_costs_its_series_and_exits_1(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _bench(
        capsys, project, "flaky:Impl", *TINY, "--no-memory", "--scenario", "stream_then_finalize"
    )
    assert ran.code == 1
    assert "flaky:Impl raised: RuntimeError('fiftieth event')" in ran.out
    assert "list-join" in ran.out  # the others were still measured
    assert "Traceback" not in ran.err


def test_a_target_that_exits_costs_its_series_not_the_run(project: Path) -> None:
    ran = tokasm_cmd(
        project, "bench", "exits:Impl", *TINY, "--no-memory", "--scenario", "stream_then_finalize"
    )
    assert ran.code == 1
    assert "exits:Impl raised: SystemExit(3)" in ran.out
    assert "list-join" in ran.out
    assert "Traceback" not in ran.err


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("nosuchmodule:Impl", "cannot import module 'nosuchmodule'"),
        ("mine:Nope", "has no attribute 'Nope'"),
        ("not-a-target", "expected MODULE:ATTR"),
    ],
)
def test_a_bad_target_exits_2_naming_it(
    project: Path, target: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _bench(capsys, project, target, *TINY)
    assert ran.code == 2
    assert target in ran.err
    assert message in ran.err
    assert "Traceback" not in ran.err
    assert ran.out == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--sizes", "ten"), "expected sizes like 1k,10k,100k"),
        (("--sizes", "0"), "expected sizes like 1k,10k,100k"),
        (("--scenario", "nope"), "invalid choice: 'nope'"),
        (("--repeats", "0"), "must be at least 1"),
        (("--budget", "-1"), "must be a finite number above 0"),
    ],
)
def test_a_bad_option_exits_2(
    args: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["bench", *args])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_an_unsupported_plot_type_exits_2_before_measuring(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", *TINY, "--plot", "plot.gif"]) == 2
    captured = capsys.readouterr()
    assert "plot.gif: the file name must end in .png or .svg" in captured.err
    assert captured.out == ""


def test_a_run_over_the_budget_is_skipped_with_its_reason(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Any run costs more than a microsecond: every size after the first is predicted over."""
    ran = _bench(
        capsys,
        project,
        *SLOW_ALONE,
        "--sizes",
        "40,80,160",
        "--budget",
        "0.000001",
        "--json",
        "out.json",
        "--markdown",
        "out.md",
    )
    assert ran.code == 0, ran.out + ran.err
    [result] = _report(project)["results"]
    assert [point["size"] for point in result["points"]] == [40]
    assert result["skipped_sizes"] == [80, 160]
    assert result["memory"] is None  # the traced run is predicted too
    phases = {(skip["size"], skip["phase"]) for skip in result["skips"]}
    assert phases == {(40, "memory"), (80, "time"), (160, "time")}
    for skip in result["skips"]:
        assert skip["limit"] == "budget"
        assert skip["reason"].startswith("over --budget: predicted ")
    assert _report(project)["max_time_reached"] is False
    row = next(line for line in ran.out.splitlines() if line.startswith(SLOW))
    assert row.split()[2:] == ["skip", "skip", "-", "-", "skip"]
    legend = "skip: predicted over the budget per run (1e-06 s, set-up included)"
    assert legend in ran.out
    assert legend in (project / "out.md").read_text(encoding="utf-8")


def test_off_a_terminal_each_finished_cell_is_one_line_on_stderr(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _bench(capsys, project, *SLOW_ALONE, "--sizes", "40,80", "--budget", "0.000001")
    assert ran.code == 0, ran.out + ran.err
    assert "\r" not in ran.err
    cell = f"bench: stream_then_finalize {SLOW}"
    measured, skipped = _cell_log(ran)
    assert measured.startswith(f"{cell} 40: ")
    assert "per event, memory not traced (over --budget: predicted " in measured
    assert skipped.startswith(f"{cell} 80: skipped, over --budget: predicted ")
    assert _bench(capsys, project, *SLOW_ALONE, "--sizes", "40", "--quiet").err == ""


def test_a_quadratic_class_cannot_stretch_the_sweep_past_max_time(project: Path) -> None:
    """With a budget of a day, only --max-time stops the climb to 64k deltas.

    The probes between 40 and 64k deltas predict each next run; the first one
    predicted to end past the bound is not started, and everything above it is
    reported as such. The tables and reports are still written, and it exits 0.
    """
    ran = tokasm_cmd(
        project,
        "bench",
        *SLOW_ALONE,
        "--scenario",
        "get_after_final",
        "--sizes",
        "40,64k",
        "--budget",
        "86400",
        "--max-time",
        "1",
        "--json",
        "out.json",
        "--markdown",
        "out.md",
    )
    assert ran.code == 0, ran.out + ran.err
    report = _report(project)
    assert report["max_time_reached"] is True
    assert report["settings"]["max_time_seconds"] == 1
    assert report["settings"]["probe_sizes"] == [1_000, 4_000, 16_000]
    assert len(report["results"]) == 2
    for result in report["results"]:
        assert 64_000 not in [point["size"] for point in result["points"]]
        [skip] = [s for s in result["skips"] if s["size"] == 64_000]
        assert skip["phase"] == "time"
        assert skip["limit"] == "max-time"
        assert skip["reason"].startswith("over --max-time: predicted ")
    assert "max-time: not run, it would have ended past --max-time (1 s)" in ran.out
    assert "--max-time 1 s reached: " in ran.out
    assert "stopped by --max-time 1 s" in ran.out
    rows = [line for line in ran.out.splitlines() if line.startswith(SLOW)]
    assert [row.split()[2] for row in rows] == ["max-time", "max-time"]
    assert "max-time" in (project / "out.md").read_text(encoding="utf-8")
    assert "Traceback" not in ran.err


def _blocked_signals(thread: threading.Thread) -> set[int]:
    """The signals ``thread`` blocks, from the kernel's own account of it (Linux)."""
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text(encoding="ascii")
    mask = int(next(line for line in status.splitlines() if line.startswith("SigBlk:"))[7:], 16)
    return {number for number in range(1, 65) if mask >> (number - 1) & 1}


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_the_alarm_that_interrupts_a_run_can_only_wake_the_run() -> None:
    """The watchdog's own thread blocks SIGALRM (and SIGINT, SIGTERM): the kernel may hand
    a process's signal to any thread that does not, and one that landed there left a run
    waiting on a lock asleep, reported as ignoring its interrupt."""
    with watchdog(60, on_ignored=lambda seconds, stack: None):
        (helper,) = [t for t in threading.enumerate() if t.name == "tokasm-watchdog"]
        blocked = _blocked_signals(helper)
    assert {signal.SIGALRM, signal.SIGINT, signal.SIGTERM} <= blocked
    assert signal.SIGALRM not in _blocked_signals(threading.main_thread())


def test_a_run_that_ignores_its_interrupt_ends_the_sweep_with_the_results_so_far(
    project: Path,
) -> None:
    """The run at 80 deltas swallows the watchdog's interrupt: a thread cannot be stopped,
    so the sweep reports what it has, the stuck run as the series' error, and ends."""
    ran = tokasm_cmd(
        project,
        *("bench", "slow_assemblers:IgnoresTheInterrupt", "--only", "--quick"),
        *("--repeats", "1", "--scenario", "stream_then_finalize", "--sizes", "40,80"),
        *("--budget", "0.15", "--json", "out.json"),
        shortened={  # what it waits out: the run's limit, then the grace past it
            "tokasm.bench._sweep.OVERRUN_FLOOR": 0.3,
            "tokasm.bench._watchdog.IGNORED_GRACE": 0.3,
        },
    )
    assert ran.code == 1, ran.out + ran.err
    [result] = _report(project)["results"]
    assert [point["size"] for point in result["points"]] == [40]
    assert "ignored the interrupt" in result["error"]
    assert "_append" in result["error"]  # where it was stuck
    assert "ignored the interrupt" in ran.out
    assert "Traceback" not in ran.err


@pytest.mark.parametrize("target", ["HangsOnALongMessage", "SwallowsTheInterruptOnce"])
def test_a_run_that_hangs_is_interrupted_and_the_sweep_goes_on(project: Path, target: str) -> None:
    """Predicted to fit, the run at 80 deltas hangs: it is stopped at twice the budget. A
    run that swallows the interrupt and then returns, late, is stopped all the same."""
    ran = tokasm_cmd(
        project,
        "bench",
        f"slow_assemblers:{target}",
        "--only",
        "--quick",
        "--repeats",
        "2",
        "--scenario",
        "stream_then_finalize",
        "--scenario",
        "get_after_final",
        "--sizes",
        "40,80,160",
        "--budget",
        "0.15",
        "--json",
        "out.json",
        shortened={"tokasm.bench._sweep.OVERRUN_FLOOR": 0.3},  # each hang waits it out
    )
    assert ran.code == 0, ran.out + ran.err
    assert "Traceback" not in ran.err
    for result in _report(project)["results"]:
        assert [point["size"] for point in result["points"]] == [40]
        assert [point["runs"] for point in result["points"]] == [2]
        first, above = (s for s in result["skips"] if s["phase"] == "time")
        assert (first["size"], first["limit"]) == (80, "budget")
        assert (
            first["reason"]
            == "over --budget: interrupted, still running after 0.3 s (2x --budget, at least 0.3 s)"
        )
        assert (above["size"], above["reason"]) == (
            160,
            "over --budget: a smaller size was interrupted",
        )
        assert (first["interrupted"], above["interrupted"]) == (True, False)
    interrupted = [line for line in _cell_log(ran) if "interrupted, still running" in line]
    assert len(interrupted) == 2
    rows = [line for line in ran.out.splitlines() if line.startswith("slow_assemblers:")]
    assert [row.split()[2:4] for row in rows] == [["stopped", "skip"]] * 2
    assert "stopped: started, but still running after 2x the budget" in ran.out


def test_the_first_run_at_a_large_size_is_predicted_from_probes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Asked for 64k deltas only, the sweep measures unreported probes first and skips 64k."""
    ran = _bench(
        capsys,
        project,
        *SLOW_ALONE,
        "--sizes",
        "64k",
        "--budget",
        "0.05",
        "--no-memory",
        "--json",
        "out.json",
    )
    assert ran.code == 0, ran.out + ran.err
    report = _report(project)
    assert report["settings"]["probe_sizes"] == [1_000, 4_000, 16_000]
    [result] = report["results"]
    assert result["points"] == []
    assert result["skipped_sizes"] == [64_000]
    assert result["skips"][0]["limit"] == "budget"
    assert any(" 1k: probe, " in line for line in _cell_log(ran))


@pytest.mark.parametrize(
    ("option", "path", "message"),
    [
        ("--json", "/proc/nope/x.json", "cannot create its folder"),
        ("--markdown", "/proc/nope/x.md", "cannot create its folder"),
        ("--json", "folder", "is a directory"),
    ],
)
def test_an_unwritable_report_exits_2_before_measuring(
    project: Path, option: str, path: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "folder").mkdir()
    ran = _bench(capsys, project, *TINY, option, path)
    assert ran.code == 2
    assert ran.out == ""
    [line] = ran.err.splitlines()
    assert line.startswith(f"tokasm bench: error: {option} {path}: {message}")


def test_a_protocol_testee_is_measured_per_request(project: Path) -> None:
    testee = f"{sys.executable} -m tokasm.protocol.testee chunked"
    ran = tokasm_cmd(
        project,
        "bench",
        "--only",
        "--cmd",
        testee,
        *TINY,
        "--scenario",
        "read_since_each_delta",
        "--json",
        "out.json",
    )
    assert ran.code == 0, ran.out + ran.err
    assert "measured per request" in ran.out
    [result] = json.loads((project / "out.json").read_text(encoding="utf-8"))["results"]
    assert result["implementation"] == "cmd:chunked"
    assert result["per_request"] is True
    assert result["memory"] is None  # another process: not traceable here
    assert [point["size"] for point in result["points"]] == [40, 80, 160]


def test_a_testee_that_cannot_start_exits_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _bench(capsys, project, "--cmd", "/nonexistent/testee", *TINY)
    assert ran.code == 2
    assert "/nonexistent/testee" in ran.err
    assert "Traceback" not in ran.err


@pytest.mark.parametrize(
    ("suffix", "magic"), [(".png", b"\x89PNG"), (".svg", b"<?xml")], ids=["png", "svg"]
)
def test_plot_is_written(tmp_path: Path, suffix: str, magic: bytes) -> None:
    pytest.importorskip("matplotlib")
    plot = tmp_path / "docs" / f"bench{suffix}"
    args = [*TINY, "--no-memory", "--scenario", "get_after_final", "--plot", str(plot)]
    assert main(["bench", *args]) == 0
    data = plot.read_bytes()
    assert data.startswith(magic)
    assert len(data) > 1_000


def test_benchmark_suite_smoke_run() -> None:
    """CI runs benchmarks/ once at tiny sizes so it cannot rot; no time is asserted."""
    env = {**os.environ, "TOKASM_BENCH_SMOKE": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "benchmarks",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "--benchmark-disable",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tokasm targets (recommended backend)" in done.stdout
    assert "not asserted" in done.stdout


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(999.7e-9, "1us"), (999.4e-9, "999ns"), (1e-6, "1us"), (0.9996, "1s"), (12.5e-3, "12.5ms")],
)
def test_durations_switch_unit_before_rounding_to_a_thousand(seconds: float, shown: str) -> None:
    assert format_seconds(seconds) == shown
