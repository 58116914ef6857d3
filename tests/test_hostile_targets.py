"""Hostile in-process targets: nothing one does decides tokasm's exit status or loses a report.

Each test runs ``tokasm check`` (or pytest) in a real subprocess on small
hostile modules written to a temporary folder, and asserts the exit code, that
no traceback reached the output and, where reports were asked for, that they
are valid (JSON Schema, parseable JUnit). Only targets that are hostile to a
caller's expectations but not to the process (mutants of caller habits, a
``str`` subclass, a copying implementation) run in this process (tokasm_here,
or pytest inline): whatever raises BaseException, hangs, or leaves a thread or
an error hook behind keeps its subprocess.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import jsonschema
import pytest

from helpers import QUICK, Ran, running_processes, tokasm_cmd, tokasm_here
from tokasm.corpus._load import load_corpus
from tokasm.corpus._paths import spec_dir
from tokasm.implementations import ListJoinAssembler

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tokasm.implementations import Event

pytest_plugins = ["pytester"]

FAST = ("--fuzz-examples", "0", "-k", "append.basic", "-k", "seed.example")

RAISERS = """\
import sys
from tokasm.implementations import ListJoinAssembler

class Custom(BaseException):
    pass

def deep_helper(error):
    raise error

def make(error):
    class Raiser(ListJoinAssembler):
        def get(self, message_id):
            deep_helper(error)
    return Raiser

Exits = make(SystemExit(3))
ExitsZero = make(SystemExit(0))
Interrupts = make(KeyboardInterrupt())
GeneratorExits = make(GeneratorExit())
CustomBase = make(Custom("\\x1b[31mred\\nnew line\\ud83d"))

def factory_exits():
    sys.exit(0)

class ApplyExits(ListJoinAssembler):
    def apply(self, event):
        sys.exit(0)
"""

VALUES = """\
from tokasm.implementations import ListJoinAssembler

class Nasty:
    def __eq__(self, other): raise RuntimeError("eq")
    def __ne__(self, other): raise RuntimeError("ne")
    def __hash__(self): raise RuntimeError("hash")
    def __repr__(self): raise SystemExit(9)
    def __str__(self): raise KeyboardInterrupt
    def __len__(self): raise RuntimeError("len")
    def __bool__(self): raise RuntimeError("bool")

class Liar:
    __class__ = property(lambda self: str)
    def __repr__(self): return "'The '"

class OddStr(str):
    def __eq__(self, other): raise RuntimeError("eq")
    def __ne__(self, other): raise RuntimeError("ne")
    __hash__ = str.__hash__
    def __repr__(self): return "\\x1b[2Jgotcha\\n\\ud83d"
    def __str__(self): raise RuntimeError("str")
    def __len__(self): raise RuntimeError("len")
    def __iter__(self): raise RuntimeError("iter")
    def __getitem__(self, index): raise RuntimeError("getitem")

class Loud:
    def __repr__(self): return "\\x1b[31m" + "x" * 1_000_000 + "\\n\\ud83d"

def make(value):
    class Returns(ListJoinAssembler):
        def get(self, message_id):
            return value()
    return Returns

NastyValue = make(Nasty)
LyingClass = make(Liar)
OddStrWrong = make(lambda: OddStr("wrong"))
HugeText = make(lambda: "\\x1b[31m\\ud83d\\n" * 2_000_000)
LoudRepr = make(Loud)
HugeList = make(lambda: ["x"] * 1_000_000)
Bytes = make(lambda: b"The " * 100_000)

class RightOddStr(ListJoinAssembler):
    def get(self, message_id):
        text = super().get(message_id)
        return None if text is None else OddStr(text)

    def apply(self, event):
        text = super().apply(event)
        return None if text is None else OddStr(text)
"""

HANGS = """\
import sys
import threading
import time
from tokasm.implementations import ListJoinAssembler

class Sleeps(ListJoinAssembler):
    def get(self, message_id):
        print("hanging", file=sys.stderr, flush=True)
        time.sleep(3600)

