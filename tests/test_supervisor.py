"""The trust boundary: whatever a Python target does to its process costs the case it ran.

The hostile family is one target, a correct assembler that misbehaves in each case of one
run in another way: ``tokasm check`` runs it in a worker process, and each such case errors,
saying what happened, while the case after it passes, in the same run, with every report
written. Where what the target does cannot reach tokasm's own process, tokasm runs in the
test's (``tokasm_here``): the worker is the boundary either way.
"""

from __future__ import annotations

import json
import os
import resource
import select
import shutil
import signal
import subprocess
import textwrap
from pathlib import Path

import jsonschema
import pytest

from helpers import QUICK, tokasm_cmd, tokasm_here, tokasm_program, tokasm_started
from tokasm.corpus import spec_dir

#: What the target does in the case ``hostile.KIND``, and what that case's error says (None:
#: it passes, and so does the next case, in the same worker). What leaves the worker
#: answering comes last; its thread then keeps that worker from exiting when it is closed.
HOSTILE = {
    "sys-exit": ("sys.exit(0)", "raised SystemExit"),
    "os-exit": ("os._exit(0)", "exited with code 0 without answering"),
    "segfault": ("ctypes.string_at(0)", "killed by SIGSEGV"),
    "kill-itself": ("os.kill(os.getpid(), signal.SIGKILL)", "killed by SIGKILL"),
    "finalizer": (  # of its instance, which ends with the case, not with the next one's new
        "sys._getframe(1).f_locals['self'].doomed = Doomed()",
        "exited with code 5",
    ),
    "memory": ('hoard = b"x" * (1 << 34)', "raised MemoryError"),
    "hang": ("while True: pass", "no response within 0.5 s"),
    "hang-deaf-to-signals": (
        "for signum in (signal.SIGABRT, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):\n"
        "    signal.signal(signum, signal.SIG_IGN)\n"
        "time.sleep(3600)",
        "no response within 0.5 s",
    ),
    "close-descriptors": ("os.closerange(0, 1 << 10)", "without answering"),
    "redirect-descriptors": (
        "null = os.open(os.devnull, os.O_RDWR)\nfor fd in range(1 << 10):\n    os.dup2(null, fd)",
        "without answering",
    ),
    "garble-the-channel": (  # its own line on every descriptor it may write to
        "for fd in range(3, 64):\n    try:\n        os.write(fd, b'garbage\\n')\n"
        "    except OSError:\n        pass",
        "not JSON",
    ),
    "flood": ("sys.stdout.write('x' * (16 << 20)); os._exit(3)", "exited with code 3"),
    "fork": ("os.fork()", None),  # only the worker answers: the next case's WRONG is seen
    "prints": (
        "print('printed'); print('to sys.__stdout__', file=sys.__stdout__)\n"
        "os.write(1, b'to fd 1\\n'); subprocess.run(['echo', 'a child prints'])\n"
        "threading.Thread(target=print_forever).start()  # and keeps the worker from exiting",
        None,
    ),
    "sabotage": (
        "os.umask(0o777); sys.addaudithook(lambda *args: None)\n"
        "time.monotonic = time.perf_counter = time.time = lambda: 0.0\n"
        "for signum in (signal.SIGABRT, signal.SIGTERM, signal.SIGINT):\n"
        "    signal.signal(signum, signal.SIG_IGN)\n"
        "stream = sys.stdout; stream.close(); stream.write = stream.flush = sys.exit\n"
        "sys.stdout = sys.stderr = sys.__stdout__ = None",
        None,
    ),
    "use-up-descriptors": (
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\n"
        "try:\n    while True: KEPT.append(open(os.devnull))\nexcept OSError:\n    pass",
        None,
    ),
}

_MODULE = """\
import atexit, ctypes, os, resource, signal, subprocess, sys, threading, time
from tokasm import TokenAssembler

KEPT = []

class Hostile(TokenAssembler):
    def apply(self, event):
        if event["id"] == "wrong":
            return "WRONG"
        globals().get("act_" + event["id"].replace("-", "_"), int)()
        return super().apply(event)

class HangsAtExit(TokenAssembler):
    def __init__(self):
        super().__init__()
        atexit.register(time.sleep, 3600)

class Doomed:
    def __del__(self):
        os._exit(5)

def print_forever():
    while True:
        os.write(1, b"a thread of the target\\n")
        time.sleep(0.01)
"""


