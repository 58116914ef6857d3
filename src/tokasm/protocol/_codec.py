"""The line protocol spoken with testees, version 1 (spec/PROTOCOL.md).

Both ends build and check their messages here: the kit's client
(``protocol_client``) and the Python testee (``testee``), so they cannot
drift apart from each other or from the document.
"""

from __future__ import annotations

import functools
import json
import re
from typing import TYPE_CHECKING, Any, TypeAlias

from tokasm._display import show
from tokasm._versions import PROTOCOL_VERSION
from tokasm.corpus.steps import OPS
from tokasm.errors import ImplementationError, ProtocolError
from tokasm.run.results import NOT_TEXT

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from tokasm.corpus.steps import Step

__all__ = [
    "KNOWN_FEATURES",
    "MAX_DEPTH",
    "MAX_LINE_BYTES",
    "MAX_NAME_CHARS",
    "MAX_TEXT_CHARS",
    "MAX_VALUES",
    "NOT_TEXT",
    "OK",
    "PROTOCOL_VERSION",
    "Message",
    "ProtocolError",
    "decode",
    "encode",
    "encode_step",
    "error_response",
    "hello_request",
    "hello_response",
    "is_current_version",
    "new_request",
    "parse_hello",
    "parse_result",
    "result_response",
]

#: Features a testee may declare in its hello; each enables one optional op.
KNOWN_FEATURES: frozenset[str] = frozenset(step.feature for step in OPS.values() if step.feature)

Message: TypeAlias = "dict[str, Any]"

#: The longest message line, in bytes without its LF. The corpus's largest answer is
#: about 1 MiB; 16 times that leaves room for user cases and escaped text, while the
#: kit's memory for one line (its bytes, text and parsed value: at most about ten
#: times the line) stays far under 500 MB.
MAX_LINE_BYTES = 16 * 1024 * 1024

#: The most JSON values (counted by the commas, brackets and braces outside strings)
#: in one message, so a long line cannot become millions of Python objects.
MAX_VALUES = 10_000

#: The deepest nesting of arrays and objects in a message (a response is 1 deep, a
#: request with an event 2; strict events and a testee's own keys may add a few).
MAX_DEPTH = 32

#: The longest hello ``name``: it heads every report line about the target.
MAX_NAME_CHARS = 200

#: Characters of an error response's ``error`` and ``kind`` kept for reports.
MAX_TEXT_CHARS = 2000

#: The response to ``new``.
OK: Message = {"ok": True}


def encode(message: Mapping[str, object]) -> bytes:
    """One message as one line: compact JSON, non-ASCII escaped (so plain UTF-8), then LF.

    Raises TypeError or ValueError for a value JSON cannot carry (NaN, a date).
    """
    return (_ENCODER.encode(message) + "\n").encode("ascii")


def encode_step(step: Step) -> bytes:
    """``encode(step.request())``, the same bytes built faster, as a run sends tens of
    thousands of steps: the ``op`` and ``instance`` part is formatted once per pair, the
    rest is the step's arguments' own JSON. TypeError or ValueError as for ``encode``."""
    arguments = _STEP_JSON(step.arguments())
    if arguments == "{}":
        return encode(step.request())
    return (_request_head(step.op, step.instance) + arguments[1:] + "\n").encode("ascii")


@functools.lru_cache(maxsize=1024)
def _request_head(op: str, instance: str) -> str:
    """The start of a request's line, up to the comma before its arguments."""
    return _ENCODER.encode({"op": op, "instance": instance})[:-1] + ","


#: A JSON string, or one left open to the end of the line (its closing quote optional): an
#: open string full of ``\"`` would otherwise start a match, to fail at the end of the line,
#: at every escaped quote, which is quadratic (a 1 MB line took hours).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?')


def _separators(data: bytes) -> int:
    return data.count(b",") + data.count(b"[") + data.count(b"{")


def _too_many_values(line: bytes) -> bool:
    """Counted outside strings, and only when the whole line has enough of them."""
    return _separators(line) >= MAX_VALUES and _separators(_STRING.sub(b"", line)) >= MAX_VALUES


def _not_json(constant: str) -> object:
    raise ValueError(f"{constant} is not JSON")


# Made once: json.dumps and json.loads with options build a new coder on every call.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
_DECODER = json.JSONDecoder(parse_constant=_not_json)