class Spins(ListJoinAssembler):
    def get(self, message_id):
        while True:
            pass

class SleepsOnceMarked(ListJoinAssembler):
    def get(self, message_id):
        open("hanging", "w").close()
        time.sleep(3600)

class Waits(ListJoinAssembler):
    def get(self, message_id):
        threading.Event().wait()

class LeavesThread(ListJoinAssembler):
    def __init__(self):
        super().__init__()
        threading.Thread(target=threading.Event().wait).start()

class HangsAtExit(ListJoinAssembler):
    def __init__(self):
        super().__init__()
        import atexit
        atexit.register(time.sleep, 3600)

class _HangsWhenFreed:
    def __del__(self, sleep=time.sleep):
        sleep(3600)

KEPT_TILL_EXIT = _HangsWhenFreed()

class KeepsAGlobalThatHangsWhenFreed(ListJoinAssembler):
    pass

# Fails a case on a re-sent object, so the case is run again with a fresh dict per
# event, all kept till the case ends; into those it puts what hangs when freed.
class HangsWhenTheKeptEventsGo(ListJoinAssembler):
    def __init__(self):
        super().__init__()
        self.last = None
    def apply(self, event):
        text = super().apply(event)
        last, self.last = self.last, event
        if last is not None and event is last:
            return None if text is None else text + "?"
        if last is not None:
            event["junk"] = _HangsWhenFreed()
        return text

# Keeps the dict it was lent and, in get(), puts into it what hangs when freed: the
# caller empties that dict to lend it again, outside any call of the target's.
class HangsWhenTheLentDictIsRefilled(ListJoinAssembler):
    def __init__(self):
        super().__init__()
        self.kept = None
    def apply(self, event):
        self.kept = event
        return super().apply(event)
    def get(self, message_id):
        if self.kept is not None:
            self.kept["junk"] = _HangsWhenFreed()
        return super().get(message_id)

class _HangsWhenShown:
    def __repr__(self):
        threading.Event().wait()

# Returns a wrong value whose repr never returns: showing it is the target's code too.
class ReturnsWhatHangsWhenShown(ListJoinAssembler):
    def get(self, message_id):
        return _HangsWhenShown()

class _HangsWhenFreed:
    def __repr__(self):
        return "<hangs when freed>"
    def __del__(self):
        threading.Event().wait()

# Returns a wrong value whose finalizer never returns: dropping it is the target's code too.
class ReturnsWhatHangsWhenFreed(ListJoinAssembler):
    def apply(self, event):
        super().apply(event)
        return _HangsWhenFreed()

# Finalizers that run where tokasm drops the target's objects: an instance the next case
# replaces (the first one dropped is the probe tokasm makes at load), an error it raised.
class HangsWhenDropped(ListJoinAssembler):
    dropped = 0
    def __del__(self):
        HangsWhenDropped.dropped += 1
        if HangsWhenDropped.dropped > 1:
            threading.Event().wait()

class SleepsWhenDropped(ListJoinAssembler):
    dropped = 0
    def __del__(self):
        SleepsWhenDropped.dropped += 1
        if SleepsWhenDropped.dropped > 1:
            print("hanging", file=sys.stderr, flush=True)
            time.sleep(3600)

class _ErrorThatHangsWhenFreed(Exception):
    def __del__(self):
        threading.Event().wait()

class RaisesWhatHangsWhenFreed(ListJoinAssembler):
    def get(self, message_id):
        raise _ErrorThatHangsWhenFreed("boom")

class LeavesThreadThenSleeps(LeavesThread):
    def get(self, message_id):
        print("hanging", file=sys.stderr, flush=True)
        time.sleep(3600)

class SwallowsOneInterrupt(ListJoinAssembler):
    slept = False
    def get(self, message_id):
        if not SwallowsOneInterrupt.slept:
            SwallowsOneInterrupt.slept = True
            try:  # the signal is sent once "hanging" is read: it must land in here
                print("hanging", file=sys.stderr, flush=True)
                time.sleep(3600)
            except BaseException:
                pass
        return super().get(message_id)

