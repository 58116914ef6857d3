"""Serve any Python assembler as a protocol testee: ``python -m tokasm.protocol.testee TARGET``.

This proves the subprocess path without a second language, and lets
``tokasm check --isolate`` run a Python target in its own process, so one
that hangs costs one case. Requests are dispatched to a ``PythonSubject``;
what the implementation raises becomes an ``ok: false`` response whose
``kind`` names the error class (STRICT-* compare it).

The protocol channel is private: before the target is imported, the testee
keeps its own copies of stdin and stdout, then points file descriptor 0 at
/dev/null and 1 at stderr. A target's debug ``print()``, a C library writing
to fd 1, or code reading stdin cannot touch the protocol, so ``--isolate``
gives the verdict the in-process run gives.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import IO, TYPE_CHECKING

from tokasm._versions import PROTOCOL_VERSION
from tokasm.corpus.steps import OPS, string_field
from tokasm.errors import ImplementationError, ProtocolError, TargetError
from tokasm.implementations import strict
from tokasm.protocol._codec import (
    NOT_TEXT,
    OK,
    decode,
    encode,
    error_response,
    hello_response,
    is_current_version,
    result_response,
)
from tokasm.run.subjects import Foreign, PythonSubject, resolve_target

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tokasm.implementations import AssemblerFactory
    from tokasm.protocol._codec import Message

__all__ = ["main", "python_testee_command", "respond", "serve"]


def python_testee_command(target: str) -> list[str]:
    """The argv that serves ``target`` over the protocol with this interpreter."""
    return [sys.executable, "-m", "tokasm.protocol.testee", target]


def _dispatch(subject: PythonSubject, request: Message) -> Message:
    op = request.get("op")
    if op == "hello":
        if not is_current_version(request.get("protocol")):
            raise ProtocolError(f"this testee speaks protocol {PROTOCOL_VERSION} only")
        return hello_response(subject.name, subject.features)
    if op == "new":
        subject.new(string_field(request, "instance"))
        return OK
    step = OPS.get(op) if isinstance(op, str) else None
    if step is None or (step.feature is not None and step.feature not in subject.features):
        raise ProtocolError(f"unknown op {op!r}")
    result = subject.perform(step.from_request(request))
    if isinstance(result, Foreign):  # the protocol carries text or null only: answered as an
        # error of a kind no step expects, so the step fails as it does in process, without
        # a testee fault (a restart, the circuit breaker) that would cost other cases
        return error_response(NOT_TEXT, result.shown)
    return result_response(result)


def respond(subject: PythonSubject, line: bytes) -> Message:
    """The response to one request line; never raises for a bad request or a raising assembler."""
    try:
        return _dispatch(subject, decode(line))
    except ProtocolError as error:
        return error_response("ProtocolError", str(error))
    except ImplementationError as error:
        return error_response(error.kind, error.message)


def serve(subject: PythonSubject, requests: IO[bytes], responses: IO[bytes]) -> None:
    """Answer each request line with one response line until end of input."""
    for line in requests:
        if line.strip():
            responses.write(encode(respond(subject, line)))
            responses.flush()


def _private_channel() -> tuple[IO[bytes], IO[bytes]]:
    """The protocol's own (requests, responses) streams; fd 0 then reads /dev/null and fd 1
    (and ``sys.stdout``) writes to stderr, for whatever the target does."""
    requests = os.fdopen(os.dup(0), "rb")
    responses = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return requests, responses


def _strict(factory: AssemblerFactory) -> AssemblerFactory:
    return lambda: strict(factory())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tokasm.protocol.testee",
        description="Serve a Python assembler as a tokasm protocol testee on stdin/stdout "
        "(spec/PROTOCOL.md).",
    )
    parser.add_argument("target", metavar="TARGET", help="MODULE:ATTR or a bundled backend name")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="validate events first (tokasm.implementations.StrictAssembler), for --profile strict",
    )
    args = parser.parse_args(argv)
    target: str = args.target
    requests, responses = _private_channel()  # before the target's module runs any code
    try:
        factory = resolve_target(target)
        if args.strict:
            subject = PythonSubject(_strict(factory), f"{target} (strict)")
        else:
            subject = PythonSubject(factory, target)
    except TargetError as error:
        print(f"tokasm testee: error: {error}", file=sys.stderr)
        return 2
    serve(subject, requests, responses)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