def _case(case_id: str, message_id: str) -> str:
    return (
        f"  - id: {case_id}\n    description: {case_id}\n    requirements: [FINAL-RETURN]\n"
        f"    steps:\n      - apply: {{id: {message_id}, delta: x, final: true}}\n"
        "        returns: x\n"
    )


def _family(folder: Path) -> list[str]:
    """``folder/hostile.py`` and ``folder/cases/family.yaml``: ``user.first``, then each
    ``hostile.KIND`` and ``after.KIND`` (a correct answer, but ``WRONG`` after a fork).
    Returns the case ids in order."""
    (folder / "cases").mkdir()
    module, cases, ids = [_MODULE], ["description: the hostile family\ncases:\n"], ["user.first"]
    cases.append(_case("user.first", "first"))
    for kind, (body, _) in HOSTILE.items():
        module.append(f"\ndef act_{kind.replace('-', '_')}():\n{textwrap.indent(body, '    ')}\n")
        cases.append(_case(f"hostile.{kind}", kind))
        cases.append(_case(f"after.{kind}", "wrong" if kind == "fork" else f"after-{kind}"))
        ids += [f"hostile.{kind}", f"after.{kind}"]
    (folder / "hostile.py").write_text("".join(module))
    (folder / "cases" / "family.yaml").write_text("".join(cases))
    return ids


def test_each_hostile_act_costs_its_case_and_the_run_goes_on(tmp_path: Path) -> None:
    """One run of the hostile family (``hostile:Hostile``), then a target that hangs at exit:
    each hostile act costs its own case and no other, what the target writes never reaches
    the report on stdout, and the other target is checked as usual. A hung call is reported
    with its stack (from the worker's faulthandler). Meanwhile another run's target hangs
    at import: a load error, with the stack of the hung import."""
    (tmp_path / "hangs_at_import.py").write_text("import threading\nthreading.Event().wait()\n")
    loading = tokasm_started(
        tmp_path, "check", "hangs_at_import:A", "--timeout", "1", *QUICK,
        shortened={"tokasm.protocol._client.LOAD_TIMEOUT": 3.0},
    )  # fmt: skip
    ids = _family(tmp_path)
    ran = tokasm_cmd(
        tmp_path,
        *("check", "hostile:Hostile", "hostile:HangsAtExit", "--cases", "cases", "--no-bundled"),
        *("--timeout", "0.5", "--json", "-", *QUICK),
        shortened={"tokasm.protocol._client.EXIT_GRACE": 0.5},  # each hang at exit costs it
    )
    _, loaded = loading.communicate(timeout=120)
    assert ran.code == 1, ran
    report = json.loads(ran.out)  # nothing the target wrote is in it
    jsonschema.validate(report, json.loads((spec_dir() / "report.schema.json").read_text()))
    hostile, other = report["runs"]
    results = {result["id"]: result for result in hostile["cases"]}
    assert list(results) == ids, ran.err
    assert results["user.first"]["outcome"] == "passed"
    for kind, (_, said) in HOSTILE.items():
        hit, after = results[f"hostile.{kind}"], results[f"after.{kind}"]
        if said is None:
            assert hit["outcome"] == "passed", (kind, hit)
        else:
            assert (hit["outcome"], said in hit["message"]) == ("errored", True), (kind, hit)
        assert after["outcome"] == ("failed" if kind == "fork" else "passed"), (kind, after)
    assert "in act_hang\n" in results["hostile.hang"]["message"]  # the hung frame
    assert (other["target"], other["conforms"]) == ("hostile:HangsAtExit", True), ran.err
    assert "CONFORMANCE FAILED" in ran.err
    assert loading.returncode == 2, loaded
    assert "'hangs_at_import:A': loading it failed" in loaded
    assert "no response within 3 s" in loaded
    assert "hangs_at_import.py" in loaded  # the hung frame, from faulthandler