class SleepsThroughEverything(ListJoinAssembler):
    def get(self, message_id):
        while True:
            try:
                print("hanging", file=sys.stderr, flush=True)
                time.sleep(3600)
            except BaseException:
                pass
"""

# Values and errors whose class, name or traceback is the target's code: reading any of
# them may raise (SystemExit(0) ended check with exit 0, no verdict, no report) or hang.
ATTRIBUTES = """\
from tokasm.implementations import ListJoinAssembler

class ClassRaises:
    @property
    def __class__(self):
        raise SystemExit(0)

class NameRaises(type):
    def __getattribute__(cls, name):
        if name in ("__name__", "__qualname__", "__module__"):
            raise SystemExit(0)
        return super().__getattribute__(name)

class OfNameRaises(metaclass=NameRaises):
    pass

class ErrorClassRaises(Exception):
    @property
    def __class__(self):
        raise SystemExit(0)

class ErrorWithHostileTb(Exception):
    @property
    def __traceback__(self):
        raise SystemExit(0)

class ErrorOfNameRaises(Exception, metaclass=NameRaises):
    pass

def returning(value):
    class Returns(ListJoinAssembler):
        def get(self, message_id):
            return value()
    return Returns

def raising(error):
    class Raises(ListJoinAssembler):
        def get(self, message_id):
            raise error()
    return Raises

ReturnsClassRaises = returning(ClassRaises)
ReturnsOfNameRaises = returning(OfNameRaises)
RaisesClassRaises = raising(ErrorClassRaises)
RaisesWithHostileTb = raising(ErrorWithHostileTb)
RaisesOfNameRaises = raising(ErrorOfNameRaises)
"""

NOISY = """\
import threading
from tokasm.implementations import ListJoinAssembler

def fails():
    raise RuntimeError("in thread")

class A(ListJoinAssembler):
    def __init__(self):
        super().__init__()
        thread = threading.Thread(target=fails)
        thread.start()
        thread.join()

    def __del__(self):
        raise ValueError("in del")
"""

HANGS_AT_IMPORT = """\
import threading
threading.Event().wait()
A = object
"""

EXIT_AT_IMPORT = "import sys\nsys.exit(0)\n"
BASE_AT_IMPORT = "class Boom(BaseException):\n    pass\nraise Boom('at import')\n"

# A correct implementation with an unusual but allowed relation to its events.
COPIES = """\
from tokasm.implementations import ListJoinAssembler

class SnapshotsEvents(ListJoinAssembler):
    \"\"\"Keeps a tuple snapshot of every event: its own copy, never the caller's object.\"\"\"

    def __init__(self):
        super().__init__()
        self.log = []

    def apply(self, event):
        self.log.append(tuple(event.items()))
        return super().apply(event)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name, source in {
        "raisers": RAISERS,
        "values": VALUES,
        "hangs": HANGS,
        "hangs_at_import": HANGS_AT_IMPORT,
        "exits_at_import": EXIT_AT_IMPORT,
        "base_at_import": BASE_AT_IMPORT,
        "copies": COPIES,
    }.items():
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    mutants = Path(__file__).with_name("mutants.py")
    (tmp_path / "mutants.py").write_text(mutants.read_text(encoding="utf-8"), encoding="utf-8")
    return tmp_path


def _no_traceback(ran: Ran) -> None:
    assert "Traceback" not in ran.out + ran.err


