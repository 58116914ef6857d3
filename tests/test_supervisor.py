"""The trust boundary: whatever a Python target does to its process costs the case it ran.

Each hostile target below is a correct assembler that misbehaves once, in the one case
that sends a message with the id ``boom``. ``tokasm check`` runs it in a worker process:
that case errors, saying what happened, and the cases before and after it pass, in the
same run, with every report written. Where what the target does cannot reach tokasm's own
process, tokasm runs in the test's (``tokasm_here``): the worker is the boundary either way.
"""

from __future__ import annotations

import json
import os
import signal
import textwrap
from typing import TYPE_CHECKING

import pytest

from helpers import QUICK, tokasm_cmd, tokasm_here, tokasm_started

if TYPE_CHECKING:
    from pathlib import Path

_CASES = """\
description: three messages, the middle one hostile
cases:
  - id: user.before
    description: a message, before the hostile one
    requirements: [FINAL-RETURN]
    steps:
      - apply: {id: m, delta: "hel"}
        returns: null
      - apply: {id: m, delta: "lo", final: true}
        returns: hello
  - id: user.hostile
    description: the message that makes the target misbehave
    requirements: [FINAL-RETURN]
    steps:
      - apply: {id: boom, delta: "x", final: true}
        returns: x
  - id: user.after
    description: a message, after the hostile one
    requirements: [FINAL-RETURN]
    steps:
      - apply: {id: n, delta: "bye", final: true}
        returns: bye
"""

_TARGET = """\
import ctypes, os, signal, sys, time
from tokasm import TokenAssembler

class Hostile(TokenAssembler):
    def apply(self, event):
        if event["id"] == "boom":
            misbehave()
        return super().apply(event)

def misbehave():
{body}
"""


def _three_cases(folder: Path, cases: str = _CASES) -> None:
    """``folder/cases/three.yaml``, for ``--cases cases --no-bundled``."""
    (folder / "cases").mkdir()
    (folder / "cases" / "three.yaml").write_text(cases)


#: What each target does in the hostile case, and what its error must say.
HOSTILE = {
    "sys-exit": ("sys.exit(0)", "SystemExit"),
    "os-exit": ("os._exit(0)", "exited with code 0"),
    "segfault": ("ctypes.string_at(0)", "SIGSEGV"),
    "hang": ("while True: pass", "no response within 2 s"),
    "sleep-with-signals-ignored": (
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(3600)",
        "no response within 2 s",
    ),
    "memory": ('hoard = b"x" * (1 << 34)', "MemoryError"),
    "close-descriptors": ("os.closerange(0, 1 << 10)", "without answering"),
    "kill-itself": ("os.kill(os.getpid(), signal.SIGKILL)", "SIGKILL"),
    "flood-stdout": ("sys.stdout.write('x' * (64 << 20)); os._exit(3)", "exited with code 3"),
    "sabotage-then-answer": (
        "os.umask(0o777); time.monotonic = lambda: 0.0; sys.addaudithook(lambda *a: None)",
        None,
    ),
}


def test_each_hostile_target_costs_one_case_of_one_run(tmp_path: Path) -> None:
    """One run of every hostile target (``hostile_KIND:Hostile``), one after another in the
    same tokasm process: each costs its hostile case and no other, and the targets after
    it are checked as usual. A hung call is reported with its stack (from the worker's
    faulthandler)."""
    for kind, (body, _) in HOSTILE.items():
        target = _TARGET.format(body=textwrap.indent(body, "    "))
        (tmp_path / f"hostile_{kind.replace('-', '_')}.py").write_text(target)
    _three_cases(tmp_path)
    report = tmp_path / "report.json"
    targets = [f"hostile_{kind.replace('-', '_')}:Hostile" for kind in HOSTILE]
    ran = tokasm_cmd(
        tmp_path,
        "check",
        *targets,
        *("--cases", "cases", "--no-bundled", "--timeout", "2", "--json", str(report)),
        *QUICK,
    )
    assert ran.code == 1, ran
    runs = json.loads(report.read_text())["runs"]
    assert [run["target"] for run in runs] == targets, ran
    for (kind, (_, said)), run in zip(HOSTILE.items(), runs, strict=True):
        outcomes = {result["id"]: result for result in run["cases"]}
        assert outcomes["user.before"]["outcome"] == "passed", (kind, ran)
        assert outcomes["user.after"]["outcome"] == "passed", (kind, ran)
        if said is None:
            assert outcomes["user.hostile"]["outcome"] == "passed", (kind, ran)
            assert run["conforms"], (kind, ran)
        else:
            assert outcomes["user.hostile"]["outcome"] == "errored", (kind, ran)
            assert said in outcomes["user.hostile"]["message"], (kind, ran)
            assert not run["conforms"], (kind, ran)
    assert "hostile_hang.py" in ran.out, ran  # the hung frame
    assert "in misbehave" in ran.out, ran


