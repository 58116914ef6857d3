"""``tokasm bench`` as a user runs it (tiny sizes), the verdicts, and the smoke run of benchmarks/.

Timings are never asserted: only the shape of what is reported, the exit
codes, and the verdicts on synthetic timings whose growth is known. A run is
in-process in the user's folder (``user_folder``): the targets run in worker
processes, so one that hangs, exits or crashes costs a worker, not the test.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import Ran, tokasm_main, user_folder
from tokasm.bench import (
    format_seconds,
    format_size,
    parse_size,
    predict_seconds,
    scaling_exponent,
    verdict,
)
from tokasm.bench._measure import Fit, fit, judge
from tokasm.bench._sweep import QUICK, BenchTarget, Series, climb
from tokasm.bench._worker import Bench
from tokasm.bench.scenarios import SCENARIOS
from tokasm.cli import main
from tokasm.implementations import BACKENDS, DEFAULT_BACKEND, Event

__all__: list[str] = []

REPO = Path(__file__).resolve().parent.parent
# The budget is huge so that a loaded machine never skips a size the tests assert.
TINY = ("--quick", "--sizes", "40,80,160", "--repeats", "1", "--budget", "600", "--quiet")
#: A sweep of two scenarios, the first cut short by a broken run, the second whole.
_TWO_SCENARIOS = (
    *("--only", *TINY),
    *("--scenario", "stream_then_finalize", "--scenario", "interleaved", "--json", "out.json"),
)


@pytest.fixture
def short_overrun(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker silent for half a second is killed, whatever the budget (TINY's, so large
    that a loaded machine skips no size: a budget as short would skip some)."""
    monkeypatch.setattr("tokasm.bench._sweep.OVERRUN_FACTOR", 0.0)
    monkeypatch.setattr("tokasm.bench._sweep.OVERRUN_FLOOR", 0.5)


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
VERDICTS = {"constant", "linear", "superlinear", "quadratic", "worse than quadratic"}
SHAPES = VERDICTS | {"inconclusive", "-", "grows"} | {f"at least {v}" for v in VERDICTS}


# Exits the process on the 50th event: it is that series' error, not tokasm's exit status.
EXITS = FLAKY.replace('raise RuntimeError("fiftieth event")', "raise SystemExit(3)")
INTERRUPTS = FLAKY.replace('raise RuntimeError("fiftieth event")', "raise KeyboardInterrupt")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "mine.py").write_text(QUADRATIC, encoding="utf-8")
    (tmp_path / "flaky.py").write_text(FLAKY, encoding="utf-8")
    (tmp_path / "exits.py").write_text(EXITS, encoding="utf-8")
    (tmp_path / "interrupts.py").write_text(INTERRUPTS, encoding="utf-8")
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


def test_no_verdict_from_fewer_than_three_sizes() -> None:
    assert fit([1_000, 4_000], [[1e-3, 4e-3]], per_operation=False).verdict == "-"
    assert fit([1_000, 4_000, 16_000], [[1e-3, 4e-3, 16e-3]], per_operation=False).verdict == (
        "linear"
    )


QUICK_SIZES = [1_000, 2_000, 4_000, 8_000, 16_000]


def _rounds(cost: Any, slowdowns: tuple[float, ...]) -> list[list[float]]:
    """One round per slowdown: a busy machine slows every size of a round alike."""
    return [[slowdown * cost(n) for n in QUICK_SIZES] for slowdown in slowdowns]


def test_rounds_slowed_down_unequally_keep_the_exponent() -> None:
    fitted = fit(QUICK_SIZES, _rounds(lambda n: 1e-7 * n, (1.0, 1.9, 1.3, 2.4, 1.1)), False)
    assert fitted.exponent == pytest.approx(1.0)
    assert fitted.verdict == "linear"


def test_one_slow_batch_does_not_move_the_verdict() -> None:
    rounds = _rounds(lambda n: 1e-7 * n, (1.0,) * 5)
    rounds[2][-1] *= 2  # the largest size, once: that round's slope is 1.3
    assert fit(QUICK_SIZES, rounds, False).verdict == "linear"