def _step_json() -> Callable[[object], str]:
    """``_ENCODER.encode`` for a step's arguments, quicker: CPython's C encoder, which
    ``JSONEncoder.encode`` builds anew on every call, built once (no cycle check: the
    kit's own steps are acyclic JSON), or ``_ENCODER.encode`` where there is none."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return _ENCODER.encode
    ascii_string = json.encoder.encode_basestring_ascii
    parts = make(None, _ENCODER.default, ascii_string, None, ":", ",", False, False, False)
    return lambda value: "".join(parts(value, 0))


_STEP_JSON = _step_json()


def _deeper_than(value: dict[str, object], limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` deep (walked without recursion)."""
    stack: list[tuple[dict[str, object] | list[object], int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, (dict, list)):
                if depth == limit:
                    return True
                stack.append((child, depth + 1))
    return False


def decode(line: bytes) -> Message:
    """Parse one line (without its LF) into a JSON object, or raise ProtocolError.

    Bounded: a line over MAX_LINE_BYTES, with over MAX_VALUES values or nested over
    MAX_DEPTH is refused, never a RecursionError or millions of objects.
    """
    if len(line) > MAX_LINE_BYTES:
        raise ProtocolError(f"a line of {len(line)} bytes, over the limit of {MAX_LINE_BYTES}")
    if _too_many_values(line):
        raise ProtocolError(f"more JSON values than the limit of {MAX_VALUES}")
    try:
        message = _DECODER.decode(line.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ProtocolError(f"not UTF-8 ({error.reason} at byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise ProtocolError(f"not JSON ({error.msg} at column {error.colno})") from None
    except RecursionError:
        raise ProtocolError(f"JSON nested deeper than the limit of {MAX_DEPTH}") from None
    except ValueError as error:  # NaN, or an integer too long to convert
        raise ProtocolError(f"not JSON ({error})") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"a JSON {type(message).__name__}, not an object")
    if _deeper_than(message, MAX_DEPTH):
        raise ProtocolError(f"JSON nested deeper than the limit of {MAX_DEPTH}")
    return message


def hello_request() -> Message:
    return {"op": "hello", "protocol": PROTOCOL_VERSION}


def new_request(instance: str) -> Message:
    return {"op": "new", "instance": instance}


def hello_response(name: str, features: Iterable[str]) -> Message:
    return {"ok": True, "protocol": PROTOCOL_VERSION, "name": name, "features": sorted(features)}


def result_response(result: str | None) -> Message:
    return {"ok": True, "result": result}


def error_response(kind: str | None, message: str) -> Message:
    """``kind`` is compared with a strict case's expected error (STRICT-*); None omits it."""
    response: Message = {"ok": False, "error": message}
    if kind is not None:
        response["kind"] = kind
    return response


def is_current_version(value: object) -> bool:
    """True for this kit's protocol number (and not for ``true``, which JSON-equals 1)."""
    return type(value) is int and value == PROTOCOL_VERSION


def parse_hello(response: Mapping[str, object]) -> tuple[str, frozenset[str]]:
    """The testee's name and declared features, or ProtocolError saying what is wrong."""
    if response.get("ok") is not True:
        raise ProtocolError(f"hello refused: {show(response.get('error', response))}")
    if not is_current_version(response.get("protocol")):
        raise ProtocolError(
            f"testee speaks protocol {show(response.get('protocol'))}, this kit {PROTOCOL_VERSION}"
        )
    name = response.get("name")
    if not isinstance(name, str) or not name:
        raise ProtocolError(f"hello needs a non-empty string 'name', got {show(name)}")
    if len(name) > MAX_NAME_CHARS or not name.isprintable():
        raise ProtocolError(
            f"hello 'name' must be printable and at most {MAX_NAME_CHARS} characters, "
            f"got {show(name)}"
        )
    features = response.get("features", [])
    if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
        raise ProtocolError(f"hello 'features' must be a list of strings, got {show(features)}")
    return name, frozenset(features) & KNOWN_FEATURES


def parse_result(response: Mapping[str, object], op: str) -> str | None:
    """The ``result`` of a response to ``op``; ImplementationError for ``ok: false``."""
    ok = response.get("ok")
    if ok is False:
        error, kind = response.get("error"), response.get("kind")
        if not isinstance(error, str) or not (kind is None or isinstance(kind, str)):
            raise ProtocolError("an error response needs a string 'error' and an optional 'kind'")
        raise ImplementationError(kind if kind is None else _clipped(kind), _clipped(error))
    if ok is not True:
        raise ProtocolError(f"'ok' must be true or false, got {show(ok)}")
    if op == "new":
        return None
    if "result" not in response:
        raise ProtocolError(f"a response to {op!r} needs 'result'")
    result = response["result"]
    if result is not None and not isinstance(result, str):
        raise ProtocolError(f"'result' must be a string or null, got {show(result)}")
    return result


def _clipped(text: str) -> str:
    """At most MAX_TEXT_CHARS of a testee's free text, saying how much was cut."""
    if len(text) <= MAX_TEXT_CHARS:
        return text
    return f"{text[:MAX_TEXT_CHARS]}... ({len(text)} characters)"
