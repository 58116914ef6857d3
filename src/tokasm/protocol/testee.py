"""Serve a Python assembler over the line protocol; with ``--worker``, tokasm's worker.

The worker also runs tokasm's own ops (``case``, ``probe``, ``fuzz``), beats between steps,
and dumps its stacks on the SIGABRT sent to a hung call. It defends nothing: the supervisor
kills it on any fault. Before the target loads, fds 0 and 1 go to /dev/null and stderr.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import resource
import sys
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING

from tokasm import _clocks
from tokasm._versions import PROTOCOL_VERSION
from tokasm.corpus import parse_case
from tokasm.corpus.steps import OPS, string_field
from tokasm.errors import ImplementationError, ProtocolError, TargetError
from tokasm.implementations import strict
from tokasm.protocol._client import HEARTBEAT
from tokasm.protocol._codec import (
    decode,
    encode,
    error_response,
    hello_response,
    is_current_version,
)
from tokasm.run import run_probe
from tokasm.run.results import NOT_TEXT
from tokasm.run.runner import run_case
from tokasm.run.targets import Foreign, PythonTarget, resolve_target

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tokasm.corpus.steps import Step
    from tokasm.implementations import Assembler, AssemblerFactory
    from tokasm.protocol._codec import Message

#: ``sys.path`` before the target's folder is put first (``python_child`` leaves the current
#: folder off): where tokasm's own late imports look.
_TOKASM_PATH = list(sys.path)
#: The address space a worker may use (``RLIMIT_AS``): far more than any assembler needs.
WORKER_MEMORY = 8 << 30


class _Worker(PythonTarget):
    """A ``PythonTarget`` that tells the supervisor it is alive between calls."""

    def __init__(
        self, factory: AssemblerFactory, name: str, out: IO[bytes], timeout: float
    ) -> None:
        super().__init__(factory, name)
        self._out, self._interval = out, timeout / 4
        self.last = _clocks.monotonic()  # when the last request came or heartbeat went

    def _beat(self) -> None:
        if _clocks.monotonic() - self.last >= self._interval:
            self.last = _clocks.monotonic()
            self._out.write(HEARTBEAT + b"\n")
            self._out.flush()

    def new(self, instance: str) -> None:
        self._beat()
        super().new(instance)

    def perform_raw(self, step: Step) -> object:
        self._beat()
        return super().perform_raw(step)


def _worker_answer(target: _Worker, request: Message) -> Message:
    target.last = _clocks.monotonic()  # a request came: the next heartbeat is due from now
    if request["op"] == "case":
        case = parse_case(request["case"], Path(request["source"]))
        return {"ok": True, "case": run_case(target, case, debug=request["debug"]).to_data()}
    if request["op"] == "probe":
        result = run_probe(request["id"], target, strict=request["strict"])
        return {"ok": True, "case": result.to_data()}
    from tokasm.fuzz import first_disagreement, shrunk

    failed = first_disagreement(target, request["documents"])
    if failed is None:
        return {"ok": True, "problems": []}
    target_path, sys.path[:] = sys.path[:], _TOKASM_PATH
    try:  # Hypothesis, only to shrink a disagreement, blind to a project's queue.py
        from tokasm.fuzz import _search  # noqa: F401
    finally:
        sys.path[:] = target_path
    problems = shrunk(target, request["examples"], *failed, request["incremental"])
    return {"ok": True, "problems": list(problems)}


def _dispatch(target: PythonTarget, request: Message) -> Message:
    op = request.get("op")
    if op == "hello":
        if not is_current_version(request.get("protocol")):
            raise ProtocolError(f"this testee speaks protocol {PROTOCOL_VERSION} only")
        return hello_response(target.name, target.features)
    if op == "new":
        target.new(string_field(request, "instance"))
        return {"ok": True}
    if isinstance(target, _Worker) and op in ("case", "probe", "fuzz"):
        try:
            return _worker_answer(target, request)
        finally:  # its instances go with the check: what their finalizers do costs it
            target.close()
    step = OPS.get(op) if isinstance(op, str) else None
    if step is None or (step.feature is not None and step.feature not in target.features):
        raise ProtocolError(f"unknown op {op!r}")
    result = target.perform(step.from_request(request))
    if isinstance(result, Foreign):  # the protocol carries text or null only: an error of a
        return error_response(NOT_TEXT, result.shown)  # kind no step expects, as in process
    return {"ok": True, "result": result}


def respond(target: PythonTarget, line: bytes) -> Message:
    """Never raises for a bad request or a raising assembler."""
    try:
        return _dispatch(target, decode(line))
    except ProtocolError as error:
        return error_response("ProtocolError", str(error))
    except ImplementationError as error:
        return error_response(error.kind, error.message)


def serve(target: PythonTarget, requests: IO[bytes], responses: IO[bytes]) -> None:
    """A process the target forked answers nothing (only the one that read the request does)."""
    server = os.getpid()
    for line in requests:
        if line.strip():
            response = encode(respond(target, line))
            if os.getpid() != server:
                os._exit(0)
            responses.write(response)
            responses.flush()


def private_channel() -> tuple[IO[bytes], IO[bytes]]:
    """(requests, responses), which a forked process does not keep; fd 0 then reads /dev/null
    and fd 1 (and ``sys.stdout``) writes to stderr."""
    requests, responses = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    private = (requests.fileno(), responses.fileno())
    os.register_at_fork(after_in_child=lambda: [*map(os.close, private)])
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return requests, responses


def bound_memory() -> None:
    """Memory exhaustion in a worker is a MemoryError at ``WORKER_MEMORY`` bytes of address
    space (or at a lower limit already set: it cannot be raised), not the OOM killer."""
    soft, hard = (
        WORKER_MEMORY if limit == resource.RLIM_INFINITY else min(limit, WORKER_MEMORY)
        for limit in resource.getrlimit(resource.RLIMIT_AS)
    )
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _strict(factory: AssemblerFactory) -> Assembler:
    return strict(factory())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tokasm.protocol.testee",
        description="Serve a Python assembler as a tokasm protocol testee on stdin/stdout "
        "(spec/PROTOCOL.md).",
    )
    add = parser.add_argument
    add("target", metavar="TARGET", help="MODULE:ATTR or a bundled backend name")
    add("--strict", action="store_true", help="validate events first "
        "(tokasm.implementations.StrictAssembler), for --profile strict")  # fmt: skip
    add("--worker", type=float, metavar="TIMEOUT", help="serve as tokasm's worker: "
        "heartbeats every TIMEOUT/4 seconds during a case")  # fmt: skip
    args = parser.parse_args(argv)
    name: str = args.target
    requests, responses = private_channel()  # before the target's module runs any code
    if args.worker is not None:
        bound_memory()
        # A crash, or the SIGABRT the supervisor sends a hung call or load, leaves every
        # thread's stack.
        faulthandler.enable(file=sys.stderr)
    try:
        factory = resolve_target(name)
        if args.strict:
            factory, name = partial(_strict, factory), f"{name} (strict)"
        if args.worker is None:
            target = PythonTarget(factory, name)
        else:
            target = _Worker(factory, name, responses, args.worker)
    except TargetError as error:
        print(f"tokasm testee: error: {error}", file=sys.stderr)
        for line in requests if args.worker is not None else ():
            if line.strip():  # every request answered with the load error, reported as such
                responses.write(encode(error_response("TargetError", str(error))))
                responses.flush()
        return 2
    serve(target, requests, responses)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