def test_a_target_that_cannot_load_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("raise RuntimeError('no import for you')\n")
    ran = tokasm_here(tmp_path, "check", "broken:Nothing", *QUICK)
    assert ran.code == 2, ran
    assert "broken" in ran.err, ran
    assert "RuntimeError: no import for you" in ran.err, ran


def test_a_target_that_exits_while_loading_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "gone.py").write_text("import os\nos._exit(0)\n")
    ran = tokasm_here(tmp_path, "check", "gone:Nothing", *QUICK)
    assert ran.code == 2, ran
    assert "'gone:Nothing'" in ran.err, ran
    assert "exited with code 0" in ran.err, ran


def test_a_target_faulting_every_case_trips_the_breaker(tmp_path: Path) -> None:
    (tmp_path / "dying.py").write_text(
        "import os\nfrom tokasm import TokenAssembler\n"
        "class Dying(TokenAssembler):\n    def apply(self, event):\n        os._exit(9)\n"
    )
    ran = tokasm_here(tmp_path, "check", "dying:Dying", "chunked", *QUICK)
    assert ran.code == 1, ran
    assert "circuit breaker" in ran.out, ran
    assert "chunked" in ran.out.splitlines()[-3] or "chunked" in ran.out, ran
    card = [line for line in ran.out.splitlines() if line.startswith("chunked ")]
    assert card, ran
    assert card[-1].split()[-1] == "conforms", ran  # the other target is checked as usual


def test_in_process_runs_the_target_in_tokasm(tmp_path: Path) -> None:
    """``--in-process`` trusts the target: its prints reach tokasm's own stdout."""
    (tmp_path / "chatty.py").write_text(
        "from tokasm import TokenAssembler\n"
        "class Chatty(TokenAssembler):\n"
        "    def apply(self, event):\n"
        "        print('chatty says hi')\n"
        "        return super().apply(event)\n"
    )
    worker = tokasm_cmd(tmp_path, "check", "chatty:Chatty", "-k", "seed.*", *QUICK)
    here = tokasm_cmd(tmp_path, "check", "chatty:Chatty", "-k", "seed.*", "--in-process", *QUICK)
    assert worker.code == here.code == 0, (worker, here)
    assert "chatty says hi" not in worker.out, worker
    assert "chatty says hi" in here.out, here


@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
)
def test_ctrl_c_or_sigterm_ends_the_run_and_its_worker(
    tmp_path: Path, signum: signal.Signals, code: int, said: str
) -> None:
    """The signal reaches tokasm while the target sleeps through everything in its worker:
    the run ends with the signal's status, and the worker's whole group goes with it."""
    fifo = tmp_path / "in-the-call"
    os.mkfifo(fifo)
    body = (
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"with open({str(fifo)!r}, 'w') as told: told.write(str(os.getpid()))\n"
        "time.sleep(3600)"
    )
    (tmp_path / "sleeper.py").write_text(_TARGET.format(body=textwrap.indent(body, "    ")))
    _three_cases(tmp_path)
    process = tokasm_started(
        tmp_path, "check", "sleeper:Hostile", "--cases", "cases", "--no-bundled", *QUICK
    )
    try:
        worker = int(fifo.read_text())  # the target is in its call now
        process.send_signal(signum)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == code, err
    assert said in err
    with pytest.raises(ProcessLookupError):
        os.kill(worker, 0)


def test_a_target_may_be_given_by_its_files_path(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "stream.py").write_text(
        "from tokasm.implementations import ListJoinAssembler as Mine\n"
    )
    for target in ("./src/stream.py:Mine", str(tmp_path / "src" / "stream.py") + ":Mine"):
        ran = tokasm_here(tmp_path, "check", target, "-k", "seed.example", *QUICK)
        assert ran.code == 0, ran


_LONG_CASE = """\
description: one case of many calls
cases:
  - id: user.many-calls
    description: a hundred deltas, then the final
    requirements: [APPEND]
    steps:
      - repeat: 100
        steps:
          - apply: {id: m, delta: "x"}
            returns: null
      - apply: {id: m, final: true}
        returns: "%s"
"""


