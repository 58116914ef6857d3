"""``CommandSubject``: a ``Subject`` served by a persistent testee process (spec/PROTOCOL.md).

The testee is hostile by assumption (docs/guarantees.md). It runs in a
session and process group of its own, so the whole group is killed on a
fault, at the end of the run and when the kit is stopped. Every response has
a deadline; a timeout, an exit (of the process the kit started, even if a
grandchild still holds the pipes), a line over ``MAX_LINE_BYTES`` or one that
is not a valid response is a ``SubjectFault`` that costs the current case
only: the group is killed and a fresh testee is started (and greeted) for the
next case. After ``BREAKER_FAULTS`` faulted cases in a row the testee is not
restarted again and its remaining cases error at once.

A case's requests are pipelined: up to ``PIPELINE_WINDOW`` are written ahead
of their responses, with non-blocking writes and reads driven by one
``poll``, so neither side can block the other on a full pipe. Each step is
encoded only when its request is about to be written, so the kit's encoding
overlaps the testee's work on the requests before it. stdout is read
in blocks and stderr drained by a thread into a bounded tail, so no amount of
output grows the kit's memory past a line's limit.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import os
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from typing import IO, TYPE_CHECKING, Any

from tokasm._clocks import Clocks
from tokasm._display import show
from tokasm.errors import (
    EXIT_TERMINATED,
    ImplementationError,
    ProtocolError,
    SubjectFault,
    TargetError,
    TokasmExit,
)
from tokasm.protocol._codec import (
    MAX_LINE_BYTES,
    decode,
    encode,
    encode_step,
    hello_request,
    new_request,
    parse_hello,
    parse_result,
)
from tokasm.run._guard import interrupts_watched, start_helper_thread, user_interrupted

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterator, Sequence
    from types import FrameType

    from tokasm.corpus.steps import Step
    from tokasm.run.subjects import Foreign, StepOutcome

__all__ = [
    "BREAKER_FAULTS",
    "DEFAULT_TIMEOUT",
    "EXIT_GRACE",
    "PIPELINE_WINDOW",
    "RESTART_FACTOR",
    "RESTART_MARGIN",
    "START_TIMEOUT",
    "STDERR_TAIL_BYTES",
    "STDERR_TAIL_LINES",
    "CommandSubject",
    "fatal_signals_kill_testees",
    "kill_testees",
    "prestart",
    "split_command",
    "testees_end_with_the_run",
]

#: Seconds a testee has to answer one request (``tokasm check --timeout``).
DEFAULT_TIMEOUT = 5.0

#: Seconds a testee has to start and answer hello, if more than the request timeout:
#: starting a runtime (a JVM, a Python importing its dependencies) can take a while.
START_TIMEOUT = 10.0

#: Faulted cases in a row after which a testee is not restarted and its remaining cases
#: error at once: a testee that hangs on everything costs about this many timeouts.
#: Five rather than one or two, so a fault that strikes a few neighbouring cases (a
#: corpus file groups cases by topic) does not hide the rest of the run.
BREAKER_FAULTS = 5

#: A restarted testee has the request timeout to answer hello, or more if its first
#: start was slow: RESTART_FACTOR times as long as that took plus RESTART_MARGIN seconds,
#: at most START_TIMEOUT. So restarts that hang cost little, and a slow runtime still
#: restarts.
RESTART_FACTOR = 4
RESTART_MARGIN = 1.0

#: Requests written ahead of their responses (``--no-pipeline`` makes it 1).
PIPELINE_WINDOW = 1024

#: Seconds a testee gets to exit after its stdin closes, before its group is killed.
EXIT_GRACE = 1.0

#: The tail of the testee's stderr kept for fault reports: at most these many bytes,
#: shown as at most these many lines of at most ``_STDERR_LINE_CHARS`` characters.
STDERR_TAIL_BYTES = 16 * 1024
STDERR_TAIL_LINES = 20
_STDERR_LINE_CHARS = 500

_READ_CHUNK = 1 << 20  # bytes per read of stdout
_STDERR_CHUNK = 1 << 16  # bytes per read of stderr
_WRITE_AHEAD = 1 << 20  # bytes of requests queued ahead (on top of the window's limit)
_FLUSH_EVERY = 1 << 14  # bytes of requests written at once while answers wait to be read
_ALIVE_CHECK = 0.1  # seconds between checks that the testee process still runs, while waiting
_SHORT_LINE = 64  # bytes of a response line whose result is remembered
_REAP_PAUSE = 0.002  # seconds between checks that a killed group is gone

_LIVE: set[_Process] = set()  # every testee whose group is not yet killed and reaped
_PRESTARTED: dict[tuple[str, ...], list[_Process]] = {}  # by command, not yet greeted
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def split_command(command_line: str) -> list[str]:
    """``--cmd`` text into argv, as a POSIX shell would split it; TargetError if malformed."""
    try:
        return shlex.split(command_line)
    except ValueError as error:
        raise TargetError(f"command {command_line!r}: cannot split it: {error}") from None


def prestart(argv: Sequence[str]) -> None:
    """Start a testee for ``argv`` now, for the ``CommandSubject`` made for the same command
    later to greet and use: its runtime boots while the kit reads the corpus. If it cannot
    start, nothing happens here (the subject's own start says why); one never taken is
    killed with the others at the end of the run."""
    if argv:
        with contextlib.suppress(SubjectFault):
            _PRESTARTED.setdefault(tuple(argv), []).append(_Process(argv))


def kill_testees() -> None:
    """SIGKILL the process group of every testee still running (safe in a signal handler)."""
    for process in list(_LIVE):
        process.kill_group()


def end_testees() -> None:
    """Kill every testee still running and reap its whole group."""
    _PRESTARTED.clear()
    for process in list(_LIVE):
        process.kill()


atexit.register(end_testees)  # whatever route started them (pytest, a script), none outlives it


@functools.cache
def _adopt_orphans() -> None:
    """On Linux, make the kit the reaper of its orphaned descendants, so the processes of a
    killed testee group are reaped here at once rather than lingering as zombies until
    init gets to them (their group would still exist until then)."""
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _reap_group(pgid: int) -> None:
    """Wait (at most EXIT_GRACE) until no process of the killed group ``pgid`` is left,
    reaping those that are the kit's to reap."""
    deadline = Clocks.monotonic() + EXIT_GRACE
    while Clocks.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-pgid, os.WNOHANG)[0]:
                pass
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        except PermissionError:
            pass
        time.sleep(_REAP_PAUSE)


