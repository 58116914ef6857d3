"""Run the cost probes (CACHE-FINAL, STREAM-LINEAR) repeatedly while CPU burners load the machine.

    python benchmarks/cost_under_load.py [--runs 3] [--burners 2] [--only REGEX] [--cmd LINE ...]

The CACHE-FINAL probe must flag every wrong cache and pass every correct
target in each run, however busy the machine. Wrong: tests/mutants.py's
COST_MUTANTS and naive-join, in process and served over the protocol (but
those the protocol cannot see, ``IN_PROCESS_ONLY``). Correct: JoinsOnceAtFinal,
the cached bundled backends, tests/unusual.py's UNUSUAL and
tests/test_cost.py's correct fast paths in process; JoinsOnceAtFinal, chunked
and the Node testee over the protocol; any --cmd given (expected "failed" if
its command line contains "uncached"). STREAM-LINEAR (strict) must find
str-concat's copy per delta and nothing in chunked, list-join and stringio,
both routes. Prints one line per probe, then the tally, false positives and
false negatives apart, with the slowest passing in-process probe; exits 1 if
any verdict was wrong.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tokasm.implementations import BACKENDS
from tokasm.protocol._client import CommandTarget, python_testee_command
from tokasm.run._cost import probe_cache_final, probe_stream_linear
from tokasm.run.targets import PythonTarget, Target

if TYPE_CHECKING:
    from collections.abc import Callable

    from tokasm.run.results import CaseResult

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
NODE_TESTEE = ROOT / "testees" / "node" / "tokasm-testee.js"
_BURN = "while True: pass"
_STREAM_LINEAR = {"str-concat": True, "chunked": False, "list-join": False, "stringio": False}


def _strict_stream(subject: Target) -> CaseResult:
    return probe_stream_linear(subject, strict=True)


def _targets(commands: list[str]) -> list[tuple[str, Callable[[], Target], bool, str]]:
    """(label, subject factory, wrong, probe): probe is 'cache' or 'stream'."""
    import test_cost  # tests/ is on the path by now
    from mutants import COST_MUTANTS, JoinsOnceAtFinal
    from unusual import UNUSUAL

    def python(name: str, factory: Callable[[], object]) -> Callable[[], Target]:
        return lambda: PythonTarget(factory, name)  # type: ignore[arg-type]

    def command(line: list[str]) -> Callable[[], Target]:
        return lambda: CommandTarget(line)

    correct: dict[str, Callable[[], object]] = {
        "JoinsOnceAtFinal": JoinsOnceAtFinal,
        **{name: cls for name, cls in BACKENDS.items() if name != "naive-join"},
        **UNUSUAL,
        **{
            cls.__name__: cls
            for cls in vars(test_cost).values()
            if isinstance(cls, type)
            and issubclass(cls, JoinsOnceAtFinal)
            and cls.__module__ == "test_cost"
        },
    }
    wrong: dict[str, Callable[[], object]] = {**COST_MUTANTS, "naive-join": BACKENDS["naive-join"]}
    targets = [
        (f"{name} (in process)", python(name, cls), True, "cache") for name, cls in wrong.items()
    ]
    targets += [
        (f"{name} (in process)", python(name, f), False, "cache") for name, f in correct.items()
    ]
    protocol = {
        f"mutants:{cls.__name__}": True
        for cls in COST_MUTANTS.values()
        if not getattr(cls, "IN_PROCESS_ONLY", False)
    }
    protocol |= {"mutants:JoinsOnceAtFinal": False, "chunked": False, "naive-join": True}
    targets += [
        (f"{target} (protocol)", command(python_testee_command(target)), uncached, "cache")
        for target, uncached in protocol.items()
    ]
    targets.append(
        ("tokasm-testee.js (protocol)", command(["node", str(NODE_TESTEE)]), False, "cache")
    )
    for name, found in _STREAM_LINEAR.items():
        targets.append((f"{name} (in process)", python(name, BACKENDS[name]), found, "stream"))
        targets.append(
            (f"{name} (protocol)", command(python_testee_command(name)), found, "stream")
        )
    targets += [
        (f"{line} (protocol)", command(shlex.split(line)), "uncached" in line, "cache")
        for line in commands
    ]
    return targets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--cmd", action="append", default=[], metavar="COMMAND LINE")
    parser.add_argument("--only", default="", metavar="REGEX", help="probes whose label matches")
    args = parser.parse_args()
    sys.path.insert(0, str(TESTS))
    os.chdir(TESTS)  # so protocol testees import mutants too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so the burners are killed
    burners = [subprocess.Popen([sys.executable, "-c", _BURN]) for _ in range(args.burners)]
    false_positives = false_negatives = probes = 0
    slowest = 0.0
    try:
        for run in range(1, args.runs + 1):
            for label, subject_of, wrong, which in _targets(args.cmd):
                if not re.search(args.only, f"{which} {label}"):
                    continue
                subject = subject_of()
                probe = probe_cache_final if which == "cache" else _strict_stream
                started = time.perf_counter()
                try:
                    result = probe(subject)
                finally:
                    subject.close()
                seconds = time.perf_counter() - started
                probes += 1
                expected = "failed" if wrong else "passed"
                ok = result.outcome == expected
                false_positives += not ok and not wrong
                false_negatives += not ok and wrong
                if ok and not wrong and which == "cache" and "in process" in label:
                    slowest = max(slowest, seconds)
                said = (result.message or result.note).splitlines()[0]
                print(
                    f"run {run} {'ok ' if ok else 'BAD'} {which:6} {label:44} "
                    f"{result.outcome:7} {seconds:5.2f} s  {said}",
                    flush=True,
                )
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    print(
        f"{probes} probes: {false_positives} false positives, {false_negatives} false "
        f"negatives, {args.burners} CPU burners running throughout; slowest passing "
        f"in-process CACHE-FINAL probe {slowest:.2f} s"
    )
    return 1 if false_positives or false_negatives else 0


if __name__ == "__main__":
    raise SystemExit(main())