def test_a_verdict_the_noise_allows_to_differ_is_inconclusive() -> None:
    rounds = _rounds(lambda n: 1e-7 * n**1.1, (1.0,) * 5)
    for row, factor in zip(rounds, (1.0, 1.5, 1.2, 1.6, 1.3), strict=True):
        row[-1] *= factor  # slopes from 1.1 to 1.3; the fastest batches give 1.1
    shaky = fit(QUICK_SIZES, rounds, False)
    assert shaky.exponent == pytest.approx(1.1)
    assert shaky.error > 0.06
    assert shaky.verdict == "inconclusive"


@pytest.mark.parametrize(
    ("stream", "long_text", "expected"),
    [
        (Fit(1.15, 0.06, "inconclusive"), Fit(0.0, 0.03, "constant"), "linear"),
        (Fit(1.15, 0.06, "inconclusive"), Fit(1.0, 0.03, "grows"), "quadratic"),
        (Fit(1.02, 0.06, "linear"), Fit(1.0, 0.03, "grows"), "quadratic"),
        (Fit(1.5, 0.06, "superlinear"), Fit(0.0, 0.03, "constant"), "superlinear"),
        (Fit(3.0, 0.06, "worse than quadratic"), Fit(1.0, 0.03, "grows"), "worse than quadratic"),
        (Fit(1.15, 0.06, "inconclusive"), Fit(0.3, 0.2, "inconclusive"), "inconclusive"),
        (Fit(None, 0.0, "-"), Fit(0.0, 0.03, "constant"), "linear"),
    ],
)
def test_the_cost_of_an_event_on_long_texts_settles_the_verdict(
    stream: Fit, long_text: Fit, expected: str
) -> None:
    """An event that costs the same on a long text cannot make its stream worse than linear,
    unless the sweep shows it; one that grows copies the text: quadratic, or worse if shown."""
    assert judge(stream, long_text) == expected


def test_a_cost_that_bends_up_is_inconclusive_run_after_run() -> None:
    """Quadratic with a small factor: about 1.2 at these sizes and rising. The bend is part of
    the error, so a little noise either way does not turn it linear or superlinear."""
    for scale in (0.7, 1.0, 1.4):
        cost = lambda n, scale=scale: 6e-7 * n + scale * 3e-11 * n * n  # noqa: E731
        assert fit(QUICK_SIZES, _rounds(cost, (1.0,) * 5), False).verdict == "inconclusive"


def test_per_operation_growth_is_fitted_over_the_fixed_cost() -> None:
    """300us per append plus a copy of the text: a growth a raw fit would call constant."""
    sizes = [256_000, 1_000_000, 4_000_000, 16_000_000]
    copy = [300e-6 + 6e-11 * n for n in sizes]
    assert scaling_exponent(sizes, copy) < 0.5
    assert fit(sizes, [copy] * 5, per_operation=True).verdict == "grows"
    flat = [[300e-6 * (1 + 0.002 * ((i + r) % 2)) for i in range(4)] for r in range(5)]
    assert fit(sizes, flat, per_operation=True).verdict == "constant"


def test_a_verdict_worse_than_expected_whatever_the_noise_says_at_least_so() -> None:
    sizes = [1_000, 4_000, 16_000]
    steep = [1e-9 * n**1.6 for n in sizes]  # on the edge of superlinear and quadratic
    assert fit(sizes, [steep] * 3, per_operation=False).verdict == "at least superlinear"


def test_fit_refuses_a_single_size() -> None:
    with pytest.raises(ValueError, match="two or more sizes"):
        scaling_exponent([1_000, 1_000], [1.0, 1.1])