def _check_reports(folder: Path) -> dict[str, object]:
    schema = json.loads((spec_dir() / "report.schema.json").read_text(encoding="utf-8"))
    report: dict[str, object] = json.loads((folder / "r.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, schema)
    ET.parse(folder / "r.xml")
    return report


def _cases(report: dict[str, object], target: str) -> list[dict[str, Any]]:
    runs = report["runs"]
    assert isinstance(runs, list)
    (run,) = [run for run in runs if run["target"] == target]
    cases: list[dict[str, Any]] = run["cases"]
    return cases


def _outcomes(report: dict[str, object], target: str) -> dict[str, str]:
    return {case["id"]: case["outcome"] for case in _cases(report, target)}


REPORTS = ("--json", "r.json", "--junit", "r.xml")


# 1. Nothing a target does decides the exit status --------------------------------------


RAISING = ["Exits", "ExitsZero", "Interrupts", "GeneratorExits", "CustomBase", "ApplyExits"]


def test_base_exception_from_an_operation_errors_that_case(project: Path) -> None:
    targets = [f"raisers:{name}" for name in RAISING]
    ran = tokasm_cmd(project, "check", *targets, "chunked", *FAST, *REPORTS)
    assert ran.code == 1
    _no_traceback(ran)
    assert "CONFORMANCE FAILED" in ran.out
    report = _check_reports(project)
    assert set(_outcomes(report, "chunked").values()) == {"passed"}
    for target in targets:
        assert f"ERRORED {target}::" in ran.out
        assert "errored" in _outcomes(report, target).values()
    assert "\x1b" not in ran.out


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("exits_at_import:A", "SystemExit"),
        ("base_at_import:A", "Boom"),
        ("raisers:factory_exits", "SystemExit"),
    ],
)
def test_base_exception_while_loading_is_a_load_error(
    project: Path, target: str, said: str
) -> None:
    ran = tokasm_cmd(project, "check", target, *FAST, *REPORTS)
    assert ran.code == 2
    _no_traceback(ran)
    (line,) = ran.err.splitlines()
    assert target in line
    assert said in line


def test_the_pytest_route_errors_the_case_not_the_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(raisers=RAISERS, exits_at_import=EXIT_AT_IMPORT)
    targets = [arg for name in RAISING for arg in ("--tokasm-assembler", f"raisers:{name}")]
    result = _conformance(
        pytester, *targets, "--tokasm-assembler", "list-join", "-k", "append.basic"
    )
    assert result.ret == 1
    outcomes = result.parseoutcomes()
    assert (outcomes["failed"], outcomes["passed"]) == (len(RAISING), 1)
    assert "Traceback" not in result.stdout.str()
    loading = _conformance(pytester, "--tokasm-assembler", "exits_at_import:A")
    assert loading.ret == pytest.ExitCode.USAGE_ERROR
    loading.stderr.fnmatch_lines(["*--tokasm-assembler: target 'exits_at_import:A'*SystemExit*"])


def test_a_targets_own_keyboard_interrupt_is_not_a_ctrl_c(project: Path) -> None:
    ran = tokasm_cmd(project, "check", "raisers:Interrupts", *FAST)
    assert ran.code == 1
    assert "interrupted" not in ran.err
    assert "raised KeyboardInterrupt" in ran.out


SHOWN = {
    "NastyValue": "<values.Nasty: repr() raised SystemExit>",
    "LyingClass": "actual values.Liar",
    "OddStrWrong": "'wrong'",
    "HugeText": "(len 14000000)",
    "LoudRepr": "\\x1b[31mxxx",
    "HugeList": "['x', 'x', 'x'",
    "Bytes": "b'The The ",
}


def test_hostile_returned_values_are_shown_escaped_and_capped(project: Path) -> None:
    ran = tokasm_cmd(project, "check", *(f"values:{name}" for name in SHOWN), *FAST, *REPORTS)
    assert ran.code == 1
    _no_traceback(ran)
    for target, shown in SHOWN.items():
        block = ran.out.split(f"FAILED values:{target}::append.basic", 1)[1]
        assert shown in block.split("FAILED", 1)[0]
    assert "\x1b" not in ran.out
    assert len(ran.out) < 10_000 * len(SHOWN)
    report = _check_reports(project)
    assert "\x1b" not in json.dumps(report)  # what reports say of a target goes through _display
    assert os.path.getsize(project / "r.json") < 100_000


