"""The line protocol spoken with testees, version 1 (spec/PROTOCOL.md).

Both ends build and check their messages here: the kit's client
(``protocol_client``) and the Python testee (``testee``), so they cannot
drift apart from each other or from the document.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeAlias

from .._versions import PROTOCOL_VERSION
from ..errors import ImplementationError, ProtocolError
from .steps import OPS

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "KNOWN_FEATURES",
    "OK",
    "PROTOCOL_VERSION",
    "Message",
    "ProtocolError",
    "decode",
    "encode",
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

#: The response to ``new``.
OK: Message = {"ok": True}


def encode(message: Mapping[str, object]) -> bytes:
    """One message as one line: compact JSON, non-ASCII escaped (so plain UTF-8), then LF.

    Raises TypeError or ValueError for a value JSON cannot carry (NaN, a date).
    """
    return (json.dumps(message, separators=(",", ":"), allow_nan=False) + "\n").encode("ascii")


def decode(line: bytes) -> Message:
    """Parse one line (without its LF) into a JSON object, or raise ProtocolError."""
    try:
        message = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ProtocolError(f"not UTF-8 ({error.reason} at byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise ProtocolError(f"not JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"a JSON {type(message).__name__}, not an object")
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
        raise ProtocolError(f"hello refused: {response.get('error', response)!r}")
    if not is_current_version(response.get("protocol")):
        raise ProtocolError(
            f"testee speaks protocol {response.get('protocol')!r}, this kit {PROTOCOL_VERSION}"
        )
    name = response.get("name")
    if not isinstance(name, str) or not name:
        raise ProtocolError(f"hello needs a non-empty string 'name', got {name!r}")
    features = response.get("features", [])
    if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
        raise ProtocolError(f"hello 'features' must be a list of strings, got {features!r}")
    return name, frozenset(features) & KNOWN_FEATURES


def parse_result(response: Mapping[str, object], op: str) -> str | None:
    """The ``result`` of a response to ``op``; ImplementationError for ``ok: false``."""
    ok = response.get("ok")
    if ok is False:
        error, kind = response.get("error"), response.get("kind")
        if not isinstance(error, str) or not (kind is None or isinstance(kind, str)):
            raise ProtocolError("an error response needs a string 'error' and an optional 'kind'")
        raise ImplementationError(kind, error)
    if ok is not True:
        raise ProtocolError(f"'ok' must be true or false, got {ok!r}")
    if op == "new":
        return None
    if "result" not in response:
        raise ProtocolError(f"a response to {op!r} needs 'result'")
    result = response["result"]
    if result is not None and not isinstance(result, str):
        raise ProtocolError(f"'result' must be a string or null, got {result!r}")
    return result