def test_budget_prediction_errs_high() -> None:
    assert predict_seconds([], [], 1_000) == 0.0
    assert predict_seconds([1_000], [0.5], 4_000) == pytest.approx(8.0)  # quadratic at first
    assert predict_seconds([1_000, 2_000], [1.0, 2.0], 4_000) == pytest.approx(2.0 * 2**1.5)
    assert predict_seconds([1_000, 2_000], [1.0, 4.0], 4_000) == pytest.approx(16.0)
    assert predict_seconds([1_000, 2_000], [1.0, 8.0], 4_000) == pytest.approx(64.0)
    assert predict_seconds([1_000, 2_000], [1.0, 8.0], 4_000, steepest=1.5) == pytest.approx(
        8.0 * 2**1.5
    )
    # a forged time (a float's greatest), or sizes close together then far apart: endless
    assert predict_seconds([40, 80], [1e-6, 1e307], 160) == math.inf
    assert predict_seconds([40, 41], [1e-6, 1e-4], 10**9) == math.inf


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
        assert result["verdict"] in SHAPES
        assert isinstance(result["exponent"], float)
        assert result["exponent_error"] >= 0
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


#: Correct by the seed; its ``read_since`` means something else (INC-* is a claim, not a name).
OTHER_READ_SINCE = """\
from tokasm.implementations import ListJoinAssembler

class Impl(ListJoinAssembler):
    def read_since(self, timestamp):
        return ["event", timestamp]
"""


def test_a_read_since_of_another_meaning_is_timed_only_when_its_scenario_is_named(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "other.py").write_text(OTHER_READ_SINCE, encoding="utf-8")
    alone = ("other:Impl", "--only", *TINY, "--no-memory")
    ran = _bench(capsys, project, *alone, "--json", "out.json")
    assert ran.code == 0, ran.out + ran.err
    scenarios = [result["scenario"] for result in _report(project)["results"]]
    assert set(scenarios) == set(SCENARIOS) - {"read_since_each_delta"}
    named = ("--scenario", "read_since_each_delta", "--json", "out.json")
    ran = _bench(capsys, project, *alone, *named)
    assert ran.code == 1  # asked for, it is called, and it raises
    [result] = _report(project)["results"]
    assert result["scenario"] == "read_since_each_delta"
    assert result["error"], result


def test_a_target_that_raises_costs_its_series_and_exits_1(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _bench(
        capsys,
        project,
        *("flaky:Impl", "list-join", "--only", *TINY),
        *("--no-memory", "--scenario", "stream_then_finalize"),
    )
    assert ran.code == 1
    assert "flaky:Impl raised: RuntimeError('fiftieth event')" in ran.out
    assert "\nlist-join " in ran.out  # the other was still measured
    assert "Traceback" not in ran.err


@pytest.mark.parametrize(
    ("module", "raised", "where"),
    [
        ("exits", "SystemExit(3)", ()),
        ("interrupts", "KeyboardInterrupt()", ()),
        ("interrupts", "KeyboardInterrupt()", ("--in-process",)),  # not tokasm's Ctrl-C
    ],
)
def test_a_target_that_exits_costs_its_series_not_the_run(
    project: Path, capsys: pytest.CaptureFixture[str], module: str, raised: str, where: tuple[str]
) -> None:
    ran = _bench(
        capsys,
        project,
        *(f"{module}:Impl", "list-join", "--only", *TINY, *where),
        *("--no-memory", "--scenario", "stream_then_finalize"),
    )
    assert ran.code == 1, ran
    assert f"{module}:Impl raised: {raised}" in ran.out
    assert "\nlist-join " in ran.out
    assert "Traceback" not in ran.err


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("ExitsOnALongMessage", "the worker ended (exit status 7)"),
        ("CrashesOnALongMessage", "the worker ended (killed by SIGSEGV)"),
        ("KilledByAnUnnamedSignal", "the worker ended (killed by signal 40)"),
        ("WritesJsonThatIsNoAnswer", """sent a line that is not a result: '{"ok": "x"}'"""),
        ("WritesATimeOfZero", """sent a line that is not a result: '{"ok": [0, 0]}'"""),
        ("WritesATimeNoFloatHolds", """sent a line that is not a result: '{"ok": [1, 1000"""),
        ("WritesJsonNestedDeeply", "sent a line that is not a result: '[[[["),
    ],
)
@pytest.mark.usefixtures("short_overrun")
def test_a_worker_that_dies_or_hangs_costs_that_scenario_only(
    project: Path, capsys: pytest.CaptureFixture[str], target: str, said: str
) -> None:
    """At 80 deltas the target ends its process, crashes or hangs: its worker is killed and
    that scenario is its error; the next scenario runs in a new worker, at 40 deltas only
    (a message of 80 deltas would kill it again), and the run goes on to the end."""
    ran = _bench(
        capsys,
        project,
        f"slow_assemblers:{target}",
        *_TWO_SCENARIOS,
    )
    assert ran.code == 1, ran.out + ran.err
    stream, interleaved = _report(project)["results"]
    assert said in stream["error"]
    assert "Warning" not in stream["error"]  # the worker's stderr is the target's alone
    assert [point["size"] for point in stream["points"]] == [40]
    assert stream["skips"][0]["size"] == 80
    assert stream["skips"][0]["interrupted"] is True
    assert interleaved["error"] is None  # 64 messages: none reaches 60 deltas
    assert [point["size"] for point in interleaved["points"]] == [40, 80, 160]
    row = next(line for line in ran.out.splitlines() if line.startswith("slow_assemblers:"))
    assert row.split()[2:4] == ["stopped", "-"]
    assert f"slow_assemblers:{target} raised or died" in ran.out


