"""The line protocol's messages (spec/PROTOCOL.md), built and checked here by both ends (the
kit's client and the Python testee), so that they cannot drift apart."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeAlias

from tokasm._display import show
from tokasm._versions import PROTOCOL_VERSION
from tokasm.corpus.steps import OPS
from tokasm.errors import ImplementationError, ProtocolError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from tokasm.corpus.steps import Step

#: Features a testee may declare in its hello; each enables one optional op.
KNOWN_FEATURES: frozenset[str] = frozenset(step.feature for step in OPS.values() if step.feature)
Message: TypeAlias = "dict[str, Any]"
#: The longest message line in bytes, without its LF: 16 times the corpus's largest answer.
MAX_LINE_BYTES = 16 * 1024 * 1024
#: The longest hello ``name``: it heads every report line about the target.
MAX_NAME_CHARS = 200
#: Characters of an error response's ``error`` and ``kind`` kept for reports.
MAX_TEXT_CHARS = 2000
#: The most common response line, as both ends write it: read without decoding.
NULL_RESULT = b'{"ok":true,"result":null}'
#: How both ends begin a text result: the rest of such a line is read as one JSON string.
TEXT_RESULT = b'{"ok":true,"result":"'


def _not_json(constant: str) -> object:
    raise ValueError(f"{constant} is not JSON")


# Made once: json.dumps and JSONEncoder.encode build a new encoder on every call.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)  # None without the C accelerator
_PARTS: Callable[[object], Iterable[str]] = _ENCODER.iterencode
_STRING: Callable[[str], str] = json.encoder.encode_basestring_ascii  # as the encoder writes one
if _C_ENCODER is not None:
    _C_PARTS = _C_ENCODER(None, _ENCODER.default, _STRING, None,
                          ":", ",", False, False, False)  # fmt: skip
    _PARTS = lambda message: _C_PARTS(message, 0)  # noqa: E731
_DECODER = json.JSONDecoder(parse_constant=_not_json)
#: The decoder's own reader of a string, strict as it is (typeshed does not declare it).
_SCAN: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


def encode(message: Mapping[str, object]) -> bytes:
    """TypeError, ValueError or RecursionError if JSON cannot carry ``message``."""
    return ("".join(_PARTS(message)) + "\n").encode("ascii")


def _json(value: object) -> str:
    return _STRING(value) if type(value) is str else "".join(_PARTS(value))


def encode_step(step: Step) -> bytes:
    """``encode(step.request())``, without building the request first (once per step sent)."""
    line = f'{{"op":"{step.op}","instance":{_json(step.instance)}'
    for name in step.fields:
        line += f',"{name}":{_json(getattr(step, name))}'
    return (line + "}\n").encode("ascii")


def text_result(line: bytes) -> str | None:
    """The text of a line that is exactly ``{"ok":true,"result":"..."}``, read as ``decode``
    reads it; None for any other line (``decode`` then reads it, and says what is wrong)."""
    if not (line.startswith(TEXT_RESULT) and line.endswith(b'"}')):
        return None
    try:
        text = line.decode("utf-8")
        result, end = _SCAN(text, len(TEXT_RESULT))
    except ValueError:  # not UTF-8, or not a JSON string
        return None
    return result if end == len(text) - 1 else None


def decode(line: bytes) -> Message:
    try:
        message = _DECODER.decode(line.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ProtocolError(f"not UTF-8 ({error.reason} at byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise ProtocolError(f"not JSON ({error.msg} at column {error.colno})") from None
    except RecursionError:
        raise ProtocolError("JSON nested too deeply") from None
    except ValueError as error:  # NaN, or an integer too long to convert
        raise ProtocolError(f"not JSON ({error})") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"a JSON {type(message).__name__}, not an object")
    return message


def hello_request() -> Message:
    return {"op": "hello", "protocol": PROTOCOL_VERSION}


def new_request(instance: str) -> Message:
    return {"op": "new", "instance": instance}


def hello_response(name: str, features: Iterable[str]) -> Message:
    return {"ok": True, "protocol": PROTOCOL_VERSION, "name": name, "features": sorted(features)}


def error_response(kind: str | None, message: str) -> Message:
    """``kind`` is compared with a strict case's expected error (STRICT-*); None omits it."""
    return {"ok": False, "error": message} | ({} if kind is None else {"kind": kind})


def is_current_version(value: object) -> bool:
    """True for this kit's protocol number (and not for ``true``, which JSON-equals 1)."""
    return type(value) is int and value == PROTOCOL_VERSION


def parse_hello(response: Mapping[str, object]) -> tuple[str, frozenset[str]]:
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
    """ImplementationError for ``ok: false``."""
    ok = response.get("ok")
    if ok is False:
        error, kind = response.get("error"), response.get("kind")
        if not isinstance(error, str) or not (kind is None or isinstance(kind, str)):
            raise ProtocolError("an error response needs a string 'error' and an optional 'kind'")
        raise ImplementationError(kind and _clipped(kind), _clipped(error))
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
    if len(text) <= MAX_TEXT_CHARS:
        return text
    return f"{text[:MAX_TEXT_CHARS]}... ({len(text)} characters)"
