"""A Python target as tokasm checks it: in a worker process, never in tokasm's own.

The worker (``protocol.testee --worker``) imports the target and runs whole cases in its
process, answering each result as data; this side supervises it as any testee, so
whatever the target does to its process costs the case that was running.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from tokasm.errors import ProtocolError, TargetError, TargetFault
from tokasm.protocol import _client
from tokasm.protocol._codec import decode, encode, hello_request, parse_hello
from tokasm.run._cost import probe_named
from tokasm.run.results import CaseResult

if TYPE_CHECKING:
    from tokasm.corpus._load import Case
    from tokasm.protocol._codec import Message

__all__ = ["FUZZ_SECONDS", "WorkerTarget", "python_testee_command"]

#: The longest check's fuzz phase may take in the worker, shrinking included (its own
#: budgets are 20 s and 3 s, on clocks a target cannot stop).
FUZZ_SECONDS = 60.0


def python_testee_command(target: str, *options: str) -> list[str]:
    """The argv that serves ``target`` over the protocol with this interpreter."""
    return [sys.executable, "-m", "tokasm.protocol.testee", *options, target]


class WorkerTarget(_client.CommandTarget):
    """A Python target (``MODULE:ATTR`` or a bundled backend) served by tokasm's worker."""

    stacks_on_abort = True

    def __init__(
        self,
        target: str,
        timeout: float = _client.DEFAULT_TIMEOUT,
        *,
        strict: bool = False,
        window: int = _client.PIPELINE_WINDOW,
        breaker: int | None = _client.BREAKER_FAULTS,
    ) -> None:
        self.target = target
        options = ["--worker", repr(timeout), *(["--strict"] if strict else [])]
        argv = python_testee_command(target, *options)
        super().__init__(argv, timeout, _client.LOAD_TIMEOUT, window=window, breaker=breaker)

    def _start_failed(self, fault: TargetFault) -> TargetError:
        return TargetError(f"target {self.target!r}: loading it failed: {fault}")

    def _greet(self, process: _client._Process) -> tuple[str, frozenset[str]]:
        """The hello; a target that does not load answers it with its load error."""
        process.write(encode(hello_request()))
        response = decode(process.read_line(self._start_timeout))
        if response.get("kind") == "TargetError" and isinstance(response.get("error"), str):
            process.kill()
            raise TargetError(response["error"])
        return parse_hello(response)

    def run_case(self, case: Case, *, debug: bool = False) -> CaseResult:
        """``case`` run whole in the worker; a fault of the worker errors it."""
        request = {"op": "case", "case": case.document, "source": str(case.source), "debug": debug}
        return self._ask(request, f"case {case.id!r}", CaseResult.of(case, "errored"))

    def probe(self, probe_id: str, *, strict: bool = False) -> CaseResult:
        """The cost probe ``probe_id`` (``run._cost.PROBE_IDS``), timed in the worker."""
        request = {"op": "probe", "id": probe_id, "strict": strict}
        return self._ask(request, f"the cost probe {probe_id}", probe_named(probe_id, "errored"))

    def fuzz(self, examples: int) -> tuple[str, ...]:
        """``check``'s fuzz phase, run in the worker: the disagreement found, if any."""
        request = {"op": "fuzz", "examples": examples}
        try:
            answer = self._exchange(request, "the fuzz phase", max(self.timeout, FUZZ_SECONDS))
            problems = answer.get("problems")
            if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
                raise ProtocolError(f"not a list of problems: {str(answer)[:200]}")
        except ProtocolError as error:
            return (f"fuzz phase: {error}",)
        return tuple(problems)

    def _ask(self, request: dict[str, object], label: str, check: CaseResult) -> CaseResult:
        """The worker's result as data, under the check's own names (``check``); a fault of
        the worker errors it, saying what happened."""
        try:
            answer = self._exchange(request, label, self.timeout * _client.BEATS_FOR)
            result = CaseResult.from_data(answer.get("case"))
        except ProtocolError as error:
            return replace(check, message=f"testee fault in the worker: {error}")
        return replace(
            result,
            case_id=check.case_id,
            description=check.description,
            source=check.source,
            requirements=result.requirements or check.requirements,
        )

    def _exchange(self, request: dict[str, object], label: str, beats_for: float) -> Message:
        """The worker's answer, heartbeats renewing the deadline for up to ``beats_for`` s; else
        ProtocolError saying what went wrong (a fault kills the worker, counted for the breaker)."""
        try:
            process = self.running()
        except (TargetFault, TargetError) as fault:
            raise ProtocolError(str(fault)) from None
        try:
            process.refuse_unasked()
            process.write(encode(request))
            response = decode(process.read_line(self.timeout, beats_for=beats_for))
            if response.get("ok") is not True:
                raise ProtocolError(f"not an answer: {str(response)[:200]}")
        except (ProtocolError, TargetFault) as error:
            raise ProtocolError(str(self.fault(process, label, str(error)))) from None
        self.healthy()
        return response