@pytest.mark.parametrize(
    ("source", "target", "said"),
    [
        ("raise RuntimeError('no import for you')", "A", "RuntimeError: no import for you"),
        ("import os\nos._exit(0)", "A", "exited with code 0"),
        ("import sys\nsys.exit(0)", "A", "SystemExit"),
        ("class Boom(BaseException):\n    pass\nraise Boom('at import')", "A", "Boom"),
        ("import sys\ndef factory():\n    sys.exit(0)", "factory", "SystemExit"),
        (
            "from tokasm.implementations import ListJoinAssembler\n"
            "class A(ListJoinAssembler):\n"
            "    read_since = property(lambda self: 1 / 0)",
            "A",
            "looking up its methods raised ZeroDivisionError",
        ),
        (
            "import sys\nfrom tokasm.implementations import ListJoinAssembler\n"
            "class A(ListJoinAssembler):\n"
            "    read_since = property(lambda self: sys.exit(0))",
            "A",
            "looking up its methods raised SystemExit",
        ),
    ],
    ids=[
        *("raises", "os-exit", "sys-exit", "base-exception", "factory-exits", "method-raises"),
        "method-exits",
    ],
)
def test_a_target_that_cannot_load_is_a_usage_error(
    tmp_path: Path, source: str, target: str, said: str
) -> None:
    """What ends the worker's import of the target, or its first instance: exit 2, saying so."""
    (tmp_path / "broken.py").write_text(source + "\n")
    ran = tokasm_here(tmp_path, "check", f"broken:{target}", *QUICK)
    assert ran.code == 2, ran
    line = ran.err.splitlines()[0]
    assert f"target 'broken:{target}'" in line, ran
    assert said in line, ran
    assert "Traceback" not in ran.err, ran


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (
            "from tokasm.implementations import ListJoinAssembler\n"
            "class A(ListJoinAssembler):\n    apply = property(lambda self: sys.exit(0))",
            "looking up its methods raised SystemExit(0)",
        ),
        ("def __getattr__(name):\n    sys.exit(0)", "looking up 'A' raised SystemExit(0)"),
    ],
    ids=["method", "module-getattr"],
)
def test_a_lookup_that_exits_in_process_is_a_usage_error(
    tmp_path: Path, source: str, said: str
) -> None:
    """In tokasm's own process too: not tokasm ending with the target's status 0, unsaid."""
    (tmp_path / "broken.py").write_text(f"import sys\n{source}\n")
    ran = tokasm_cmd(tmp_path, "check", "broken:A", "--in-process", *QUICK)
    assert ran.code == 2, ran
    assert f"target 'broken:A': {said}" in ran.err, ran


def test_ctrl_c_during_an_in_process_import_is_an_interrupt(tmp_path: Path) -> None:
    """Not 'cannot import module ...: TokasmInterrupt', a usage error's exit 2."""
    fifo = tmp_path / "importing"
    os.mkfifo(fifo)
    (tmp_path / "slow.py").write_text(
        "import time\nopen('importing', 'w').close()\ntime.sleep(3600)\n"
    )
    process = tokasm_started(tmp_path, "check", "slow:A", "--in-process", *QUICK)
    try:
        fifo.read_text()  # the import is under way
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert (process.returncode, err) == (130, "tokasm: interrupted\n")


def test_a_target_faulting_every_case_trips_the_breaker(tmp_path: Path) -> None:
    (tmp_path / "dying.py").write_text(
        "import os\nfrom tokasm import TokenAssembler\n"
        "class Dying(TokenAssembler):\n    def apply(self, event):\n        os._exit(9)\n"
    )
    ran = tokasm_here(tmp_path, "check", "dying:Dying", "chunked", "-k", "append.*", *QUICK)
    assert ran.code == 1, ran
    assert "circuit breaker" in ran.out, ran
    card = [line.split() for line in ran.out.splitlines() if line.startswith(("dying", "chunked"))]
    assert [(row[0], row[-1]) for row in card] == [
        ("dying:Dying", "NONCONFORMING"),
        ("chunked", "conforms"),  # the other target is checked as usual
    ], ran


