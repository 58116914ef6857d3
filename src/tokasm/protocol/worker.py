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

import dataclasses
from typing import TYPE_CHECKING, Any

from tokasm.errors import ProtocolError, SubjectFault, TargetError
from tokasm.protocol._client import (
    BREAKER_FAULTS,
    DEFAULT_TIMEOUT,
    LOAD_TIMEOUT,
    PIPELINE_WINDOW,
    CommandSubject,
    _Process,
)
from tokasm.protocol._codec import decode, encode, hello_request, parse_hello
from tokasm.protocol.testee import python_testee_command
from tokasm.run._cost import probe_named
from tokasm.run.results import OUTCOMES, CaseResult

if TYPE_CHECKING:
    from tokasm.corpus._load import Case
    from tokasm.run.results import Outcome

__all__ = ["WorkerSubject"]


class WorkerSubject(CommandSubject):
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

    def _start_failed(self, fault: SubjectFault) -> TargetError:
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
        answer = self._ask(request, f"case {case.id!r}")
        result = CaseResult.of(case, answer.outcome, answer.message)
        return dataclasses.replace(result, requirements=answer.requirements or case.requirements)

    def probe(self, probe_id: str, *, strict: bool = False) -> CaseResult:
        """The cost probe ``probe_id`` (``run._cost.PROBE_IDS``), timed in the worker."""
        request = {"op": "probe", "id": probe_id, "strict": strict}
        answer = self._ask(request, f"the cost probe {probe_id}")
        result = probe_named(probe_id, answer.outcome, answer.message)
        return dataclasses.replace(result, note=answer.note)

    def _ask(self, request: dict[str, object], label: str) -> CaseResult:
        """What the worker answered to ``request`` (only outcome, message, requirements and
        note are read); a fault of the worker is an errored result saying what happened."""
        try:
            process = self.running()
        except (SubjectFault, TargetError) as fault:
            return _answer("errored", f"testee fault in the worker: {fault}")
        try:
            process.refuse_unasked()
            process.write(encode(request))
            data = _case_data(decode(process.read_line(self.timeout)))
        except (ProtocolError, SubjectFault) as error:
            killed = self.fault(process, label, str(error))
            return _answer("errored", f"testee fault in the worker: {killed}")
        self.healthy()
        return _answer(
            data["outcome"], data["message"], tuple(data["requirements"]), data.get("note", "")
        )


def _answer(
    outcome: Outcome, message: str, requirements: tuple[str, ...] = (), note: str = ""
) -> CaseResult:
    return CaseResult("", "", outcome, message, requirements, note=note)


def _case_data(response: dict[str, Any]) -> dict[str, Any]:
    """The result a worker answered, its shape checked (it is the target's process)."""
    data = response.get("case")
    if response.get("ok") is not True or not isinstance(data, dict):
        raise ProtocolError(f"not a case result: {str(response)[:200]}")
    requirements = data.get("requirements")
    if (
        data.get("outcome") not in OUTCOMES
        or not isinstance(data.get("message"), str)
        or not isinstance(requirements, list)
        or not all(isinstance(rid, str) for rid in requirements)
        or not isinstance(data.get("note", ""), str)
    ):
        raise ProtocolError(f"not a case result: {str(data)[:200]}")
    return data
