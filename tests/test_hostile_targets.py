"""Hostile values and errors: nothing a target returns or raises decides tokasm's exit status,
reaches its output unescaped or loses a report.

Each test runs ``tokasm check`` on small hostile modules written to a temporary folder,
in this process (``tokasm_here``): the target runs in its worker, which is the boundary
(what a target does to its process is test_supervisor's hostile family). Each asserts the
exit code, that no traceback reached the output and, where reports were asked for, that
they are valid (JSON Schema, parseable JUnit). The pytest route trusts its targets: it
runs inline (what a target raises is the case's failure; a hanging one is isolated),
but where the test signals it.
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
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest

from helpers import QUICK, Ran, running_processes, tokasm_here
from tokasm.corpus._load import load_corpus
from tokasm.corpus._paths import spec_dir

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


pytest_plugins = ["pytester"]

FAST = ("--fuzz-examples", "0", "-k", "append.basic", "-k", "seed.example")

RAISERS = """\
import sys
from tokasm.implementations import ListJoinAssembler

class Custom(BaseException):
    pass

def deep_helper(error):
    raise error

ERRORS = {
    "Exits": lambda: SystemExit(3),
    "ExitsZero": lambda: SystemExit(0),
    "Interrupts": KeyboardInterrupt,
    "GeneratorExits": GeneratorExit,
    "CustomBase": lambda: Custom("\\x1b[31mred\\nnew line\\ud83d"),
}

class Raises(ListJoinAssembler):
    def apply(self, event):
        if event["id"] == "ApplyExits":
            sys.exit(0)
        return super().apply(event)

    def get(self, message_id):
        deep_helper(ERRORS[message_id]())
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

VALUES = {
    "NastyValue": Nasty,
    "LyingClass": Liar,
    "OddStrWrong": lambda: OddStr("wrong"),
    "HugeText": lambda: "\\x1b[31m\\ud83d\\n" * 2_000_000,
    "LoudRepr": Loud,
    "HugeList": lambda: ["x"] * 1_000_000,
    "Bytes": lambda: b"The " * 100_000,
}

class Returns(ListJoinAssembler):
    def get(self, message_id):
        return VALUES[message_id]()

class RightOddStr(ListJoinAssembler):
    def get(self, message_id):
        text = super().get(message_id)
        return None if text is None else OddStr(text)

    def apply(self, event):
        text = super().apply(event)
        return None if text is None else OddStr(text)
"""

HANGS = """\
import time
from tokasm.implementations import ListJoinAssembler

class Spins(ListJoinAssembler):
    def get(self, message_id):
        while True:
            pass

class SleepsOnceMarked(ListJoinAssembler):
    def get(self, message_id):
        open("hanging", "w").close()
        time.sleep(3600)
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

RETURNED = {"ReturnsClassRaises": ClassRaises, "ReturnsOfNameRaises": OfNameRaises}
RAISED = {
    "RaisesClassRaises": ErrorClassRaises,
    "RaisesWithHostileTb": ErrorWithHostileTb,
    "RaisesOfNameRaises": ErrorOfNameRaises,
}

class ReturnsOrRaises(ListJoinAssembler):
    def get(self, message_id):
        if message_id in RAISED:
            raise RAISED[message_id]()
        return RETURNED[message_id]()
"""

EXIT_AT_IMPORT = "import sys\nsys.exit(0)\n"

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


def _one_case_each(folder: Path, names: list[str]) -> tuple[str, ...]:
    """``check`` options for ``folder``'s cases alone: one per name, ``hostile.NAME``
    (lowercase), that applies a delta to the message NAME, then reads it back (``get``). A
    hostile module does in each case what its message's id names, in one worker."""
    folder.mkdir()
    cases = "".join(
        f"  - id: hostile.{name.lower()}\n    description: {name}\n    requirements: [GET-TEXT]\n"
        f"    steps:\n      - apply: {{id: {name}, delta: 'The '}}\n        returns: null\n"
        f"      - get: {name}\n        returns: 'The '\n"
        for name in names
    )
    (folder / "cases.yaml").write_text(f"description: hostile\ncases:\n{cases}", encoding="utf-8")
    return ("--cases", str(folder), "--no-bundled", *QUICK)


# 1. Nothing a target raises decides the exit status --------------------------------------


RAISING = ["Exits", "ExitsZero", "Interrupts", "GeneratorExits", "CustomBase", "ApplyExits"]


