"""A Python target as tokasm checks it: in a worker process, never in tokasm's own.

The worker is the Python testee (``protocol.testee``) with ``--worker``: it imports the
target and runs whole cases in its process, as any test runner does, and answers each
case's result as data. This side supervises it as it supervises any testee
(``protocol._client``): a deadline per call, renewed by heartbeats; on an exit, a crash,
a hang or garbage, the worker's process group is killed, the case that was running is
errored with what happened, and a fresh worker starts at the next case. So whatever the
target does to its process costs that one case.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from tokasm.errors import ProtocolError, TargetError, TargetFault
from tokasm.protocol._client import (
    BEATS_FOR,
    BREAKER_FAULTS,
    DEFAULT_TIMEOUT,
    LOAD_TIMEOUT,
    PIPELINE_WINDOW,
    CommandTarget,
    _Process,
)
from tokasm.protocol._codec import Message, decode, encode, hello_request, parse_hello
from tokasm.protocol.testee import python_testee_command
from tokasm.run._cost import probe_named
from tokasm.run.results import CaseResult

if TYPE_CHECKING:
    from tokasm.corpus._load import Case

__all__ = ["FUZZ_SECONDS", "WorkerTarget"]

#: The longest check's fuzz phase may take in the worker, shrinking included (its own
#: budgets are 20 s and 3 s, on clocks a target cannot stop).
FUZZ_SECONDS = 60.0


class WorkerTarget(CommandTarget):
    """A Python target (``MODULE:ATTR`` or a bundled backend) served by tokasm's worker."""

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
        options = ["--worker", repr(timeout), "--load-timeout", repr(LOAD_TIMEOUT)]
        options += ["--strict"] if strict else []
        argv = python_testee_command(target, *options)
        super().__init__(argv, timeout, LOAD_TIMEOUT, window=window, breaker=breaker)

    def _start_failed(self, fault: TargetFault) -> TargetError:
        return TargetError(f"target {self.target!r}: loading it failed: {fault}")

    def _greet(self, process: _Process) -> tuple[str, frozenset[str]]:
        """The hello; a target that does not load answers it with its load error."""
        process.write(encode(hello_request()))
        response = decode(process.read_line(self._start_timeout))
        if response.get("kind") == "TargetError" and isinstance(response.get("error"), str):
            process.kill()
            raise TargetError(response["error"])
        return parse_hello(response)

    def run_case(self, case: Case, *, debug: bool = False) -> CaseResult:
        """``case`` run whole in the worker; a fault of the worker errors it."""
        request: dict[str, object] = {
            "op": "case",
            "case": case.document,
            "source": str(case.source),
        }
        if debug:
            request["debug"] = True
        return self._ask(request, f"case {case.id!r}", CaseResult.of(case, "errored"))

    def probe(self, probe_id: str, *, strict: bool = False) -> CaseResult:
        """The cost probe ``probe_id`` (``run._cost.PROBE_IDS``), timed in the worker."""
        request = {"op": "probe", "id": probe_id, "strict": strict}
        return self._ask(
            request, f"the cost probe {probe_id}", probe_named(probe_id, "errored", "")
        )

    def fuzz(self, examples: int) -> tuple[str, ...]:
        """``check``'s fuzz phase, run in the worker: the disagreement found, if any."""
        request = {"op": "fuzz", "examples": examples}
        answer = self._exchange(request, "the fuzz phase", max(self.timeout, FUZZ_SECONDS))
        if isinstance(answer, str):
            return (f"fuzz phase: {answer}",)
        problems = answer.get("problems")
        if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
            return (f"fuzz phase: not a list of problems: {str(answer)[:200]}",)
        return tuple(problems)

    def _ask(self, request: dict[str, object], label: str, check: CaseResult) -> CaseResult:
        """The result the worker answered to ``request``, as data; the check's own names
        (``check``) stand, whatever the worker says. A fault of the worker is an errored
        result saying what happened."""
        answer = self._exchange(request, label, self.timeout * BEATS_FOR)
        try:
            if isinstance(answer, str):
                raise ProtocolError(answer)
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

    def _exchange(self, request: dict[str, object], label: str, beats_for: float) -> Message | str:
        """The worker's answer to ``request`` (heartbeats renew the deadline for up to
        ``beats_for`` seconds), or what went wrong: the worker is then killed, and the
        fault counts towards the circuit breaker."""
        try:
            process = self.running()
        except (TargetFault, TargetError) as fault:
            return str(fault)
        try:
            process.refuse_unasked()
            process.write(encode(request))
            response = decode(process.read_line(self.timeout, beats_for=beats_for))
            if response.get("ok") is not True:
                raise ProtocolError(f"not an answer: {str(response)[:200]}")
        except (ProtocolError, TargetFault) as error:
            return str(self.fault(process, label, str(error)))
        self.healthy()
        return response
