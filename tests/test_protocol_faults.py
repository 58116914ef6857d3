"""A testee that hangs, crashes or talks garbage costs one case; one that cannot start is exit 2.

Every testee here is a real process (tests/testees/faulty.py). Timeouts are
short so a hang costs half a second; nothing in the tests sleeps.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tokasm.cli import main
from tokasm.corpus import parse_case
from tokasm.corpus._load import load_corpus
from tokasm.errors import TargetError, TargetFault
from tokasm.protocol import PIPELINE_WINDOW, Process
from tokasm.protocol._client import CommandTarget
from tokasm.run.runner import run_case, run_cases

if TYPE_CHECKING:
    from tokasm.corpus._load import Case
    from tokasm.run.results import CaseResult

FAULTY = Path(__file__).resolve().parent / "testees" / "faulty.py"
GREEDY = FAULTY.with_name("greedy.py")
TIMEOUT = 0.25  # a hang costs this; far above a normal request (well under 1 ms)
STRIKE_AT = 4  # request number (hello is 1); well inside the first few cases


def faulty(mode: str, marker: Path | None = None) -> list[str]:
    argv = [sys.executable, str(FAULTY), mode]
    return argv if marker is None else [*argv, "--at", str(STRIKE_AT), "--marker", str(marker)]


@pytest.fixture(scope="module")
def few_cases() -> list[Case]:
    """The first required cases: each takes at least two requests, so request 4 is among them."""
    return [case for case in load_corpus() if case.profile == "required"][:6]


def run(argv: list[str], cases: list[Case]) -> list[CaseResult]:
    subject = CommandTarget(argv, timeout=TIMEOUT)
    try:
        return list(run_cases(subject, cases))
    finally:
        subject.close()


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("hang", f"no response within {TIMEOUT:g} s"),
        ("crash", "exited with code 3"),
        ("garbage", "invalid response 'this is not json'"),
    ],
)
def test_a_fault_once_costs_exactly_one_case(
    mode: str, reason: str, few_cases: list[Case], tmp_path: Path
) -> None:
    results = run(faulty(mode, tmp_path / "struck"), few_cases)
    outcomes = [result.outcome for result in results]
    assert outcomes.count("errored") == 1, outcomes
    assert outcomes.count("passed") == len(few_cases) - 1, outcomes
    struck = outcomes.index("errored")
    assert struck < len(outcomes) - 1, "later cases ran, and passed, on a fresh testee"
    message = results[struck].message
    assert message.startswith("testee fault at "), message  # names the step or the setup
    assert reason in message
    assert f"faulty testee: {mode} at request {STRIKE_AT}" in message  # the stderr tail


def test_a_hang_through_the_cli_errors_one_case_and_the_run_finishes(
    capsys: pytest.CaptureFixture[str], few_cases: list[Case], tmp_path: Path
) -> None:
    command = shlex.join(faulty("hang", tmp_path / "struck"))
    selected = [arg for case in few_cases for arg in ("-k", case.id)]
    code = main(["check", "-q", "--timeout", str(TIMEOUT), "--cmd", command, *selected])
    out = capsys.readouterr().out
    assert code == 1
    assert out.count("ERRORED ") == 1, out
    assert "CONFORMANCE FAILED" in out


def test_a_chatty_testee_cannot_deadlock_on_stderr(few_cases: list[Case]) -> None:
    results = run(faulty("chatty"), few_cases)
    assert [result.outcome for result in results] == ["passed"] * len(few_cases)


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (faulty("cannot-start"), "no configuration found"),  # stderr tail
        (faulty("wrong-version"), "protocol 2"),
        (["/nonexistent/tokasm-testee"], "cannot start it"),
        (["/"], "cannot start it: '/' is a folder, not a program"),
        (["sh", "-c", "echo my-testee ready; sleep 5"], "invalid response 'my-testee ready'"),
        (["sh", "-c", "read x; printf %s {ok"], "(only part of a line came: '{ok')"),
    ],
)
def test_a_testee_that_fails_to_start_or_greet_is_a_target_error(
    argv: list[str], reason: str
) -> None:
    with pytest.raises(TargetError) as raised:
        CommandTarget(argv, timeout=TIMEOUT)
    assert shlex.join(argv) in str(raised.value)
    assert reason in str(raised.value)


def test_a_child_gone_before_its_first_request_is_said_to_have_never_read_it() -> None:
    process = Process(["true"])
    process.popen.wait()  # gone for sure: its stdin has no reader
    with pytest.raises(TargetFault, match=r"^exited with code 0 before reading the request$"):
        process.write(b'{"op":"hello","protocol":1}\n')
    process.kill()


def test_a_testee_silent_at_hello_is_a_target_error_after_the_start_timeout() -> None:
    # A real hang: a quarter of a second will do. No request is ever answered, so the request
    # timeout is only there to differ from the start timeout, which the message must name.
    start = 0.25
    said = re.escape(f"no response within {start:g} s")
    with pytest.raises(TargetError, match=rf'"op":"hello".*: {said}\n.*flushes its output'):
        CommandTarget(faulty("silent-hello"), timeout=start / 5, start_timeout=start)


def test_the_cli_exits_2_naming_a_command_that_cannot_start(
    capsys: pytest.CaptureFixture[str],
) -> None:
    command = shlex.join(faulty("cannot-start"))
    code = main(["check", "--cmd", command, "--cmd", "/nonexistent/testee --flag"])
    err = capsys.readouterr().err
    assert code == 2
    assert command in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["'unbalanced", ""])
def test_a_malformed_command_line_exits_2(capsys: pytest.CaptureFixture[str], command: str) -> None:
    assert main(["check", "--cmd", command]) == 2
    assert "command" in capsys.readouterr().err


@pytest.mark.parametrize("seconds", ["0", "-1", "nan", "inf", "soon", "86401"])
def test_timeout_must_be_a_positive_number(
    capsys: pytest.CaptureFixture[str], seconds: str
) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["check", "--timeout", seconds, "list-join"])
    assert raised.value.code == 2
    assert "--timeout" in capsys.readouterr().err


HANGS_ON_UNSEEN = """\
import threading
from tokasm.implementations import ListJoinAssembler