# A target whose frames come from a file that is not there, and whose module answers
# requests for that file's source: reading its traceback must not ask.
LOST_SOURCE = r"""
SOURCE = (
    "from tokasm.implementations import ListJoinAssembler\n"
    "class Raises(ListJoinAssembler):\n"
    "    def get(self, message_id):\n"
    "        raise RuntimeError('boom')\n"
)

class _Loader:
    def get_source(self, name):
        raise SystemExit(0)

exec(compile(SOURCE, "/nonexistent/lost_source.py", "exec"))
__loader__ = _Loader()
"""

ATTRIBUTE_TARGETS = [
    "ReturnsClassRaises",
    "ReturnsOfNameRaises",
    "RaisesClassRaises",
    "RaisesWithHostileTb",
    "RaisesOfNameRaises",
]


def test_what_a_target_returns_or_raises_cannot_end_the_run_through_its_attributes(
    project: Path,
) -> None:
    (project / "attributes.py").write_text(ATTRIBUTES, encoding="utf-8")
    (project / "lost_source.py").write_text(LOST_SOURCE, encoding="utf-8")
    targets = [f"attributes:{name}" for name in ATTRIBUTE_TARGETS] + ["lost_source:Raises"]
    ran = tokasm_cmd(project, "check", *targets, *FAST, *REPORTS)
    assert ran.code == 1, ran.out + ran.err
    _no_traceback(ran)
    report = _check_reports(project)
    for target in targets:
        assert _outcomes(report, target)["append.basic"] in ("failed", "errored"), target


def test_isolate_fails_a_result_that_is_not_text_as_in_process_without_a_testee_fault(
    project: Path,
) -> None:
    """The protocol carries text or null only; the Python testee answers anything else so
    that the step fails, never as a testee fault, which restarts it and, five cases in a
    row, opens the circuit breaker on cases that pass."""
    chosen = ("-k", "append.*", *QUICK)

    in_process = tokasm_here(project, "check", "values:HugeList", *chosen, *REPORTS)
    outcomes = _outcomes(_check_reports(project), "values:HugeList")
    isolated = tokasm_cmd(project, "check", "values:HugeList", "--isolate", *chosen, *REPORTS)
    assert (in_process.code, isolated.code) == (1, 1), isolated.out
    assert _outcomes(_check_reports(project), "values:HugeList") == outcomes
    assert "failed" in outcomes.values()
    assert "testee fault" not in isolated.out
    assert "circuit breaker" not in isolated.out


def test_a_str_subclass_with_the_right_text_passes_whatever_it_overrides(project: Path) -> None:
    ran = tokasm_here(project, "check", "values:RightOddStr", *FAST)
    assert ran.code == 0, ran.out
    _no_traceback(ran)


def test_escaping_covers_controls_newlines_and_lone_surrogates(project: Path) -> None:
    ran = tokasm_cmd(project, "check", "raisers:CustomBase", *FAST)
    assert "Custom('\\x1b[31mred\\nnew line\\ud83d')" in ran.out
    assert "\x1b" not in ran.out


# 2. Each target gets its own copy of each event; caller habits (EVENT-OWNED) -------------

#: Habit mutants through the CLI, with correct targets on either side: one that keeps
#: events, and two whose swapped keys once passed or ended the run. test_blame runs every
#: EVENT-OWNED mutant and finds no other rule blamed.
HABITS = ["KeepsEvents", "SwapsIdKeyForOneOfATrappedType", "SwapsIdKeyForStrImpostor"]


def test_caller_habit_mutants_break_event_owned_and_no_one_else_is_blamed(project: Path) -> None:
    mutants = [f"mutants:{name}" for name in HABITS]
    ran = tokasm_here(
        project,
        "check",
        "chunked",
        *mutants,
        "list-join",
        "--fuzz-examples",
        "0",
        "--no-cost-probe",  # the probe reads texts a habit-breaking target got wrong too
        *REPORTS,
    )
    assert ran.code == 1
    _no_traceback(ran)
    report = _check_reports(project)
    for mutant in mutants:
        failed = [c for c in _cases(report, mutant) if c["outcome"] == "failed"]
        assert failed, mutant
        assert all(c["requirements"][0] == "EVENT-OWNED" for c in failed), mutant
        assert all(c["message"].startswith("breaks EVENT-OWNED") for c in failed), mutant
    for correct in ("chunked", "list-join"):
        assert "failed" not in _outcomes(report, correct).values()


