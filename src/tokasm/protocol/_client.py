"""Supervise testee processes and speak the line protocol with them (spec/PROTOCOL.md).

The kit's one trust boundary is here: whatever runs a target's code (a foreign testee, or
tokasm's worker for a Python target) runs in a child process in a group of its own, and
tokasm's process reads only bytes from its pipes. Every read has a deadline (a worker's
heartbeat renews it); a timeout, exit, crash or bad line is a ``TargetFault`` that costs the
running case: the group is killed, a fresh child starts at the next case, and after
``BREAKER_FAULTS`` faulted cases in a row the rest error at once.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import replace
from subprocess import PIPE
from typing import IO, TYPE_CHECKING, Any, cast

from tokasm import errors
from tokasm._display import safe_block, show
from tokasm.errors import ImplementationError, ProtocolError, TargetError, TargetFault
from tokasm.protocol import _codec as codec
from tokasm.run import CaseResult, probe_named

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterator, Sequence
    from types import FrameType

    from tokasm.corpus._load import Case
    from tokasm.corpus.steps import Step
    from tokasm.run.targets import Foreign, StepOutcome

__all__ = [
    "DEFAULT_TIMEOUT", "PIPELINE_WINDOW", "START_TIMEOUT", "CommandTarget", "LineTooLong",
    "NoResponse", "Process", "WorkerTarget", "end_testees", "fatal_signals_kill_testees",
    "kill_testees", "python_child", "python_testee_command", "signal_name", "split_command",
    "testees_end_with_the_run",
]  # fmt: skip

#: Seconds a testee has to answer one request (``tokasm check --timeout``).
DEFAULT_TIMEOUT = 5.0
#: Seconds a testee has to start and answer hello, if more than the request timeout.
START_TIMEOUT = 10.0
#: Seconds a Python target has to load in the worker (an SDK may import hundreds of modules).
LOAD_TIMEOUT = 60.0
#: Faulted cases in a row after which a testee is not restarted and the rest error at once.
BREAKER_FAULTS = 5
#: Requests written ahead of their responses by default (``--no-pipeline`` makes it 1).
PIPELINE_WINDOW = 1024
#: The worker's line between a long case's steps: it renews the deadline, ``BEATS_FOR`` times.
HEARTBEAT = b'{"busy":true}'
BEATS_FOR = 60
#: The longest check's fuzz phase may take in the worker, shrinking included.
FUZZ_SECONDS = 60.0
#: Seconds a testee gets to exit after its stdin closes, before its group is killed.
EXIT_GRACE = 1.0
STDERR_TAIL_BYTES = 16 * 1024
STDERR_TAIL_LINES = 20
_STDERR_LINE_CHARS = 500
_ALIVE_CHECK = 0.1  # seconds between checks that the child still runs, while waiting
_STACKS, _STACK_LINES = "Fatal Python error: Aborted", 80  # a worker's stacks, kept whole

_LIVE: set[Process] = set()  # every child whose group is not yet killed
_TERMINATED: list[int] = []  # a SIGTERM came: no child starts (code may catch its SystemExit)
_HELLO = codec.encode(codec.hello_request())
#: Why a testee in another language may seem silent: its output to a pipe waits in a buffer.
_UNFLUSHED = (
    "\n(a testee writes each response as one line and flushes its output then: written to a "
    "pipe, stdout is buffered, e.g. print(..., flush=True) in Python, fflush(stdout) in C)"
)


def split_command(command_line: str) -> list[str]:
    try:
        return shlex.split(command_line)
    except ValueError as error:
        raise TargetError(f"command {command_line!r}: cannot split it: {error}") from None


def kill_testees() -> None:
    """Safe in a signal handler: no waiting."""
    for process in list(_LIVE):
        process.kill_group()


def end_testees() -> None:
    for process in list(_LIVE):
        process.kill()


atexit.register(end_testees)  # whatever route started them, none outlives tokasm


@contextlib.contextmanager
def testees_end_with_the_run() -> Iterator[None]:
    """Meanwhile SIGTERM or SIGINT kills every child group and ends the run (a second SIGINT
    at once: in process a target may swallow the first); at the end none is left."""
    interrupts: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        kill_testees()
        if signum == signal.SIGTERM:
            _TERMINATED.append(signum)
            os.write(2, b"tokasm: terminated\n")
            raise errors.TokasmExit(errors.EXIT_TERMINATED)
        if interrupts:
            os.write(2, b"tokasm: interrupted\n")
            os._exit(errors.EXIT_INTERRUPTED)
        interrupts.append(signum)
        raise errors.TokasmInterrupt

    previous: dict[int, Any] = {}
    _TERMINATED.clear()
    undo = fatal_signals_kill_testees()  # SIGHUP (its terminal gone): they die, then tokasm
    with contextlib.suppress(ValueError):  # not the main thread: leave the handlers alone
        for wanted in (signal.SIGTERM, signal.SIGINT):
            previous[wanted] = signal.signal(wanted, on_signal)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        undo()
        end_testees()
        if _TERMINATED:  # and its exit was swallowed on the way: the run still ends with 143
            raise errors.TokasmExit(errors.EXIT_TERMINATED)


def fatal_signals_kill_testees() -> Callable[[], None]:
    """Until the returned undo, an unhandled SIGTERM or SIGHUP kills every child group, then
    ends the process as it would: for a host with no run to wrap (the pytest plugin)."""

    def die(signum: int, frame: FrameType | None) -> None:
        kill_testees()
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)

    fatal = (signal.SIGTERM, signal.SIGHUP)
    main = threading.current_thread() is threading.main_thread()
    installed = [s for s in fatal if main and signal.getsignal(s) is signal.SIG_DFL]
    for signum in installed:
        signal.signal(signum, die)

    def undo() -> None:
        for signum in installed:
            if signal.getsignal(signum) is die:
                signal.signal(signum, signal.SIG_DFL)
        installed.clear()

    return undo


def signal_name(number: int) -> str:
    """``SIGSEGV``, or ``signal 40`` for one without a name (a real-time signal)."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def exit_description(code: int) -> str:
    if code >= 0:
        return f"exited with code {code}"
    name = signal_name(-code)
    return f"was killed by {name}" + ("" if name.startswith("signal") else f" (signal {-code})")