def test_a_forged_error_is_shown_escaped(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A step's error from the target, not from tokasm's worker, reaches no terminal raw."""
    ran = _bench(capsys, project, "slow_assemblers:ForgesAnError", *_TWO_SCENARIOS)
    assert ran.code == 1, ran.out + ran.err
    assert _report(project)["results"][0]["error"] == "\\x1b[2J\\x1b[31mforged"
    assert "\x1b" not in ran.out + ran.err


@pytest.mark.usefixtures("short_overrun")
def test_a_run_that_hangs_is_stopped_and_the_sweep_goes_on(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run still silent after its deadline is killed: that size is ``stopped``, with why;
    the sizes measured keep their figures, and the next scenario runs in a new worker."""
    ran = _bench(
        capsys,
        project,
        "slow_assemblers:HangsOnALongMessage",
        *_TWO_SCENARIOS,
    )
    assert ran.code == 0, ran.out + ran.err
    stream, interleaved = _report(project)["results"]
    assert stream["error"] is None
    [skip] = stream["skips"]
    assert (skip["size"], skip["interrupted"]) == (80, True)
    assert skip["reason"].startswith("hung: no answer after 0.5")
    assert [point["size"] for point in interleaved["points"]] == [40, 80, 160]
    assert "slow_assemblers:HangsOnALongMessage stopped at 80: hung: no answer after" in ran.out


def test_what_a_target_prints_is_never_taken_for_a_result(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _bench(
        capsys,
        project,
        "slow_assemblers:PrintsEveryDelta",
        "--only",
        *TINY,
        "--no-memory",
        "--scenario",
        "stream_then_finalize",
        "--json",
        "out.json",
    )
    assert ran.code == 0, ran.out + ran.err
    [result] = _report(project)["results"]
    assert [point["size"] for point in result["points"]] == [40, 80, 160]


def test_a_copy_per_delta_class_is_found_by_the_length_of_its_text(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``text = text + delta`` copies the text: appends to a text of 1M characters cost far
    more than to one of 64k, and its stream is quadratic whatever the sweep's small sizes
    show. A list of parts does not."""
    ran = _bench(
        capsys,
        project,
        "mine:Impl",
        "chunked",
        "--only",
        "--quick",
        "--repeats",  # 3: on 3.13 a first round at 1M characters can pay the page faults
        "3",  # of fresh memory alone, so two rounds' slopes disagree (``inconclusive``)
        "--scenario",
        "append_to_long",
        "--scenario",
        "stream_then_finalize",
        "--sizes",
        "1k,2k,4k",
        "--json",
        "out.json",
        "--quiet",
    )
    assert ran.code == 0, ran.out + ran.err
    mine, mine_stream, chunked, chunked_stream = _report(project)["results"]
    assert mine["points"][0]["size"] == QUICK.texts[0]  # the text length, not the deltas
    assert mine["verdict"] == "grows", ran.out
    assert chunked["verdict"] in {"constant", "inconclusive"}
    assert mine_stream["long_text"]["verdict"] == "grows"
    assert mine_stream["verdict"] == "quadratic", ran.out
    # at 1k to 4k deltas a loaded machine may read it superlinear; its texts keep it linear
    assert chunked_stream["verdict"] not in {"quadratic", "worse than quadratic"}


def test_a_copy_every_64_deltas_is_found_on_long_texts(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A class that joins its parts into one string every 64 deltas copies its text once per
    64 events: its stream is quadratic though the sweep's small sizes read linear, and on a
    long text a batch of hundreds of events shows the copy where a run of 50 can miss it
    (on texts up to 16M characters: one of 1M can be copied from the caches, unseen)."""
    ran = _bench(
        capsys,
        project,
        *("slow_assemblers:CompactsEvery64Deltas", "chunked", "--only", "--repeats", "3"),
        *("--scenario", "stream_then_finalize", "--sizes", "1k,2k,4k"),
        *("--json", "out.json", "--quiet"),
    )
    assert ran.code == 0, ran.out + ran.err
    mine, chunked = _report(project)["results"]
    assert mine["long_text"]["verdict"] == "grows", ran.out
    assert mine["verdict"] == "quadratic", ran.out
    assert chunked["verdict"] not in {"quadratic", "worse than quadratic"}  # as above


def test_a_lookup_over_every_finalized_id_is_found_over_many_messages(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each event of a class that keeps its finalized ids in a list scans them: one message
    after another, the stream is quadratic; one message, or 64 interleaved, show nothing."""
    ran = _bench(
        capsys,
        project,
        *("slow_assemblers:FinalizedIdsInAList", "chunked", "--only", "--quick", "--budget", "3"),
        *("--repeats", "5", "--scenario", "message_after_message", "--scenario", "interleaved"),
        *("--sizes", "4k,8k,16k", "--json", "out.json", "--quiet"),
    )
    assert ran.code == 0, ran.out + ran.err
    mine, mine_interleaved, chunked, _ = _report(project)["results"]
    assert mine["scenario"] == "message_after_message"
    assert mine["verdict"] in {"quadratic", "at least superlinear"}, ran.out  # 1k messages
    assert mine["long_text"] is None  # its messages are short: no long text is timed
    assert mine_interleaved["verdict"] in {"linear", "inconclusive"}
    assert chunked["verdict"] not in {"quadratic", "worse than quadratic"}  # as above


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
    assert result["skipped_sizes"] == [80]  # and nothing is tried above a skip
    assert result["memory"] is None  # the traced run is predicted too
    [skip] = result["skips"]
    assert (skip["size"], skip["phase"], skip["limit"]) == (80, "time", "budget")
    assert skip["reason"].startswith("over --budget: predicted ")
    assert _report(project)["max_time_reached"] is False
    row = next(line for line in ran.out.splitlines() if line.startswith(SLOW))
    assert row.split()[2:] == ["skip", "-", "-", "-", "-", "-"]  # and no growth: one text
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
    measured, on_long_text, skipped = _cell_log(ran)
    assert measured.startswith(f"{cell} 40: ")
    assert " per event [" in measured
    assert on_long_text.startswith(f"{cell}: ")
    assert " per event on 64k characters [" in on_long_text
    assert skipped.startswith(f"{cell} 80: skipped, over --budget: predicted ")
    assert _bench(capsys, project, *SLOW_ALONE, "--sizes", "40", "--quiet").err == ""


def test_a_quadratic_class_cannot_stretch_the_sweep_past_max_time(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a budget of a day, only --max-time stops the climb: the first size predicted to
    end past the bench_target's share of it is not started, and is reported as such."""
    ran = _bench(
        capsys,
        project,
        *SLOW_ALONE,
        "--scenario",
        "get_after_final",
        "--sizes",
        "1k,4k,16k,64k,256k",
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
    assert len(report["results"]) == 2
    for result in report["results"]:
        assert 256_000 not in [point["size"] for point in result["points"]]
        [skip] = result["skips"]
        assert skip["limit"] == "max-time"
        assert skip["reason"].startswith("over --max-time: predicted ")
    assert "max-time: not run, it would have ended past --max-time (1 s)" in ran.out
    assert "--max-time 1 s reached: " in ran.out
    assert "stopped by --max-time 1 s" in ran.out
    assert "max-time" in (project / "out.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("option", "path", "message"),
    [
        ("--json", "/proc/nope/x.json", "cannot create its folder"),
        ("--markdown", "/proc/nope/x.md", "cannot create its folder"),
        ("--json", "folder", "is a folder"),
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
    assert line.startswith(f"tokasm bench: error: {option} {path!r}: {message}")


def test_a_protocol_testee_is_measured_per_request(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    testee = f"{sys.executable} -m tokasm.protocol.testee chunked"
    ran = _bench(
        capsys,
        project,
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
    args = ["chunked", "list-join", "--only", *TINY, "--no-memory", "--scenario", "get_after_final"]
    args += ["--plot", str(plot)]
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


def test_a_target_whose_loading_hangs_exits_2(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given twice --timeout and the worker's start: both short here, as it hangs anyway."""
    monkeypatch.setattr("tokasm.bench._sweep.START_SECONDS", 0.3)
    (project / "stuck.py").write_text("import time\ntime.sleep(600)\n", encoding="utf-8")
    ran = _bench(capsys, project, "stuck:Impl", *TINY, "--timeout", "0.1")
    assert ran.code == 2
    assert "tokasm bench: error: target 'stuck:Impl': loading it hung: no answer after" in ran.err
    assert ran.out == ""


def test_in_process_measures_the_same_scenarios(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _bench(
        capsys,
        project,
        "mine:Impl",
        "--only",
        "--in-process",
        *TINY,
        "--no-memory",
        "--scenario",
        "stream_then_finalize",
        "--json",
        "out.json",
    )
    assert ran.code == 0, ran.out + ran.err
    [result] = _report(project)["results"]
    assert [point["size"] for point in result["points"]] == [40, 80, 160]


class _Priced:
    """An assembler whose every event costs ``linear`` plus ``growth`` per event before it, on
    a clock of its own: the timings of a sweep are known exactly."""

    now = 0.0

    def __init__(self, linear: float, growth: float) -> None:
        self.linear, self.growth, self.events = linear, growth, 0

    def apply(self, event: Event) -> str | None:
        _Priced.now += self.linear + self.growth * self.events
        self.events += 1
        return "" if event.get("final") else None

    def get(self, message_id: str) -> str | None:
        return ""


@pytest.mark.parametrize(
    ("growth", "rounds"), [(0.0, 3), (8e-12, 3), (2e-10, 15)], ids=["clear", "settled", "in doubt"]
)
def test_rounds_go_on_only_while_the_verdict_is_in_doubt(growth: float, rounds: int) -> None:
    """Linear: 3 rounds give the verdict. A small term growing with the count of events, not
    the text, is settled by the long texts. A larger one puts the exponent on the edge of
    superlinear and quadratic: the rounds go on to --repeats, where more can settle it."""
    series = Series(SCENARIOS["stream_then_finalize"], BenchTarget("priced", False))
    settings = dataclasses.replace(QUICK, memory=False, budget=600.0)
    bench = Bench(lambda: _Priced(6e-7, growth), lambda: _Priced.now, settings.batch)
    climb(series, bench, settings, math.inf)
    assert {len(point.batches) for point in series.points} == {rounds}