def _line(source: str, text: str) -> int:
    """The number of the line of ``source`` that is ``text``."""
    return source.splitlines().index(text) + 1


def test_base_exception_from_an_operation_errors_that_case_naming_the_users_frames(
    project: Path,
) -> None:
    """SystemExit, KeyboardInterrupt (not a Ctrl-C), GeneratorExit or the target's own
    BaseException: each errors its case, shown escaped, at the user's frames not tokasm's;
    the other target is checked as usual."""
    chosen = _one_case_each(project / "raising", RAISING)
    ran = tokasm_here(project, "check", "raisers:Raises", "chunked", *chosen, *REPORTS)
    assert ran.code == 1
    _no_traceback(ran)
    assert "CONFORMANCE FAILED" in ran.out
    report = _check_reports(project)
    assert set(_outcomes(report, "chunked").values()) == {"passed"}
    assert set(_outcomes(report, "raisers:Raises").values()) == {"errored"}
    for name in RAISING:
        assert f"ERRORED raisers:Raises::hostile.{name.lower()} " in ran.out
    assert "raised KeyboardInterrupt" in ran.out
    assert "interrupted" not in ran.err
    assert "Custom('\\x1b[31mred\\nnew line\\ud83d')" in ran.out
    assert "\x1b" not in ran.out
    raisers = str(project / "raisers.py")
    assert (
        f"at {raisers}:{_line(RAISERS, '        deep_helper(ERRORS[message_id]())')} in get"
        in ran.out
    )
    assert f"at {raisers}:{_line(RAISERS, '    raise error')} in deep_helper" in ran.out
    assert "runner.py" not in ran.out
    assert "targets.py" not in ran.out


def test_debug_shows_the_full_traceback_of_the_users_code(project: Path) -> None:
    chosen = _one_case_each(project / "raising", ["CustomBase"])
    ran = tokasm_here(project, "check", "raisers:Raises", *chosen, "--debug")
    assert ran.code == 1
    line = _line(RAISERS, "    raise error")
    assert f'File "{project / "raisers.py"}", line {line}, in deep_helper' in ran.out
    assert "raise error" in ran.out
    assert "deep_helper(ERRORS[message_id]())" in ran.out
    assert "targets.py" not in ran.out


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
    chosen = _one_case_each(project / "values", list(SHOWN))
    ran = tokasm_here(project, "check", "values:Returns", *chosen, *REPORTS)
    assert ran.code == 1
    _no_traceback(ran)
    for name, shown in SHOWN.items():
        block = ran.out.split(f"FAILED values:Returns::hostile.{name.lower()} ", 1)[1]
        assert shown in block.split("FAILED", 1)[0], name
    assert "\x1b" not in ran.out
    assert len(ran.out) < 10_000 * len(SHOWN)
    report = _check_reports(project)
    assert "\x1b" not in json.dumps(report)  # what reports say of a target goes through _display
    assert os.path.getsize(project / "r.json") < 100_000


def test_isolate_fails_a_result_that_is_not_text_as_in_process_without_a_testee_fault(
    project: Path,
) -> None:
    """The protocol carries text or null only; the Python testee answers anything else so
    that the step fails, never as a testee fault, which restarts it and, five cases in a
    row, opens the circuit breaker on cases that pass."""
    chosen = _one_case_each(project / "values", list(SHOWN))
    in_worker = tokasm_here(project, "check", "values:Returns", *chosen, *REPORTS)
    outcomes = _outcomes(_check_reports(project), "values:Returns")
    isolated = tokasm_here(project, "check", "values:Returns", "--isolate", *chosen, *REPORTS)
    assert (in_worker.code, isolated.code) == (1, 1), isolated.out
    assert _outcomes(_check_reports(project), "values:Returns") == outcomes
    assert set(outcomes.values()) == {"failed"}
    assert "testee fault" not in isolated.out
    assert "circuit breaker" not in isolated.out


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