class Impl(ListJoinAssembler):
    def get(self, message_id):
        if message_id == "unseen":
            threading.Event().wait()
        return super().get(message_id)
"""


def test_isolate_runs_a_hanging_python_target_in_its_own_process(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "hangs.py").write_text(HANGS_ON_UNSEEN, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    argv = ["check", "-q", "--isolate", "--timeout", str(TIMEOUT), "-k", "seed.example"]
    code = main([*argv, "hangs:Impl"])
    out = capsys.readouterr().out
    assert code == 1
    assert "ERRORED hangs:Impl::seed.example" in out
    assert f"no response within {TIMEOUT:g} s" in out


def test_isolate_exits_2_for_a_target_that_does_not_import(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", "--isolate", "no_such_module:Impl"]) == 2
    assert "no_such_module" in capsys.readouterr().err


@pytest.mark.parametrize("window", [PIPELINE_WINDOW, 1])
def test_requests_are_written_at_most_the_window_ahead(tmp_path: Path, window: int) -> None:
    """A case of 5,000 steps: the testee never holds more than the window's requests
    unanswered (PROTOCOL.md), and with a window it does hold more than one."""
    record = tmp_path / "most"
    apply = {"apply": {"id": "m", "delta": "a"}, "returns": None}
    document = {"id": "long", "description": "5,000 appends", "requirements": ["APPEND"],
                "steps": [{"repeat": 5000, "steps": [apply]}]}  # fmt: skip
    target = CommandTarget([sys.executable, str(GREEDY), str(record)], window=window)
    try:
        assert run_case(target, parse_case(document, tmp_path / "long.yaml")).outcome == "passed"
    finally:
        target.close()
    most = int(record.read_text())
    assert most <= window + 1  # the window, and the case's ``new``
    assert most > 1 or window == 1


def _one_apply(case_id: str) -> dict[str, object]:
    apply = {"apply": {"id": "m", "delta": "x", "final": True}, "returns": "x"}
    return {"id": case_id, "description": case_id, "requirements": ["FINAL-RETURN"],
            "steps": [apply]}  # fmt: skip


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("late-stray", "nobody asked for"),
        ("late-exit", "exited with code 3 after its last answer (after its case had ended"),
    ],
)
def test_a_stray_line_or_exit_after_its_case_costs_no_later_case(
    tmp_path: Path, mode: str, said: str
) -> None:
    """The testee writes a second answer to a case's last request, or exits, only once the
    case is over (request 3: hello, then the case's ``new`` and ``apply``): the next case runs
    as usual, in a fresh testee, and a problem of the run names that request."""
    told = tmp_path / "told"
    os.mkfifo(told)
    argv = [sys.executable, str(FAULTY), mode, "--at", "3", "--marker", str(told)]
    first, second = (parse_case(_one_apply(i), tmp_path / "c.yaml") for i in ("one", "two"))
    target = CommandTarget(argv, timeout=TIMEOUT)
    try:
        assert run_case(target, first).outcome == "passed"
        assert told.read_text() == ""  # the testee has written the stray line and closed
        result = run_case(target, second)
    finally:
        target.close()
    assert result.outcome == "passed", result.message
    (problem,) = target.problems
    assert said in problem, problem
    assert '"op":"apply"' in problem, problem