def test_in_process_runs_the_target_in_tokasm(tmp_path: Path) -> None:
    """``--in-process`` trusts the target: its prints reach tokasm's own stdout (that the
    worker's do not is the hostile family's to show)."""
    (tmp_path / "chatty.py").write_text(
        "from tokasm import TokenAssembler\n"
        "class Chatty(TokenAssembler):\n"
        "    def apply(self, event):\n"
        "        print('chatty says hi')\n"
        "        return super().apply(event)\n"
    )
    here = tokasm_here(tmp_path, "check", "chatty:Chatty", "-k", "seed.*", "--in-process", *QUICK)
    assert here.code == 0, here
    assert "chatty says hi" in here.out, here


@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [
        (signal.SIGINT, 130, "interrupted"),
        (signal.SIGTERM, 143, "terminated"),
        (signal.SIGHUP, -signal.SIGHUP, ""),  # its terminal gone: tokasm dies by it, as it would
    ],
)
def test_ctrl_c_or_sigterm_ends_the_run_and_its_worker(
    tmp_path: Path, signum: signal.Signals, code: int, said: str
) -> None:
    """The signal reaches tokasm while the target sleeps through everything in its worker:
    the run ends with the signal's status, and the worker's whole group goes with it (it ends
    by SIGKILL: told by its pidfd, reaped by tokasm or, after a SIGHUP, by init)."""
    fifo = tmp_path / "in-the-call"
    os.mkfifo(fifo)
    (tmp_path / "sleeper.py").write_text(
        "import os, signal, time\nfrom tokasm import TokenAssembler\n"
        "class Sleeper(TokenAssembler):\n"
        "    def apply(self, event):\n"
        "        signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "        signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "        with open('in-the-call', 'w') as told:\n"
        "            told.write(str(os.getpid()))\n"
        "        time.sleep(3600)\n"
    )
    process = tokasm_started(tmp_path, "check", "sleeper:Sleeper", "-k", "seed.example", *QUICK)
    try:
        worker = os.pidfd_open(int(fifo.read_text()))  # the target is in its call now
        process.send_signal(signum)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == code, err
    assert said in err
    assert select.select([worker], [], [], 60)[0], "the worker still runs"
    os.close(worker)


def test_a_target_may_be_given_by_its_files_path(tmp_path: Path) -> None:
    """Modules of the project's named as standard ones shadow nothing tokasm's worker imports,
    Hypothesis for the fuzz phase included (each reported the run NONCONFORMING)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "stream.py").write_text(
        "from tokasm.implementations import ListJoinAssembler as Mine\n"
    )
    for shadow in ("queue", "datetime", "decimal", "heapq"):
        (tmp_path / "src" / f"{shadow}.py").write_text("raise SystemExit('shadowed')\n")
    fuzz = ("--fuzz-examples", "2", "--no-cost-probe")
    by_path = f"{tmp_path}/src/stream.py:Mine"
    for target, checks in (("./src/stream.py:Mine", fuzz), (by_path, QUICK)):
        ran = tokasm_here(tmp_path, "check", target, "-k", "seed.example", *checks)
        assert ran.code == 0, ran


_LONG_CASE = """\
description: one case of many calls
cases:
  - id: user.many-calls
    description: forty deltas, then the final
    requirements: [APPEND]
    steps:
      - repeat: 40
        steps:
          - apply: {id: m, delta: "x"}
            returns: null
      - apply: {id: m, final: true}
        returns: "%s"
"""


def test_timeout_bounds_each_call_not_the_whole_case(tmp_path: Path) -> None:
    """A case of many calls, each well inside ``--timeout``, may take longer than it (here
    at least twice): the worker's heartbeats between the calls keep the case alive."""
    (tmp_path / "slow.py").write_text(
        "import time\nfrom tokasm import TokenAssembler\n"
        "class Slow(TokenAssembler):\n"
        "    def apply(self, event):\n"
        "        time.sleep(0.025)\n"
        "        return super().apply(event)\n"
    )
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "long.yaml").write_text(_LONG_CASE % ("x" * 40))
    ran = tokasm_here(
        tmp_path,
        "check",
        "slow:Slow",
        *("--cases", "cases", "--no-bundled", "--timeout", "0.5"),
        *QUICK,
    )
    assert ran.code == 0, ran