def test_timeout_bounds_each_call_not_the_whole_case(tmp_path: Path) -> None:
    """A case of many calls, each well inside ``--timeout``, may take longer than it: the
    worker's heartbeats between the calls keep the case alive."""
    (tmp_path / "slow.py").write_text(
        "import time\nfrom tokasm import TokenAssembler\n"
        "class Slow(TokenAssembler):\n"
        "    def apply(self, event):\n"
        "        time.sleep(0.02)\n"
        "        return super().apply(event)\n"
    )
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "long.yaml").write_text(_LONG_CASE % ("x" * 100))
    ran = tokasm_here(
        tmp_path,
        "check",
        "slow:Slow",
        *("--cases", "cases", "--no-bundled", "--timeout", "1"),
        *QUICK,
    )
    assert ran.code == 0, ran


def test_a_forked_target_answers_once_per_request(tmp_path: Path) -> None:
    """A target that forks in one case: only the worker answers, so the next case's wrong
    answer is that case's failure, never hidden behind an extra answer from the child."""
    (tmp_path / "forks.py").write_text(
        "import os\nfrom tokasm import TokenAssembler\n"
        "class Forks(TokenAssembler):\n"
        "    def apply(self, event):\n"
        "        if event['id'] == 'boom':\n"
        "            os.fork()\n"
        "        if event['id'] == 'n':\n"
        "            return 'WRONG'\n"
        "        return super().apply(event)\n"
    )
    _three_cases(tmp_path)
    report = tmp_path / "report.json"
    ran = tokasm_here(
        tmp_path,
        "check",
        "forks:Forks",
        *("--cases", "cases", "--no-bundled", "--json", str(report)),
        *QUICK,
    )
    outcomes = {
        result["id"]: result["outcome"]
        for result in json.loads(report.read_text())["runs"][0]["cases"]
    }
    assert outcomes == {"user.before": "passed", "user.hostile": "passed", "user.after": "failed"}
    assert ran.code == 1, ran


def test_the_fuzz_phase_runs_in_the_worker_and_reports_what_it_found(tmp_path: Path) -> None:
    """A target that passes the cases given but not a bare final: the fuzz phase, run in
    the worker, finds it, and the run fails with the counterexample."""
    (tmp_path / "bare.py").write_text(
        "from tokasm import TokenAssembler\n"
        "class ForgetsBareFinals(TokenAssembler):\n"
        "    def apply(self, event):\n"
        "        text = super().apply(event)\n"
        "        return None if event.get('final') and 'delta' not in event else text\n"
    )
    _three_cases(tmp_path, _CASES.replace("boom", "m2"))
    ran = tokasm_here(
        tmp_path,
        "check",
        "bare:ForgetsBareFinals",
        *("--cases", "cases", "--no-bundled", "--no-cost-probe"),
    )
    assert ran.code == 1, ran
    assert "PROBLEM bare:ForgetsBareFinals: fuzz" in ran.out, ran


def test_a_target_that_stops_the_clocks_cannot_fail_the_cost_probes(tmp_path: Path) -> None:
    """The worker times the probes with the clocks taken before the target loaded."""
    (tmp_path / "frozen.py").write_text(
        "import time\nfrom tokasm import TokenAssembler\n"
        "time.process_time = time.perf_counter = time.monotonic = lambda: 0.0\n"
        "class Frozen(TokenAssembler):\n    pass\n"
    )
    ran = tokasm_here(tmp_path, "check", "frozen:Frozen", "-k", "cost.*", "--fuzz-examples", "0")
    assert ran.code == 0, ran


def test_in_process_a_second_ctrl_c_ends_a_run_whose_target_swallowed_the_first(
    tmp_path: Path,
) -> None:
    fifo = tmp_path / "in-the-call"
    os.mkfifo(fifo)
    body = (
        f"told = open({str(fifo)!r}, 'w', buffering=1)\n"
        "announced = False\n"
        "while True:\n"
        "    try:  # announced in here, so that the first Ctrl-C lands in the try\n"
        "        announced = announced or told.write('in the call\\n')\n"
        "        time.sleep(3600)\n"
        "    except KeyboardInterrupt:\n"
        "        told.write('swallowed\\n')"
    )
    (tmp_path / "swallows.py").write_text(_TARGET.format(body=textwrap.indent(body, "    ")))
    _three_cases(tmp_path)
    process = tokasm_started(
        tmp_path, "check", "swallows:Hostile", "--in-process", "--cases", "cases",
        "--no-bundled", *QUICK,
    )  # fmt: skip
    try:
        with fifo.open() as told:
            assert told.readline() == "in the call\n"
            process.send_signal(signal.SIGINT)
            assert told.readline() == "swallowed\n"
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, err
