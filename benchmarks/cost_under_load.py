"""Run the cost probe (CACHE-FINAL) repeatedly while CPU burners load the machine.

    python benchmarks/cost_under_load.py [--runs 3] [--burners 2] [--cmd "node x.js" ...]

The probe must flag every uncached target and pass every cached one in each
run, however busy the machine. Targets: tests/mutants.py's COST_MUTANTS
(each caching wrongly) and JoinsOnceAtFinal (RejoinsAfterFinal's code with
the cache), in process and served over the protocol (but those the protocol's
short texts hide); every bundled backend (naive-join is the
uncached one); the Node testee; and any --cmd given (expected verdict
"failed" if its command line contains "uncached", else "passed"). Prints one
line per probe and a tally; exits 1 if any verdict was wrong.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from tokasm.implementations import BACKENDS
from tokasm.protocol._client import CommandSubject
from tokasm.protocol.testee import python_testee_command
from tokasm.run._cost import probe_cache_final
from tokasm.run.subjects import PythonSubject, Subject

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
NODE_TESTEE = ROOT / "testees" / "node" / "tokasm-testee.js"
_BURN = "while True: pass"


def _targets(commands: list[str]) -> list[tuple[str, str, bool]]:
    """(label, how, uncached): how is 'py:MODULE:ATTR' or 'cmd:COMMAND LINE'."""
    from mutants import COST_MUTANTS  # tests/ is on the path by now

    uncached = [cls.__name__ for cls in COST_MUTANTS.values()]
    # Those the protocol's short texts hide (docs/cost.md) are flagged in process only.
    seen_over_the_protocol = [
        cls.__name__ for cls in COST_MUTANTS.values() if not getattr(cls, "IN_PROCESS_ONLY", False)
    ]
    targets = [
        *((f"{name} (in process)", f"py:mutants:{name}", True) for name in uncached),
        ("JoinsOnceAtFinal (in process)", "py:mutants:JoinsOnceAtFinal", False),
        *((f"{name} (in process)", f"py:{name}", name == "naive-join") for name in BACKENDS),
        *(
            (
                f"{name} (protocol)",
                "cmd:" + shlex.join(python_testee_command(f"mutants:{name}")),
                True,
            )
            for name in seen_over_the_protocol
        ),
        (
            "JoinsOnceAtFinal (protocol)",
            "cmd:" + shlex.join(python_testee_command("mutants:JoinsOnceAtFinal")),
            False,
        ),
        ("tokasm-testee.js (protocol)", f"cmd:node {shlex.quote(str(NODE_TESTEE))}", False),
    ]
    targets += [(f"{line} (protocol)", f"cmd:{line}", "uncached" in line) for line in commands]
    return targets


def _subject(how: str) -> Subject:
    kind, _, target = how.partition(":")
    if kind == "cmd":
        return CommandSubject(shlex.split(target))
    if target in BACKENDS:
        return PythonSubject(BACKENDS[target], target)
    module, _, attr = target.partition(":")
    return PythonSubject(getattr(__import__(module), attr), target)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--cmd", action="append", default=[], metavar="COMMAND LINE")
    args = parser.parse_args()
    sys.path.insert(0, str(TESTS))
    os.chdir(TESTS)  # so protocol testees import mutants too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so the burners are killed
    burners = [subprocess.Popen([sys.executable, "-c", _BURN]) for _ in range(args.burners)]
    wrong = 0
    try:
        for run in range(1, args.runs + 1):
            for label, how, uncached in _targets(args.cmd):
                subject = _subject(how)
                started = time.perf_counter()
                try:
                    result = probe_cache_final(subject)
                finally:
                    subject.close()
                seconds = time.perf_counter() - started
                expected = "failed" if uncached else "passed"
                ok = result.outcome == expected
                wrong += not ok
                said = " | ".join(result.message.splitlines()[:2])  # empty for a pass
                print(
                    f"run {run} {'ok ' if ok else 'BAD'} {label:42} {result.outcome:7} "
                    f"{seconds:5.2f} s  {said}",
                    flush=True,
                )
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    print(f"{wrong} wrong verdicts, {args.burners} CPU burners running throughout")
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