def test_a_target_that_stops_the_clocks_cannot_fail_the_cost_probes(tmp_path: Path) -> None:
    """As freezegun does, every module attribute holding a clock is frozen when the target
    loads (but those of the modules freezegun leaves alone), ``tokasm._clocks``'s too: the
    worker times the probes with the clocks it holds, and they end, and pass (they were
    skipped, the clock stopped); bench's worker times with them too."""
    (tmp_path / "frozen.py").write_text(
        "import sys, time\nfrom tokasm import TokenAssembler\n"
        "real = {id(time.monotonic), id(time.perf_counter), id(time.process_time),\n"
        "        id(time.thread_time)}\n"
        "left_alone = ('threading', 'multiprocessing', 'queue', '_pytest')\n"
        "for name, module in list(sys.modules.items()):\n"
        "    for attribute in dir(module) if not name.startswith(left_alone) else ():\n"
        "        try:\n"
        "            if id(getattr(module, attribute)) in real:\n"
        "                setattr(module, attribute, lambda: 0.0)\n"
        "        except Exception:\n"
        "            pass\n"
        "class Frozen(TokenAssembler):\n    pass\n"
    )
    ran = tokasm_here(
        tmp_path, "check", "frozen:Frozen", "-k", "cost.*", "--fuzz-examples", "0", "--json", "-"
    )
    assert ran.code == 0, ran
    probes = json.loads(ran.out)["runs"][0]["cases"]
    assert [probe["outcome"] for probe in probes] == ["passed", "passed"], probes  # not skipped
    bench = ("--only", "--sizes", "40", "--repeats", "1", "--no-memory", "--quiet")
    benched = tokasm_here(tmp_path, "bench", "frozen:Frozen", *bench, "--scenario", "interleaved")
    assert benched.code == 0, benched
    assert "stopped" not in benched.out, benched  # it hung, timing on a stopped clock


def test_in_process_a_second_ctrl_c_ends_a_run_whose_target_swallowed_the_first(
    tmp_path: Path,
) -> None:
    fifo = tmp_path / "in-the-call"
    os.mkfifo(fifo)
    (tmp_path / "swallows.py").write_text(
        "import time\nfrom tokasm import TokenAssembler\n"
        "class Swallows(TokenAssembler):\n"
        "    def apply(self, event):\n"
        "        told = open('in-the-call', 'w', buffering=1)\n"
        "        announced = False\n"
        "        while True:\n"
        "            try:  # announced in here, so that the first Ctrl-C lands in the try\n"
        "                announced = announced or told.write('in the call\\n')\n"
        "                time.sleep(3600)\n"
        "            except KeyboardInterrupt:\n"
        "                told.write('swallowed\\n')\n"
    )
    process = tokasm_started(
        tmp_path, "check", "swallows:Swallows", "--in-process", "-k", "seed.example", *QUICK
    )
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


_POISONS = {  # what a case does to its worker, and the check after the cases that meets it
    "fuzz-phase": (  # the fuzz phase imports Hypothesis: an audit hook refusing every open
        "sys.addaudithook(lambda event, args: refuse() if event == 'open' else None)",
        ("--fuzz-examples", "5", "--no-cost-probe"),
    ),
    "cost-probe": (  # the first cost probe seeds a Random: a seed that exits
        "random.Random.seed = lambda *args, **kwargs: os._exit(9)",
        ("--fuzz-examples", "0"),
    ),
}