def test_an_implementation_keeping_its_own_copies_conforms(project: Path) -> None:
    ran = tokasm_here(project, "check", "copies:SnapshotsEvents", *QUICK)
    assert ran.code == 0, ran.out


_SUITE = ("--pyargs", "tokasm.conformance", "-p", "no:cacheprovider")
#: Hypothesis's pytest plugin imports hypothesis at the end of every session (0.6 s);
#: a pytest process that runs no fuzz item is spared it.
_NO_HYPOTHESIS_PLUGIN = ("-p", "no:hypothesispytest")


def _conformance(pytester: pytest.Pytester, *args: str, inline: bool = False) -> pytest.RunResult:
    """pytest on the conformance suite: in a subprocess, or inline for targets that are
    harmless to the process running them."""
    if inline:
        return pytester.runpytest_inprocess(*_SUITE, *args)
    return pytester.runpytest_subprocess(*_SUITE, *_NO_HYPOTHESIS_PLUGIN, *args)


def test_the_pytest_route_gives_each_target_its_own_events(pytester: pytest.Pytester) -> None:
    mutants = Path(__file__).with_name("mutants.py").read_text(encoding="utf-8")
    pytester.makepyfile(mutants=mutants)
    result = _conformance(
        pytester,
        "--tokasm-assembler",
        "mutants:PopsDelta",
        "--tokasm-assembler",
        "list-join",
        "-k",
        "caller",
        inline=True,
    )
    assert result.ret == 1
    outcomes = result.parseoutcomes()
    callers = sum("caller" in case.id for case in load_corpus())
    assert outcomes["failed"] == outcomes["passed"] == callers
    result.stdout.fnmatch_lines(["*breaks EVENT-OWNED*"])
    assert "FAILED*list-join/" not in result.stdout.str()
    assert all("list-join" not in line for line in result.stdout.lines if "FAILED" in line)


def test_the_one_liner_suite_plays_the_caller_habits_too(pytester: pytest.Pytester) -> None:
    mutants = Path(__file__).with_name("mutants.py").read_text(encoding="utf-8")
    pytester.makepyfile(
        mutants=mutants,
        test_mine="from tokasm.conformance import suite\n"
        "from mutants import KeepsEvents\n"
        "test_tokasm = suite(KeepsEvents)\n",
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-k", "caller")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*breaks EVENT-OWNED*"])


# 3. The user's own frames -----------------------------------------------------------------


def test_an_exception_names_the_users_frames_not_tokasms(project: Path) -> None:
    ran = tokasm_cmd(project, "check", "raisers:Exits", *FAST)
    _no_traceback(ran)
    raisers = str(project / "raisers.py")
    assert f"at {raisers}:13 in get" in ran.out
    assert f"at {raisers}:8 in deep_helper" in ran.out
    assert "runner.py" not in ran.out
    assert "subjects.py" not in ran.out


def test_debug_shows_the_full_traceback_of_the_users_code(project: Path) -> None:
    ran = tokasm_cmd(project, "check", "raisers:CustomBase", *FAST, "--debug")
    assert ran.code == 1
    assert f'File "{project / "raisers.py"}", line 8, in deep_helper' in ran.out
    assert "raise error" in ran.out
    assert "deep_helper(error)" in ran.out
    assert "subjects.py" not in ran.out


# 4. Loading and ending --------------------------------------------------------------------