@contextlib.contextmanager
def testees_end_with_the_run() -> Iterator[None]:
    """For the block's duration, SIGTERM and SIGINT kill every testee group at once, then
    end the run (exit ``EXIT_TERMINATED``, or KeyboardInterrupt); at its end, any testee
    still running is killed and its group reaped."""

    def on_signal(signum: int, frame: FrameType | None) -> None:
        kill_testees()
        if signum == signal.SIGINT:
            user_interrupted()
            raise KeyboardInterrupt
        os.write(2, b"tokasm: terminated\n")  # safe wherever the signal struck, unlike print
        raise TokasmExit(EXIT_TERMINATED)

    previous: dict[signal.Signals, Any] = {}
    with contextlib.suppress(ValueError):  # not the main thread: leave the handlers alone
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, on_signal)
    interrupts_watched(signal.SIGINT in previous)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        interrupts_watched(False)
        end_testees()


#: Signals whose default action ends the process at once, with no ``atexit``, no
#: ``finally`` and no pytest unconfigure: a CI job cancelled (SIGTERM), a terminal closed.
_FATAL = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def fatal_signals_kill_testees() -> Callable[[], None]:
    """Until the returned undo is called, each of ``_FATAL`` that nothing handles kills
    every testee group first, then ends the process as it would have (its status says
    the signal). For a host that runs testees with no run of its own to wrap in
    ``testees_end_with_the_run`` (the pytest plugin): each testee has a session of its
    own, so the signal that ends the host would not reach it."""
    installed: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in _FATAL:
            if signal.getsignal(signum) is signal.SIG_DFL:
                installed[signum] = signal.signal(signum, _kill_testees_then_die)

    def undo() -> None:
        for signum, previous in installed.items():
            if signal.getsignal(signum) is _kill_testees_then_die:
                signal.signal(signum, previous)
        installed.clear()

    return undo


def _kill_testees_then_die(signum: int, frame: FrameType | None) -> None:
    kill_testees()
    signal.signal(signum, signal.SIG_DFL)
    signal.raise_signal(signum)