ATTRIBUTE_ACTS = [
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
    attributes = _one_case_each(project / "attributes", ATTRIBUTE_ACTS)
    ran = tokasm_here(project, "check", "attributes:ReturnsOrRaises", *attributes, *REPORTS)
    assert ran.code == 1, ran.out + ran.err
    _no_traceback(ran)
    outcomes = _outcomes(_check_reports(project), "attributes:ReturnsOrRaises")
    assert len(outcomes) == len(ATTRIBUTE_ACTS), ran.out
    assert set(outcomes.values()) <= {"failed", "errored"}, ran.out
    lost = tokasm_here(project, "check", "lost_source:Raises", *FAST, *REPORTS)
    assert lost.code == 1, lost.out + lost.err
    _no_traceback(lost)
    assert _outcomes(_check_reports(project), "lost_source:Raises")["append.basic"] == "errored"


def test_a_str_subclass_with_the_right_text_passes_whatever_it_overrides(project: Path) -> None:
    ran = tokasm_here(project, "check", "values:RightOddStr", *FAST)
    assert ran.code == 0, ran.out
    _no_traceback(ran)


# 2. Each target gets its own copy of each event; caller habits (EVENT-OWNED) -------------

#: Habit mutants through the CLI, with correct targets on either side, and the rule each
#: breaks: one that keeps events, and two whose swapped keys once passed or ended the run
#: (a key that is no string names no field, whatever it claims to equal).
#: test_blame runs every such mutant on the whole corpus and finds no other rule blamed.
HABITS = {
    "KeepsEvents": "EVENT-OWNED",
    "SwapsIdKeyForOneOfATrappedType": "EVENT-OWNED",
    "SwapsIdKeyForStrImpostor": "EVENT-OWNED",
}


def test_caller_habit_mutants_break_event_owned_and_no_one_else_is_blamed(project: Path) -> None:
    mutants = [f"mutants:{name}" for name in HABITS]
    ran = tokasm_here(
        project,
        *("check", "chunked", *mutants, "list-join", "-k", "caller.*", "-k", "append.basic"),
        *("--profile", "strict", *QUICK),  # the probe reads texts a mutant got wrong too
        *REPORTS,
    )
    assert ran.code == 1
    _no_traceback(ran)
    report = _check_reports(project)
    for name, rule in HABITS.items():
        failed = [c for c in _cases(report, f"mutants:{name}") if c["outcome"] == "failed"]
        assert failed, name
        assert all(c["requirements"][0] == rule for c in failed), name
        assert all(c["message"].startswith(f"breaks {rule}") for c in failed), name
    for correct in ("chunked", "list-join"):
        assert "failed" not in _outcomes(report, correct).values()


def test_an_implementation_keeping_its_own_copies_conforms(project: Path) -> None:
    ran = tokasm_here(project, "check", "copies:SnapshotsEvents", "-k", "caller.*", *FAST, *QUICK)
    assert ran.code == 0, ran.out


_SUITE = ("--pyargs", "tokasm.conformance", "-p", "no:cacheprovider")
#: Hypothesis's pytest plugin imports hypothesis at the end of every session (0.6 s);
#: a pytest process that runs no fuzz item is spared it.
_NO_HYPOTHESIS_PLUGIN = ("-p", "no:hypothesispytest")


def _conformance(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest on the conformance suite, inline: the route trusts its targets, and turns
    what they raise, BaseException too, into the case's failure."""
    return pytester.runpytest_inprocess(*_SUITE, *args)


def test_the_pytest_route_errors_the_case_not_the_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(raisers=RAISERS, exits_at_import=EXIT_AT_IMPORT)
    _one_case_each(pytester.path / "raising", RAISING)
    result = _conformance(
        *(pytester, "--tokasm-assembler", "raisers:Raises", "--tokasm-assembler", "list-join"),
        *("--tokasm-cases", "raising", "--tokasm-no-bundled", "-k", "hostile"),
    )
    assert result.ret == 1
    outcomes = result.parseoutcomes()
    assert (outcomes["failed"], outcomes["passed"]) == (len(RAISING), len(RAISING))
    assert "Traceback" not in result.stdout.str()
    loading = _conformance(pytester, "--tokasm-assembler", "exits_at_import:A")
    assert loading.ret == pytest.ExitCode.USAGE_ERROR
    loading.stderr.fnmatch_lines(["*--tokasm-assembler: target 'exits_at_import:A'*SystemExit*"])


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
    )
    assert result.ret == 1
    outcomes = result.parseoutcomes()
    callers = sum("caller" in case.id and case.profile == "required" for case in load_corpus())
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


# 3. The pytest route: a hanging target, a cancelled run ------------------------------


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
        "append.basic",
    )
    assert result.ret == 1
    assert result.parseoutcomes()["failed"] == 1
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