@pytest.mark.parametrize("meets", list(_POISONS))
def test_a_worker_poisoned_by_a_case_costs_no_check_after_the_cases(
    tmp_path: Path, meets: str
) -> None:
    """A case poisons its worker (it passes, and so does the next): the fuzz phase or a cost
    probe faults in that worker, so it runs again in a fresh one, and the run conforms."""
    poison, options = _POISONS[meets]
    (tmp_path / "poison.py").write_text(
        "import os, random, sys\nfrom tokasm import TokenAssembler\n"
        "def refuse():\n"
        "    raise RuntimeError('no open for you')\n"
        "class Poison(TokenAssembler):\n"
        "    def apply(self, event):\n"
        "        if event['id'] == 'poison':\n"
        f"            {poison}\n"
        "        return super().apply(event)\n"
    )
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "poison.yaml").write_text(
        "description: a poisoning case\ncases:\n"
        + _case("user.poison", "poison")
        + _case("user.after", "after")
    )
    ran = tokasm_here(
        tmp_path, "check", "poison:Poison", "--cases", "cases", "--no-bundled", *options
    )
    assert ran.code == 0, ran
    assert "PROBLEM" not in ran.out + ran.err, ran
    assert "ERRORED" not in ran.out + ran.err, ran


def test_sigterm_ends_a_fuzz_run_with_143(tmp_path: Path) -> None:
    """Hypothesis takes a ``SystemExit`` for a failing example: the one tokasm's SIGTERM
    handler raises, so swallowed, still ends ``tokasm fuzz`` with 143 (it ended 0, "no
    disagreement", or fuzzed on in fresh workers)."""
    fifo = tmp_path / "in-the-call"
    os.mkfifo(fifo)
    (tmp_path / "hangs.py").write_text(
        "import os, time\nfrom tokasm import TokenAssembler\n"
        "class HangsOnce(TokenAssembler):\n"
        "    def apply(self, event):\n"
        "        if not os.path.exists('hung'):\n"
        "            open('hung', 'w').close()\n"
        "            with open('in-the-call', 'w') as told:\n"
        "                told.write('in the call\\n')\n"
        "            time.sleep(3600)\n"
        "        return super().apply(event)\n"
    )
    process = tokasm_started(tmp_path, "fuzz", "hangs:HangsOnce", "--timeout", "600")
    try:
        with fifo.open() as told:
            assert told.readline() == "in the call\n"
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 143, (out, err)


def test_fuzz_and_bench_show_a_dying_targets_stderr_escaped(tmp_path: Path) -> None:
    """The target writes terminal controls to stderr and ends its worker at its first apply:
    ``fuzz`` prints the fault escaped, and its saved counterexample loads back (a raw ESC is
    not YAML); ``bench`` shows it escaped too. A ``token.py`` of the user's beside it shadows
    no module of tokasm's workers (the folder is put on sys.path after tokasm's imports)."""
    (tmp_path / "token.py").write_text("TOKEN = 1\n")
    (tmp_path / "dies.py").write_text(
        "import os\nfrom tokasm import TokenAssembler\n"
        "class Dies(TokenAssembler):\n"
        "    def apply(self, event):\n"
        "        os.write(2, b'\\x1b]0;title\\x07\\x1b[31mred\\x00\\n')\n"
        "        os._exit(3)\n"
    )
    found = ("--examples", "1", "--shrink-budget", "0.01")  # each try restarts the worker
    fuzzed = tokasm_here(tmp_path, "fuzz", "dies:Dies", *found, "--save", "saved/")
    assert fuzzed.code == 1, fuzzed
    assert "exited with code 3" in fuzzed.out, fuzzed
    assert "\\x1b]0;title\\x07\\x1b[31mred\\x00" in fuzzed.out, fuzzed
    assert not {"\x1b", "\x07", "\x00"} & set(fuzzed.out), fuzzed
    loaded = tokasm_here(tmp_path, "check", "list-join", "--cases", "saved", "--no-bundled", *QUICK)
    assert loaded.code == 0, loaded
    bench = ("--only", "--sizes", "40", "--repeats", "1", "--no-memory")
    benched = tokasm_here(tmp_path, "bench", "dies:Dies", *bench, "--scenario", "interleaved")
    assert benched.code == 1, benched
    assert "\\x1b]0;title\\x07\\x1b[31mred\\x00" in benched.out, benched
    assert not {"\x1b", "\x07", "\x00"} & set(benched.out + benched.err), benched