@functools.lru_cache(maxsize=256)
def _result(line: bytes, op: str) -> str | None:
    """``parse_result(decode(line), op)``, remembered for short lines: most responses are
    the same few (``{"ok":true}``, ``{"ok":true,"result":null}``), and a run has thousands."""
    return parse_result(decode(line), op)


def _outcome(line: bytes, op: str) -> StepOutcome:
    """A response line's result, or the ImplementationError it answers (raised for ``new``,
    whose refusal ends the case); ProtocolError naming the line if it is not valid."""
    try:
        return _result(line, op) if len(line) <= _SHORT_LINE else parse_result(decode(line), op)
    except ImplementationError as error:
        if op == "new":
            raise
        return error
    except ProtocolError as error:
        raise ProtocolError(f"{show(line.decode('utf-8', 'replace'))}: {error}") from None


def _exit_description(code: int) -> str:
    return f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"


class _StderrTail:
    """Drains a pipe in blocks on a thread, keeping only its last ``STDERR_TAIL_BYTES``."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self._pipe = pipe
        self._tail = bytearray()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        start_helper_thread(self._thread)

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._pipe.fileno(), _STDERR_CHUNK):
                self._tail += chunk
                del self._tail[:-STDERR_TAIL_BYTES]
        except (OSError, ValueError):
            pass  # the pipe went away under us: there is nothing more to keep
        finally:
            with contextlib.suppress(OSError):
                self._pipe.close()

    def report(self) -> str:
        """The last lines, indented, once the writers are gone (or the grace time passed)."""
        self._thread.join(timeout=EXIT_GRACE)
        text = bytes(self._tail).decode("utf-8", "replace")
        lines = [line[:_STDERR_LINE_CHARS] for line in text.splitlines()[-STDERR_TAIL_LINES:]]
        if not lines:
            return "\ntestee stderr: (empty)"
        return "\ntestee stderr (last lines):\n" + "\n".join(f"  | {line}" for line in lines)


class _Process:
    """One running testee in its own process group: pipelined, deadline-bound exchanges of
    lines, and its stderr tail."""

    def __init__(self, argv: Sequence[str]) -> None:
        try:
            self._popen = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                start_new_session=True,  # its own group: killed whole, never by a terminal
            )
        except OSError as error:
            raise SubjectFault(f"cannot start it: {error}") from None
        _adopt_orphans()
        _LIVE.add(self)
        stdin, stdout, stderr = self._popen.stdin, self._popen.stdout, self._popen.stderr
        assert stdin is not None
        assert stdout is not None
        assert stderr is not None
        self._stdin, self._stdout = stdin, stdout
        self._stdin_fd, self._stdout_fd = stdin.fileno(), stdout.fileno()
        os.set_blocking(self._stdin_fd, False)
        os.set_blocking(self._stdout_fd, False)
        self._poll = select.poll()
        self._poll.register(self._stdout_fd, select.POLLIN)
        self._lines: deque[bytes] = deque()  # complete response lines not yet taken
        self._partial = bytearray()  # the start of the next line
        self._stderr = _StderrTail(stderr)
        self.in_flight = 0  # requests written whose responses have not come
        self._answered = 0  # responses taken in the current exchange

    def responses(self, requests: _Requests, timeout: float, window: int) -> Iterator[bytes]:
        """Write ``requests``, up to ``window`` ahead, and yield each response line in order.

        Each response must be complete within ``timeout`` of the one before (or of the
        start). Output nobody asked for, found before a request is written while none
        is unanswered, or after the last response, is a SubjectFault, so a stray line is
        not taken as an answer.
        """
        outbox = bytearray()
        sent = answered = 0
        count, lines = len(requests), self._lines
        flush_at = _FLUSH_EVERY  # outbox bytes at which to write while answers wait here
        deadline = Clocks.monotonic() + timeout
        while answered < count:
            if sent == answered:
                self._refuse_unasked()
            while sent < count and sent - answered < window and len(outbox) < _WRITE_AHEAD:
                outbox += requests[sent]
                sent += 1
            self.in_flight, self._answered = sent - answered, answered
            if not lines:
                self._pump(outbox, deadline, timeout)
                flush_at = len(outbox) + _FLUSH_EVERY
                continue
            if len(outbox) >= flush_at:  # the testee gets more to do while the kit reads
                self._write(outbox)
                flush_at = len(outbox) + _FLUSH_EVERY
            answered += 1
            deadline = Clocks.monotonic() + timeout
            yield lines.popleft()
        self.in_flight = 0
        self._refuse_unasked()

    def _refuse_unasked(self) -> None:
        """SubjectFault if output is waiting that no request asked for (checked without
        waiting: a stray line that comes later is found at the next check)."""
        if not (self._lines or self._partial) and self._poll.poll(0):
            self._read()
        if self._lines or self._partial:
            unasked = (self._lines[0] if self._lines else bytes(self._partial))[:200]
            raise SubjectFault(
                "wrote output nobody asked for (a stray line, or more than one line for a "
                f"request): {show(unasked.decode('utf-8', 'replace'))}"
            )

    def _pump(self, outbox: bytearray, deadline: float, timeout: float) -> None:
        """Write what the testee takes, then wait (at most until the deadline) to read."""
        if outbox:
            self._write(outbox)
        events = 0 if not outbox else select.POLLOUT
        with contextlib.suppress(KeyError):
            self._poll.unregister(self._stdin_fd)
        if events:
            self._poll.register(self._stdin_fd, events)
        remaining = deadline - Clocks.monotonic()
        if remaining <= 0:
            raise SubjectFault(f"no response within {timeout:g} s{self._pipelining_hint()}")
        ready = self._poll.poll(min(remaining, _ALIVE_CHECK) * 1000)
        for fd, _mask in ready:
            if fd == self._stdout_fd:
                self._read()
            elif outbox:
                self._write(outbox)
        if not ready and (code := self._popen.poll()) is not None:
            raise SubjectFault(f"{_exit_description(code)} without answering")

    def _pipelining_hint(self) -> str:
        """Why a testee that answered the first requests of an exchange may stop answering."""
        if self.in_flight < 2 or not self._answered:
            return ""
        return (
            f" ({self.in_flight} requests were written ahead after {self._answered} answered; "
            "a testee that drops the lines it read ahead, instead of reading stdin as a "
            "stream, needs --no-pipeline)"
        )

    def _write(self, outbox: bytearray) -> None:
        try:
            del outbox[: os.write(self._stdin_fd, outbox)]
        except BlockingIOError:
            pass
        except BrokenPipeError:
            raise SubjectFault(self._gone("stdin", "before reading the request")) from None

    def _read(self) -> None:
        try:
            chunk = os.read(self._stdout_fd, _READ_CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            raise SubjectFault(self._gone("stdout", "without answering"))
        self._partial += chunk
        too_long = self._partial
        if b"\n" in chunk:
            *lines, rest = self._partial.split(b"\n")
            self._lines.extend(bytes(line) for line in lines)
            self._partial = bytearray(rest)
            too_long = max(self._partial, *lines, key=len)
        if len(too_long) > MAX_LINE_BYTES:
            start = show(bytes(too_long[:80]).decode("utf-8", "replace"))
            raise SubjectFault(
                f"wrote a line longer than the limit of {MAX_LINE_BYTES} bytes, starting {start}"
            )

    def _gone(self, pipe: str, when: str) -> str:
        try:
            code = _wait(self._popen, EXIT_GRACE)
        except subprocess.TimeoutExpired:
            return f"closed its {pipe} {when}"
        return f"{_exit_description(code)} {when}"

    def stderr_tail(self) -> str:
        """The last lines of stderr, indented, after the process has ended."""
        return self._stderr.report()

    def kill_group(self) -> None:
        """SIGKILL the testee's process group (grandchildren too); no waiting."""
        with contextlib.suppress(OSError):
            os.killpg(self._popen.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self._popen.kill()  # in case it left the group it was started in

    def kill(self) -> None:
        """Kill the testee's group, reap it and release the pipes; safe to repeat."""
        self.kill_group()
        self._popen.wait()
        _reap_group(self._popen.pid)
        _LIVE.discard(self)
        for pipe in (self._stdin, self._stdout):
            with contextlib.suppress(OSError):
                pipe.close()

    def close(self) -> None:
        """End of stdin asks the testee to exit; its group is killed after the grace time."""
        with contextlib.suppress(OSError):
            self._stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            _wait(self._popen, EXIT_GRACE)
        self.kill()


def _wait(process: subprocess.Popen[bytes], seconds: float) -> int:
    """``process.wait(timeout=seconds)`` by tokasm's own clock: ``Popen.wait`` reads
    ``subprocess._time``, which a target's frozen clock (freezegun) may have replaced."""
    deadline = Clocks.monotonic() + seconds
    while (code := process.poll()) is None:
        if Clocks.monotonic() >= deadline:
            raise subprocess.TimeoutExpired(process.args, seconds)
        time.sleep(_REAP_PAUSE)
    return code


class _Requests:
    """The request lines of one exchange: the queued ``new`` ones, then one per step, each
    step's encoded when the exchange first asks for it (as it is about to be written)."""

    def __init__(self, queued: list[bytes], steps: Sequence[Step] = ()) -> None:
        self._lines = list(queued)
        self._steps = steps
        self._queued = len(queued)

    def __len__(self) -> int:
        return self._queued + len(self._steps)

    def __getitem__(self, index: int) -> bytes:
        if index < 0:
            index += len(self)
        lines = self._lines
        while len(lines) <= index:
            lines.append(_encoded(self._steps[len(lines) - self._queued]))
        return lines[index]

    def written(self, index: int) -> bytes:
        """Line ``index``, or the last one encoded if it is not (nothing is encoded here)."""
        lines = self._lines
        return lines[min(index, len(lines) - 1)] if lines else b""


def _encoded(step: Step) -> bytes:
    try:
        return encode_step(step)
    except (TypeError, ValueError) as error:
        raise SubjectFault(f"{step.op!r} request cannot be sent as JSON: {error}") from None


class CommandSubject:
    """Runs cases through a testee command speaking protocol version 1.

    ``name`` and ``features`` are what the testee declared in its first hello; a
    restarted testee that declares others is recorded in ``problems`` (a run-level
    problem: the results may not all be the named implementation's).
    """

    def __init__(
        self,
        argv: Sequence[str],
        timeout: float = DEFAULT_TIMEOUT,
        start_timeout: float = START_TIMEOUT,
        *,
        window: int = PIPELINE_WINDOW,
        breaker: int | None = BREAKER_FAULTS,
    ) -> None:
        if not argv:
            raise TargetError("command '': empty command line")
        self._argv = list(argv)
        self._label = shlex.join(self._argv)
        self._timeout = timeout
        self._start_timeout = max(timeout, start_timeout)
        self._window = window
        self._process: _Process | None = None
        self._queued: list[bytes] = []  # ``new`` requests sent with the next steps
        self._faults_in_a_row = 0
        self._breaker_faults = breaker  # None: always restart (the fuzzer's examples)
        self._breaker: str | None = None  # why the remaining cases are not run
        self._restarts = 0
        self._new_says_result = False  # whether this testee's answers to ``new`` carry one
        self.problems: list[str] = []
        self.name = self._label  # until the hello names the implementation
        self.features: frozenset[str] = frozenset()
        began = Clocks.monotonic()
        try:
            self._process = self._start(self._start_timeout)
        except SubjectFault as fault:
            raise TargetError(f"command {self._label!r}: {fault}") from None
        first_start = Clocks.monotonic() - began
        self._restart_timeout = max(
            timeout, min(self._start_timeout, RESTART_FACTOR * first_start + RESTART_MARGIN)
        )

    def _start(self, timeout: float) -> _Process:
        """A fresh testee that has answered hello; SubjectFault (its stderr tail) if not."""
        waiting = _PRESTARTED.get(tuple(self._argv))
        process = waiting.pop() if waiting else _Process(self._argv)
        request = encode(hello_request())
        try:
            (line,) = process.responses(_Requests([request]), timeout, 1)
            name, features = parse_hello(decode(line))
        except ProtocolError as error:
            raise self._killed(process, request, f"invalid response: {error}", "") from None
        except SubjectFault as fault:
            raise self._killed(process, request, str(fault), "") from None
        if self._restarts == 0:
            self.name, self.features = name, features
        elif (name, features) != (self.name, self.features):
            self.problems.append(
                f"the testee changed its identity when restarted (restart {self._restarts}): "
                f"hello said name {name!r}, features {sorted(features)}, where the first said "
                f"{self.name!r}, {sorted(self.features)}; results are reported under the first"
            )
        return process

    @staticmethod
    def _killed(process: _Process, request: bytes, reason: str, after: str) -> SubjectFault:
        """Kill ``process`` and say which request faulted, why, and the stderr tail."""
        process.kill()
        sent = show(request.decode("ascii").rstrip("\n"))
        return SubjectFault(f"request {sent}: {reason}{after}{process.stderr_tail()}")

    def _fault(self, message: str) -> SubjectFault:
        """Count a faulted case; the BREAKER_FAULTS-th in a row opens the circuit breaker."""
        self._process = None
        self._faults_in_a_row += 1
        limit = self._breaker_faults
        if limit is not None and self._faults_in_a_row >= limit and self._breaker is None:
            first_line = message.split("\n", 1)[0]
            self._breaker = (
                f"not run: the testee faulted in {limit} cases in a row, so it is "
                f"not restarted again (circuit breaker); the last fault: {first_line}"
            )
        return SubjectFault(message)

    def _running(self) -> _Process:
        if self._breaker is not None:
            raise SubjectFault(self._breaker)
        if self._process is None:
            self._restarts += 1
            try:
                self._process = self._start(self._restart_timeout)
            except SubjectFault as fault:
                raise self._fault(f"restarting the testee failed: {fault}") from None
        return self._process

    def perform_steps(self, steps: Sequence[Step]) -> Generator[StepOutcome, None, None]:
        """Each step's result, or the ImplementationError it answered, in order; the
        requests (after any queued ``new``) are pipelined. A SubjectFault ends it and
        kills the testee; leaving early reads the remaining responses first."""
        requests = _Requests(self._queued, steps)
        ops = ["new"] * len(self._queued) + [step.op for step in steps]
        self._queued = []
        process = self._running()
        lines = process.responses(requests, self._timeout, self._window)
        done = 0  # responses taken: the next one due answers requests[done]
        try:
            for line in lines:
                op = ops[done]
                outcome = _outcome(line, op)
                done += 1
                if op == "new":
                    self._new_says_result |= b'"result"' in line
                else:
                    yield outcome
        except GeneratorExit:  # the case ended early, at a failing step
            self._drain(process, lines, requests[-1])
            if self._window > 1 and ops[0] == "new":
                self._confirm_in_step(process, requests[0])
            raise
        except ImplementationError:  # a ``new`` was refused
            self._drain(process, lines, requests[-1])
            raise
        except ProtocolError as error:
            raise self._fault_at(process, requests[done], f"invalid response {error}") from None
        except SubjectFault as fault:
            raise self._fault_at(process, requests.written(done), str(fault)) from None
        self._faults_in_a_row = 0

    def _fault_at(self, process: _Process, request: bytes, reason: str) -> SubjectFault:
        after = "\n(the testee was killed; a fresh one starts with the next case)"
        return self._fault(str(self._killed(process, request, reason, after)))

    def _drain(self, process: _Process, lines: Iterator[bytes], last: bytes) -> None:
        """Read and drop the responses still due, so the next case starts in step; a fault
        meanwhile (output nobody asked for: the answers were out of step) errors the case."""
        try:
            for _line in lines:
                pass
        except SubjectFault as fault:
            reason = f"{fault} (reading the responses due after the case ended early)"
            raise self._fault_at(process, last, reason) from None
        self._faults_in_a_row = 0

    def _confirm_in_step(self, process: _Process, new: bytes) -> None:
        """After a pipelined case failed, one more ``new`` round trip: if a step's answer
        (one with a ``result``) comes back for it, a stray line had shifted the answers, so
        the failure is the testee's framing (a fault), not the implementation's."""
        try:
            (line,) = process.responses(_Requests([new]), self._timeout, 1)
        except SubjectFault as fault:
            raise self._fault_at(process, new, f"{fault} (after the case failed)") from None
        if b'"result"' in line and not self._new_says_result:
            shifted = show(line.decode("utf-8", "replace"))
            raise self._fault_at(
                process,
                new,
                f"the answers were out of step: {shifted} came back for a 'new' (a stray "
                "line, or more than one line for a request)",
            )

    def new(self, instance: str) -> None:
        """Queue a fresh instance; its request goes with the next steps."""
        self._queued.append(encode(new_request(instance)))

    def perform(self, step: Step) -> str | Foreign | None:
        with contextlib.closing(self.perform_steps([step])) as outcomes:
            outcome = next(outcomes)
            next(outcomes, None)  # the end of the exchange: checks for unasked output
        if isinstance(outcome, ImplementationError):
            raise outcome
        return outcome

    def close(self) -> None:
        self._queued = []
        if self._process is not None:
            self._process.close()
            self._process = None