class NoResponse(TargetFault):
    pass


class LineTooLong(TargetFault):
    pass


class Process:
    """A child in its own group, its stdin written without blocking (one that stops reading
    costs a deadline, not a hang); a thread keeps the tail of its stderr."""

    max_line = codec.MAX_LINE_BYTES  # a longer line is a LineTooLong fault

    def __init__(self, argv: Sequence[str], *, stacks_on_abort: bool = False) -> None:
        if _TERMINATED:  # the SIGTERM's exit was swallowed (Hypothesis, a gc callback)
            raise errors.TokasmExit(errors.EXIT_TERMINATED)
        self.stacks_on_abort = stacks_on_abort
        try:  # its own session and group: killed whole, never by a terminal
            self.popen = subprocess.Popen(
                argv, stdin=PIPE, stdout=PIPE, stderr=PIPE, start_new_session=True
            )
        except OSError as error:
            folder = "/" in argv[0] and os.path.isdir(argv[0])  # as exec finds it
            why = f"{argv[0]!r} is a folder, not a program" if folder else error
            raise TargetFault(f"cannot start it: {why}") from None
        _LIVE.add(self)
        pipes = (self.popen.stdin, self.popen.stdout, self.popen.stderr)  # all three PIPE
        self._stdin, self._stdout, stderr = cast("tuple[IO[bytes], IO[bytes], IO[bytes]]", pipes)
        self._fd, self._tail = self._stdout.fileno(), bytearray()
        self.lines: deque[bytes] = deque()  # whole lines read ahead
        self._partial = bytearray()  # the start of the next line
        os.set_blocking(self._stdin.fileno(), False)
        self._unsent, self._wrote = memoryview(b""), False  # what the pipe has not taken yet
        self._drain = threading.Thread(target=self._drain_stderr, args=(stderr,), daemon=True)
        self._drain.start()

    def _drain_stderr(self, pipe: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(pipe.fileno(), 1 << 16):
                self._tail += chunk
                del self._tail[:-STDERR_TAIL_BYTES]
        with contextlib.suppress(OSError):
            pipe.close()

    def write(self, data: bytes) -> None:
        """What the pipe does not take now is sent while reading."""
        self._unsent = memoryview(bytes(self._unsent) + data)
        if not self._send() and not self._wrote:  # a child gone before its first request
            raise TargetFault(self._gone("stdin", "before reading the request"))

    def _send(self) -> bool:
        """False if the child no longer reads (the reader sees why)."""
        try:
            while self._unsent:
                self._unsent = self._unsent[os.write(self._stdin.fileno(), self._unsent) :]
                self._wrote = True
        except BlockingIOError:
            pass
        except (OSError, ValueError):
            self._unsent = memoryview(b"")
            return False
        return True

    def read_line(self, timeout: float, *, beats_for: float = 0.0) -> bytes:
        """A heartbeat renews ``timeout``, up to ``beats_for`` seconds in all."""
        start = time.monotonic()
        deadline = start + timeout
        while True:
            while self.lines:
                line = self.lines.popleft()
                if line != HEARTBEAT or not beats_for:
                    return line
                deadline = min(time.monotonic() + timeout, start + beats_for)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if self.stacks_on_abort:  # the worker's faulthandler writes every stack
                    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                        os.kill(self.popen.pid, signal.SIGABRT)
                        self.popen.wait(EXIT_GRACE)
                raise NoResponse(f"no response within {timeout:g} s{self._part_of_a_line()}")
            unsent = [self._stdin] if self._unsent else []
            ready, writable, _ = select.select([self._fd], unsent, [], min(remaining, _ALIVE_CHECK))
            if writable:
                self._send()
            if ready:
                self._read()
            elif not writable and (code := self.popen.poll()) is not None:  # a grandchild may
                answered = f"without answering{self._part_of_a_line()}"  # hold stdout
                raise TargetFault(f"{exit_description(code)} {answered}")

    def _read(self, when: str = "without answering") -> None:
        chunk = os.read(self._fd, 1 << 20)
        if not chunk:
            raise TargetFault(self._gone("stdout", f"{when}{self._part_of_a_line()}"))
        first, *lines = chunk.split(b"\n")
        if max([len(self._partial) + len(first), *map(len, lines)]) > self.max_line:
            raise LineTooLong(f"wrote a line longer than the limit of {self.max_line} bytes")
        self._partial += first
        if lines:
            self.lines.append(bytes(self._partial))
            self._partial = bytearray(lines.pop())
            self.lines.extend(lines)

    def _part_of_a_line(self) -> str:
        begun = bytes(self._partial[:200]).decode("utf-8", "replace")
        return f" (only part of a line came: {show(begun)})" if begun else ""

    def _gone(self, pipe: str, when: str) -> str:
        try:
            return f"{exit_description(self.popen.wait(EXIT_GRACE))} {when}"
        except subprocess.TimeoutExpired:
            return f"closed its {pipe} {when}"

    def refuse_unasked(self) -> None:
        if not (self.lines or self._partial) and select.select([self._fd], [], [], 0)[0]:
            self._read("after its last answer")
        pending = [line for line in self.lines if line != HEARTBEAT]
        if pending or self._partial:
            unasked = bytes(pending[0] if pending else self._partial)[:200]
            raise TargetFault(
                "wrote output nobody asked for (a stray line, or more than one line for a "
                f"request): {show(unasked.decode('utf-8', 'replace'))}"
            )

    def stderr_text(self) -> str:
        self._drain.join(timeout=EXIT_GRACE)
        return bytes(self._tail).decode("utf-8", "replace")

    def stderr_tail(self) -> str:
        """All of the stacks a worker's faulthandler wrote, else the last lines."""
        text = self.stderr_text()
        stacks = text.rfind(_STACKS)
        lines = text[max(stacks, 0) :].splitlines()
        lines = lines[-(_STACK_LINES if stacks >= 0 else STDERR_TAIL_LINES) :]
        if not lines:
            return "\ntestee stderr: (empty)"
        return "\ntestee stderr (last lines):\n" + "\n".join(
            f"  | {line[:_STDERR_LINE_CHARS]}" for line in lines
        )

    def kill_group(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.popen.kill()  # in case it left the group it was started in

    def kill(self, grace: float = 0.0) -> None:
        """Repeatable; the child has ``grace`` seconds to exit once its stdin closes."""
        with contextlib.suppress(OSError):
            self._stdin.close()  # the end of its input: it may exit by itself
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(grace)
        self.kill_group()
        self.popen.wait()
        self._drain.join(timeout=EXIT_GRACE)  # its pipe closes when the group is gone
        _LIVE.discard(self)
        with contextlib.suppress(OSError):
            self._stdout.close()


def _shown(request: bytes) -> str:
    return show(request.decode("ascii").rstrip("\n"))  # a request is ASCII JSON


def _encoded(request: bytes | Step) -> bytes:
    if isinstance(request, bytes):
        return request
    try:
        return codec.encode_step(request)
    except (TypeError, ValueError, RecursionError) as error:
        raise TargetFault(f"{request.op!r} request cannot be sent as JSON: {error}") from None


def _quoted(line: bytes, error: ProtocolError) -> ProtocolError:
    return ProtocolError(f"{show(line.decode('utf-8', 'replace'))}: {error}")


def _outcome(line: bytes, op: str) -> StepOutcome:
    """An error is raised for ``new``: its refusal ends the case."""
    if line == codec.NULL_RESULT:
        return None
    if op != "new" and (text := codec.text_result(line)) is not None:
        return text
    try:
        return codec.parse_result(codec.decode(line), op)
    except ImplementationError as error:
        if op == "new":
            raise
        return error
    except ProtocolError as error:
        raise _quoted(line, error) from None


class CommandTarget:
    """A ``Target`` served by a testee command: started once, restarted after a fault."""

    #: tokasm's own worker: its hello may answer its load error, and a missed deadline sends
    #: it SIGABRT first (its faulthandler writes its stacks); a foreign testee is killed at once.
    worker = False

    def __init__(
        self,
        argv: Sequence[str],
        timeout: float = DEFAULT_TIMEOUT,
        start_timeout: float | None = None,  # START_TIMEOUT, read when called (tests shorten it)
        *,
        window: int = PIPELINE_WINDOW,
        breaker: int | None = BREAKER_FAULTS,  # None: always restart (the fuzzer's examples)
    ) -> None:
        if not argv:
            raise TargetError("command '': empty command line")
        self._argv, self.timeout, self._window = list(argv), timeout, max(window, 1)
        self._start_timeout = max(timeout, start_timeout or START_TIMEOUT)
        self._queued: list[bytes] = []  # ``new`` requests sent with the next steps
        self._faults_in_a_row, self._breaker_faults = 0, breaker
        self._breaker: str | None = None  # why the remaining cases are not run
        self._restarts = 0
        self._last: bytes | str = _HELLO  # the last request, for output that comes after it
        self.problems: list[str] = []
        self.name = shlex.join(self._argv)  # until the hello names the implementation
        self.features: frozenset[str] = frozenset()
        began = time.monotonic()
        try:
            self._process: Process | None = self._start()
        except TargetFault as fault:
            raise self._start_failed(fault) from None
        # A restart's hello gets a few times the first start's time, not the whole start
        # timeout: a target that hangs when started again costs little.
        first = time.monotonic() - began
        self._start_timeout = max(timeout, min(self._start_timeout, 4 * first + 1))

    def _start_failed(self, fault: TargetFault) -> TargetError:
        return TargetError(f"command {self.name!r}: {fault}")

    def _start(self) -> Process:
        process = Process(self._argv, stacks_on_abort=self.worker)
        try:
            process.write(_HELLO)
            line = process.read_line(self._start_timeout)
            try:
                response = codec.decode(line)
            except ProtocolError as error:  # a banner, say: shown as it came
                raise ProtocolError(f"invalid response {_quoted(line, error)}") from None
            if self.worker and response.get("kind") == "TargetError":
                raise TargetError(str(response.get("error")))  # the target did not load
            name, features = codec.parse_hello(response)
        except (ProtocolError, TargetFault) as error:
            process.kill()
            hint = _UNFLUSHED if isinstance(error, NoResponse) and not self.worker else ""
            raise TargetFault(
                f"request {_shown(_HELLO)}: {error}{hint}{process.stderr_tail()}"
            ) from None
        except TargetError:
            process.kill()
            raise
        if self._restarts == 0:
            self.name, self.features = name, features
        elif (name, features) != (self.name, self.features):
            self.problems.append(
                f"the testee changed its identity when restarted (restart {self._restarts}): "
                f"hello said name {name!r}, features {sorted(features)}, where the first said "
                f"{self.name!r}, {sorted(self.features)}; results are reported under the first"
            )
        return process

    def _fault(self, process: Process, request: str, reason: str) -> TargetFault:
        process.kill()
        self._process = None
        after = "\n(the testee was killed; a fresh one starts with the next case)"
        return self._counted(f"request {request}: {reason}{after}{process.stderr_tail()}")

    def _counted(self, message: str) -> TargetFault:
        """The ``breaker``-th faulted case in a row opens the circuit breaker."""
        self._faults_in_a_row += 1
        limit = self._breaker_faults
        if limit is not None and self._faults_in_a_row >= limit and self._breaker is None:
            self._breaker = (
                f"not run: the testee faulted in {limit} cases in a row, so it is not restarted "
                "again (circuit breaker); the last fault: " + message.split("\n", 1)[0]
            )
        return TargetFault(message)

    def _running(self) -> Process:
        """Restarted if the last case killed it, or if it wrote or ended since (a problem)."""
        if self._breaker is not None:
            raise TargetFault(self._breaker)
        if (process := self._process) is not None:
            try:
                process.refuse_unasked()
            except TargetFault as fault:
                process.kill()
                self._process = None
                last = self._last if isinstance(self._last, str) else _shown(self._last)
                said = f"{fault} (after its case had ended; a fresh testee ran the next)"
                self.problems.append(f"request {last}: {said}{process.stderr_tail()}")
        if self._process is None:
            self._restarts += 1
            try:
                self._process = self._start()
            except (TargetFault, TargetError) as fault:
                raise self._counted(f"restarting the testee failed: {fault}") from None
        return self._process

    def perform_steps(self, steps: Sequence[Step]) -> Generator[StepOutcome, None, None]:
        """Requests are written up to ``window`` ahead; leaving early reads the responses due."""
        items: list[bytes | Step] = [*self._queued, *steps]
        requests, self._queued = [*self._queued], []  # encoded as the window reaches them
        process = self._running()
        lines, half, timeout = process.lines, (self._window + 1) // 2, self.timeout
        done = sent = 0  # responses read, requests written
        try:
            for done, item in enumerate(items):
                if sent - done < half and sent < len(items):
                    requests += map(_encoded, items[len(requests) : done + self._window])
                    process.write(b"".join(requests[sent:]))
                    sent = len(requests)
                line = lines.popleft() if lines else process.read_line(timeout)  # read ahead
                if isinstance(item, bytes):
                    _outcome(line, "new")
                else:
                    yield _outcome(line, item.op)
            done = len(items)
            process.refuse_unasked()
        except (GeneratorExit, ImplementationError):  # ended early, or a ``new`` was refused
            try:  # so that the next case starts in step
                for _ in range(sent - done - 1):
                    process.read_line(self.timeout)
            except TargetFault as fault:
                reason = f"{fault} (reading the responses due after the case ended early)"
                raise self._fault(process, _shown(requests[-1]), reason) from None
            self._faults_in_a_row = 0
            raise
        except (ProtocolError, TargetFault) as error:
            reason = f"invalid response {error}" if isinstance(error, ProtocolError) else str(error)
            if sent - done > 1 and done and "no response" in reason and "of a line" not in reason:
                reason += (
                    f" ({sent - done} requests were written ahead after {done} answered; a "
                    "testee that drops the lines it read ahead, instead of reading stdin as a "
                    "stream, needs --no-pipeline)"
                )
            sent_request = _shown(requests[min(done, len(requests) - 1)])
            raise self._fault(process, sent_request, reason) from None
        finally:
            self._last = requests[-1]
        self._faults_in_a_row = 0  # a case without a fault: the breaker counts from 0 again

    def new(self, instance: str) -> None:
        self._queued.append(codec.encode(codec.new_request(instance)))

    def perform(self, step: Step) -> str | Foreign | None:
        (outcome,) = self.perform_steps([step])  # run to its end, which refuses unasked output
        if isinstance(outcome, ImplementationError):
            raise outcome
        return outcome

    def close(self) -> None:
        self._queued = []
        if self._process is not None:
            self._process.kill(EXIT_GRACE)
            self._process = None


def python_child(code: str, *args: str) -> list[str]:
    """The current folder is off ``sys.path``: a user's ``token.py`` would shadow the
    standard library's (``resolve_target`` puts it first once tokasm's imports are done)."""
    off_path = "import sys; sys.path[:] = filter(None, sys.path)"
    return [sys.executable, "-c", f"{off_path}; {code}", *args]


def python_testee_command(target: str, *options: str) -> list[str]:
    main = "from tokasm.protocol.testee import main; raise SystemExit(main())"
    return python_child(main, *options, target)


class WorkerTarget(CommandTarget):
    """A Python target in tokasm's worker, which runs whole cases and answers data."""

    worker = True

    def __init__(
        self,
        target: str,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        strict: bool = False,
        window: int = PIPELINE_WINDOW,
        breaker: int | None = BREAKER_FAULTS,
    ) -> None:
        self.target = target
        options = ["--worker", repr(timeout), *(["--strict"] if strict else [])]
        argv = python_testee_command(target, *options)
        super().__init__(argv, timeout, LOAD_TIMEOUT, window=window, breaker=breaker)

    def _start_failed(self, fault: TargetFault) -> TargetError:
        return TargetError(f"target {self.target!r}: loading it failed: {fault}")

    def run_case(self, case: Case, *, debug: bool = False) -> CaseResult:
        request = {"op": "case", "case": case.document, "source": str(case.source), "debug": debug}
        return self._ask(request, f"case {case.id!r}", CaseResult.of(case, "errored"))

    def probe(self, probe_id: str, *, strict: bool = False) -> CaseResult:
        request = {"op": "probe", "id": probe_id, "strict": strict}
        return self._ask(request, f"the cost probe {probe_id}", probe_named(probe_id, "errored"))

    def fuzz(
        self, examples: int, documents: Sequence[dict[str, Any]], incremental: bool
    ) -> tuple[str, ...]:
        """``documents`` are drawn here; Hypothesis runs there only to shrink a disagreement."""
        request = {"op": "fuzz", "examples": examples, "documents": list(documents),
                   "incremental": incremental}  # fmt: skip
        try:
            answer = self._exchange(request, "the fuzz phase", max(self.timeout, FUZZ_SECONDS))
            problems = answer.get("problems")
            if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
                raise ProtocolError(f"not a list of problems: {str(answer)[:200]}")
        except ProtocolError as error:
            return (f"fuzz phase: {error}",)
        return tuple(problems)

    def _ask(self, request: dict[str, object], label: str, check: CaseResult) -> CaseResult:
        """A fault of the worker errors the check."""
        try:
            answer = self._exchange(request, label, self.timeout * BEATS_FOR)
            result = CaseResult.from_data(answer.get("case"))
        except ProtocolError as error:  # it may quote the worker's stderr: escaped
            return replace(check, message=safe_block(f"testee fault in the worker: {error}"))
        return replace(
            result,
            case_id=check.case_id,
            description=check.description,
            source=check.source,
            requirements=result.requirements or check.requirements,
        )

    def _exchange(self, request: dict[str, object], label: str, beats_for: float) -> codec.Message:
        """A check after the cases (a cost probe, the fuzz phase) that faults in a worker that
        ran cases is retried once in a fresh one: a case may have poisoned it."""
        retry = request["op"] != "case" and self._process is not None
        try:
            process = self._running()
        except TargetFault as fault:
            raise ProtocolError(str(fault)) from None
        self._last = label
        try:
            process.write(codec.encode(request))
            response = codec.decode(process.read_line(self.timeout, beats_for=beats_for))
            if response.get("ok") is not True:
                raise ProtocolError(f"not an answer: {str(response)[:200]}")
        except (ProtocolError, TargetFault) as error:
            counted = self._fault(process, label, str(error))
            if retry:  # the fault killed it: the next try starts a fresh one, and is the last
                return self._exchange(request, label, beats_for)
            raise ProtocolError(str(counted)) from None
        self._faults_in_a_row = 0
        return response