@pytest.mark.parametrize(
    "target", ["ExitsWhenALongTextGoes", "RaisesOnALongTextThenExitsWhenItGoes"]
)
def test_an_assembler_dropped_at_the_end_of_its_bench_scenario_costs_that_scenario(
    tmp_path: Path, target: str
) -> None:
    """Its finalizer ends bench's worker: the scenario that kept it for its rounds (on a long
    text), whether it ended or raised, errors, not the next one, whose first step dropped it."""
    shutil.copy(Path(__file__).with_name("slow_assemblers.py"), tmp_path)
    bench = ("--only", "--quick", "--sizes", "40", "--repeats", "1", "--budget", "600")
    scenarios = ("--scenario", "stream_then_finalize", "--scenario", "reread_unchanged")
    options = ("--no-memory", "--quiet", "--json", "out.json")
    ran = tokasm_here(tmp_path, "bench", f"slow_assemblers:{target}", *bench, *scenarios, *options)
    assert ran.code == 1, ran
    stream, reread = json.loads((tmp_path / "out.json").read_text())["results"]
    assert "the worker ended (exit status 7)" in stream["error"], stream
    assert (reread["error"], len(reread["points"])) == (None, 1), reread


def test_a_finalizer_that_hangs_at_the_end_of_its_bench_scenario_errors_it(tmp_path: Path) -> None:
    """As one that ends the worker: its scenario errors, measured whole; no size of it
    stopped (the first was named), and the next scenario is measured in a new worker."""
    shutil.copy(Path(__file__).with_name("slow_assemblers.py"), tmp_path)
    bench = ("--only", "--quick", "--sizes", "40", "--repeats", "1", "--budget", "1")
    scenarios = ("--scenario", "stream_then_finalize", "--scenario", "reread_unchanged")
    target = "slow_assemblers:HangsWhenALongTextGoes"
    ran = tokasm_here(tmp_path, "bench", target, *bench, *scenarios, "--no-memory", "--quiet")
    assert ran.code == 1, ran
    assert "raised: at its end, dropping what it kept: hung: no answer" in ran.out, ran
    assert "stopped" not in ran.out, ran
    assert "| reread_unchanged | - |" in ran.out, ran  # measured (one size: no verdict)


def test_workers_are_bounded_in_memory_and_keep_the_limits_a_ci_job_sets(tmp_path: Path) -> None:
    """9 GiB of untouched pages (which use no memory) are a MemoryError in bench's worker as
    in check's. Under a CI job's hard ``ulimit -v`` below ``WORKER_MEMORY``, a worker keeps it
    (one cannot raise it: every worker failed to load); under its ``ulimit -t`` the CPU clock
    ticks, and the cost probes time on the wall clock (each was skipped: naive-join, which
    breaks CACHE-FINAL, conformed)."""
    (tmp_path / "hoards.py").write_text(
        "from tokasm import TokenAssembler\n"
        "class Hoards(TokenAssembler):\n"
        "    def apply(self, event):\n"
        "        hoard = bytearray(9 << 30)\n"
        "        return super().apply(event)\n"
    )
    bench = ("--only", "--sizes", "40", "--repeats", "1", "--no-memory", "--quiet")
    benched = tokasm_here(tmp_path, "bench", "hoards:Hoards", *bench, "--scenario", "interleaved")
    assert benched.code == 1, benched
    assert "raised: MemoryError" in benched.out, benched

    def ci_limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
        resource.setrlimit(resource.RLIMIT_CPU, (3600, 3600))

    selected = ("-k", "seed.example", "-k", "cost.cache-final", "--fuzz-examples", "0")
    checked = subprocess.run(
        [*tokasm_program(), "check", "hoards:Hoards", "naive-join", "--json", "-", *selected],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=ci_limits,
    )
    assert checked.returncode == 1, checked
    hoards, naive = (
        {case["id"]: case for case in run["cases"]} for run in json.loads(checked.stdout)["runs"]
    )
    assert "raised MemoryError" in hoards["seed.example"]["message"], hoards
    assert naive["cost.cache-final"]["outcome"] == "xfailed", naive