def test_a_hang_at_import_is_a_load_error_with_its_stack(project: Path) -> None:
    short = {"tokasm.protocol._client.LOAD_TIMEOUT": 3.0}
    ran = tokasm_cmd(
        project, "check", "hangs_at_import:A", "--timeout", "1", *FAST, shortened=short
    )
    assert ran.code == 2, ran
    assert "'hangs_at_import:A': loading it failed" in ran.err, ran
    assert "no response within 3 s" in ran.err, ran
    assert "hangs_at_import.py" in ran.err, ran  # the hung frame, from faulthandler


_BENCH_ONE = ("--only", "--quick", "--scenario", "stream_then_finalize", "--no-memory")


@pytest.mark.parametrize(
    "target", ["hangs:LeavesThread", "hangs:HangsAtExit", "hangs:KeepsAGlobalThatHangsWhenFreed"]
)
def test_what_the_target_leaves_for_the_exit_does_not_keep_check_alive(
    project: Path, target: str
) -> None:
    """A thread, an atexit handler or a module global's finalizer that would wait forever
    at interpreter exit: the verdict and its status stand, and the program ends. One case
    shows it: the target leaves it behind at load (its probe instance) already."""
    ran = tokasm_cmd(project, "check", target, *QUICK, "-k", "append.basic")
    assert ran.code == 0, ran.err
    assert "CONFORMANCE PASSED" in ran.out


class _Freed:
    """Counts its instances' finalizers."""

    count = 0

    def __del__(self) -> None:
        type(self).count += 1


class _KeepsEventsAndTagsThem(ListJoinAssembler):
    """Keeps the last event it was lent and tags each later one: with a caller's habits
    (one dict, refilled) it fails a case; with fresh events it fails it again (EVENT-OWNED)."""

    def __init__(self) -> None:
        super().__init__()
        self.last: Any = None

    def apply(self, event: Event) -> str | None:
        text = super().apply(event)
        last, self.last = self.last, event
        if last is not None and event is last:
            return None if text is None else text + "?"
        if last is not None:
            cast("dict[str, object]", event)["tag"] = _Freed()
        return text


def _testees(folder: Path) -> Iterator[str]:
    """Command lines of running processes that serve a target from ``folder``."""
    for cwd, cmdline in running_processes():
        if cwd == str(folder) and "tokasm.protocol.testee" in cmdline:
            yield cmdline


def test_the_pytest_route_isolates_a_hanging_target(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(hangs=HANGS)
    result = _conformance(
        pytester,
        "--tokasm-assembler",
        "hangs:Spins",
        "--tokasm-isolate",
        "--tokasm-timeout",
        "0.5",
        "-k",
        "append.basic or seed.example",
        inline=True,  # the hanging target runs in its own testee process
    )
    assert result.ret == 1
    assert result.parseoutcomes()["failed"] == 2
    result.stdout.fnmatch_lines(["*no response within 0.5 s*"])
    assert list(_testees(pytester.path)) == []


def _until(condition: Callable[[], bool], seconds: float) -> bool:
    """Whether ``condition`` came true within ``seconds``, checked every 10 ms."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_sigterm_that_ends_the_pytest_route_ends_its_testees_first(
    pytester: pytest.Pytester,
) -> None:
    """pytest has no SIGTERM handler: a cancelled CI job ends it with no unconfigure and no
    atexit, and each testee, in a session of its own, would live on. (Under xdist, the
    controller is such a process too; its workers end their testees when they find the
    controller gone, a few seconds later.)"""
    pytester.makepyfile(hangs=HANGS)
    command = [sys.executable, "-m", "pytest", *_SUITE, *_NO_HYPOTHESIS_PLUGIN]
    command += ["--tokasm-assembler", "hangs:SleepsOnceMarked", "--tokasm-isolate"]
    command += ["--tokasm-timeout", "600", "-k", "seed.example"]
    process = subprocess.Popen(
        command, cwd=pytester.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        assert _until((pytester.path / "hanging").exists, 60), "no testee hangs"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == -signal.SIGTERM  # ended by the signal, as before
        assert _until(lambda: not any(_testees(pytester.path)), 10), list(_testees(pytester.path))
    finally:
        process.kill()
        process.wait()
