"""``CommandSubject``: a ``Subject`` served by a persistent testee process (spec/PROTOCOL.md).

The testee is started once and kept running. Every request has a deadline;
a timeout, an exit or a line that is not a valid response is a
``SubjectFault`` that costs the current case only: the process is killed and
a fresh one is started (and greeted) before the next case's first ``new``.
Failing to start or to answer the first hello is a ``TargetError`` (exit 2).

I/O is one ``write`` per request and ``select``-driven reads, so a silent
testee cannot block the kit; a thread drains stderr, so a chatty one cannot
either, and keeps its last lines for the fault report.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import subprocess
import threading
import time
from collections import deque
from typing import IO, TYPE_CHECKING

from ..errors import ProtocolError, SubjectFault, TargetError
from ._display import show
from ._protocol import decode, encode, hello_request, new_request, parse_hello, parse_result

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._protocol import Message
    from .steps import Step

__all__ = ["DEFAULT_TIMEOUT", "START_TIMEOUT", "CommandSubject", "split_command"]

#: Seconds a testee has to answer one request (``tokasm check --timeout``).
DEFAULT_TIMEOUT = 5.0

#: Seconds a testee has to start and answer hello, if more than the request timeout:
#: starting a runtime (a JVM, a Python importing its dependencies) can take a while.
START_TIMEOUT = 10.0

_STDERR_LINES = 20  # the tail of the testee's stderr kept for fault reports
_STDERR_LINE_CHARS = 500
_READ_CHUNK = 1 << 20
_GRACE = 1.0  # seconds a testee gets to exit after its stdin closes


def split_command(command_line: str) -> list[str]:
    """``--cmd`` text into argv, as a POSIX shell would split it; TargetError if malformed."""
    try:
        return shlex.split(command_line)
    except ValueError as error:
        raise TargetError(f"command {command_line!r}: cannot split it: {error}") from None


class _Process:
    """One running testee: a deadline-bound exchange of lines, and its stderr tail."""

    def __init__(self, argv: Sequence[str]) -> None:
        try:
            self._popen = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,  # buffered, so draining it reads in blocks
            )
        except OSError as error:
            raise SubjectFault(f"cannot start it: {error}") from None
        stdin, stdout, stderr = self._popen.stdin, self._popen.stdout, self._popen.stderr
        assert stdin is not None
        assert stdout is not None
        assert stderr is not None
        self._stdin, self._stdout = stdin, stdout
        self._stdin_fd, self._stdout_fd = stdin.fileno(), stdout.fileno()
        os.set_blocking(self._stdin_fd, False)
        self._readable = selectors.DefaultSelector()
        self._readable.register(self._stdout_fd, selectors.EVENT_READ)
        self._writable = selectors.DefaultSelector()
        self._writable.register(self._stdin_fd, selectors.EVENT_WRITE)
        self._pending = bytearray()
        self._stderr_tail: deque[str] = deque(maxlen=_STDERR_LINES)
        self._drainer = threading.Thread(target=self._drain, args=(stderr,), daemon=True)
        self._drainer.start()

    def _drain(self, stderr: IO[bytes]) -> None:
        for raw in stderr:
            self._stderr_tail.append(raw.decode("utf-8", "replace").rstrip()[:_STDERR_LINE_CHARS])

    def exchange(self, request: bytes, timeout: float) -> bytes:
        """Send one request line and return the response line (without LF)."""
        deadline = time.monotonic() + timeout
        self._send(request, deadline, timeout)
        return self._receive(deadline, timeout)

    def _wait(self, selector: selectors.BaseSelector, deadline: float, timeout: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not selector.select(remaining):
            raise SubjectFault(f"no response within {timeout:g} s")

    def _send(self, request: bytes, deadline: float, timeout: float) -> None:
        view = memoryview(request)
        while view:
            try:
                view = view[os.write(self._stdin_fd, view) :]
            except BlockingIOError:
                self._wait(self._writable, deadline, timeout)
            except BrokenPipeError:
                raise SubjectFault(self._exited("stdin", "before reading the request")) from None

    def _receive(self, deadline: float, timeout: float) -> bytes:
        scanned = 0
        while (end := self._pending.find(b"\n", scanned)) < 0:
            scanned = len(self._pending)
            self._wait(self._readable, deadline, timeout)
            chunk = os.read(self._stdout_fd, _READ_CHUNK)
            if not chunk:
                raise SubjectFault(self._exited("stdout", "without answering"))
            self._pending += chunk
        line = bytes(self._pending[:end])
        del self._pending[: end + 1]
        if self._pending:
            extra = self._pending.decode("utf-8", "replace")
            raise SubjectFault(f"wrote more than one line for one request: {show(extra)}")
        return line

    def _exited(self, pipe: str, when: str) -> str:
        try:
            code = self._popen.wait(timeout=_GRACE)
        except subprocess.TimeoutExpired:
            return f"closed its {pipe} {when}"
        return f"exited with code {code} {when}"

    def stderr_tail(self) -> str:
        """The last lines of stderr, indented, after the process has ended."""
        self._drainer.join(timeout=_GRACE)
        lines = list(self._stderr_tail)
        if not lines:
            return "\ntestee stderr: (empty)"
        return "\ntestee stderr (last lines):\n" + "\n".join(f"  | {line}" for line in lines)

    def kill(self) -> None:
        """Kill the testee (if still alive) and release the pipes; safe to repeat."""
        self._popen.kill()
        self._popen.wait()
        for pipe in (self._stdin, self._stdout):
            with contextlib.suppress(OSError):
                pipe.close()
        self._readable.close()
        self._writable.close()

    def close(self) -> None:
        """End of stdin asks the testee to exit; kill it if it does not within the grace time."""
        with contextlib.suppress(OSError):
            self._stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(timeout=_GRACE)
        self.kill()


class CommandSubject:
    """Runs cases through a testee command speaking protocol version 1.

    ``name`` and ``features`` are what the testee declared in its latest hello.
    """

    def __init__(
        self,
        argv: Sequence[str],
        timeout: float = DEFAULT_TIMEOUT,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        if not argv:
            raise TargetError("command '': empty command line")
        self._argv = list(argv)
        self._label = shlex.join(self._argv)
        self._timeout = timeout
        self._start_timeout = max(timeout, start_timeout)
        self._process: _Process | None = None
        self.name = self._label  # until the hello names the implementation
        self.features: frozenset[str] = frozenset()
        try:
            self._start()
        except SubjectFault as fault:
            raise TargetError(f"command {self._label!r}: {fault}") from None

    def _exchange(self, process: _Process, op: str, request: bytes) -> str | None:
        """One request and its result; ProtocolError or SubjectFault without the stderr tail."""
        line = process.exchange(request, self._start_timeout if op == "hello" else self._timeout)
        try:
            response = decode(line)
            if op == "hello":
                self.name, self.features = parse_hello(response)
                return None
            return parse_result(response, op)
        except ProtocolError as error:
            raise ProtocolError(f"{show(line.decode('utf-8', 'replace'))}: {error}") from None

    def _request(self, process: _Process, op: str, request: bytes, after: str) -> str | None:
        """``_exchange``, but a fault kills the testee and says which request, why, and the
        testee's stderr tail."""
        try:
            return self._exchange(process, op, request)
        except (SubjectFault, ProtocolError) as fault:
            process.kill()
            sent = show(request.decode("ascii").rstrip("\n"))
            invalid = "invalid response " if isinstance(fault, ProtocolError) else ""
            raise SubjectFault(
                f"request {sent}: {invalid}{fault}{after}{process.stderr_tail()}"
            ) from None

    def _start(self) -> None:
        process = _Process(self._argv)
        self._request(process, "hello", encode(hello_request()), "")
        self._process = process

    def _call(self, request: Message) -> str | None:
        op: str = request["op"]
        try:
            data = encode(request)
        except (TypeError, ValueError) as error:
            raise SubjectFault(f"{op!r} request cannot be sent as JSON: {error}") from None
        if self._process is None:
            if op != "new":
                raise SubjectFault(f"no testee running for {op!r} (it was killed earlier)")
            try:
                self._start()
            except SubjectFault as fault:
                raise SubjectFault(f"restarting the testee failed: {fault}") from None
        process = self._process
        assert process is not None
        try:
            return self._request(
                process,
                op,
                data,
                "\n(the testee was killed; a fresh one starts with the next case)",
            )
        except SubjectFault:
            self._process = None
            raise

    def new(self, instance: str) -> None:
        self._call(new_request(instance))

    def perform(self, step: Step) -> str | None:
        return self._call(step.request())

    def close(self) -> None:
        if self._process is not None:
            self._process.close()
            self._process = None
