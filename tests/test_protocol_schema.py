"""spec/protocol.schema.json describes what both ends of the protocol really send.

The requests are built by the functions the kit's client uses; the responses
are the Python testee's answers to them, for every case of every profile.
The example session of PROTOCOL.md validates too, and what the schema
refuses, the client refuses.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from helpers import example_session
from tokasm.corpus._load import load_corpus
from tokasm.corpus._paths import spec_dir
from tokasm.corpus.steps import Apply
from tokasm.errors import ImplementationError, ProtocolError
from tokasm.implementations import BACKENDS, strict
from tokasm.protocol._codec import (
    decode,
    encode,
    encode_step,
    hello_request,
    new_request,
    parse_hello,
    parse_result,
)
from tokasm.protocol.testee import respond
from tokasm.run.targets import PythonTarget

STEPS_PER_CASE = 40  # enough to meet every op and event shape; the long cases repeat themselves


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        (spec_dir() / "protocol.schema.json").read_text(encoding="utf-8")
    )
    jsonschema.Draft202012Validator.check_schema(loaded)
    return loaded


def validator(schema: dict[str, Any], part: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({**schema, "$ref": f"#/$defs/{part}"})


def response_form(op: str) -> str:
    """The schema's name for the responses to ``op``."""
    return f"response_to_{op}" if op in ("hello", "new") else "response_to_step"


def corpus_requests() -> list[bytes]:
    """Every request the client sends for the corpus (all profiles), as sent."""
    lines = [encode(hello_request())]
    for case in load_corpus():
        lines += [encode(new_request(instance)) for instance in case.instances]
        lines += [encode_step(step) for step in case.steps[:STEPS_PER_CASE]]
    return lines


def test_a_step_is_sent_as_the_json_of_its_request() -> None:
    """The client writes a step's line without building its request first: the same bytes,
    for every op and event shape of the corpus, and the same refusal of what JSON cannot carry."""
    steps = [step for case in load_corpus() if not case.large for step in case.steps]
    assert [encode_step(step) for step in steps] == [encode(step.request()) for step in steps]
    with pytest.raises(ValueError, match="not JSON compliant"):
        encode_step(Apply("a", None, {"id": "m", "delta": float("nan")}))


def test_every_request_the_client_sends_and_every_answer_the_testee_gives_is_valid(
    schema: dict[str, Any],
) -> None:
    requests = validator(schema, "request")
    responses = {op: validator(schema, response_form(op)) for op in ("hello", "new", "get")}
    subject = PythonTarget(lambda: strict(BACKENDS["list-join"]()), "list-join (strict)")
    kinds = set()
    # Every line is sent and answered, in order; a line validated once (the same bytes, for
    # the same op) is not validated again: the long cases repeat theirs, and the schema's
    # oneOf of references is most of this test's time.
    valid: set[tuple[str, bytes]] = set()
    for line in corpus_requests():
        request = decode(line.rstrip(b"\n"))
        if ("request", line) not in valid:
            requests.validate(request)
            valid.add(("request", line))
        answer = encode(respond(subject, line))
        response = decode(answer.rstrip(b"\n"))
        if (request["op"], answer) not in valid:
            responses.get(request["op"], responses["get"]).validate(response)
            valid.add((request["op"], answer))
        kinds.add((request["op"], response["ok"]))
    # every op, and refusals too (the strict profile's)
    assert {op for op, _ in kinds} == {"hello", "new", "apply", "get", "read_since"}
    assert ("apply", False) in kinds


def test_the_documented_session_is_valid(schema: dict[str, Any]) -> None:
    requests = validator(schema, "request")
    for request, response in example_session():
        requests.validate(json.loads(request))
        validator(schema, response_form(json.loads(request)["op"])).validate(json.loads(response))


@pytest.mark.parametrize(
    ("op", "response"),
    [
        ("get", {"ok": True, "result": 3}),
        ("get", {"ok": "yes", "result": None}),
        ("get", {"ok": False}),
        ("get", {"result": None}),
        ("hello", {"ok": True, "protocol": 2, "name": "x"}),
        ("hello", {"ok": True, "protocol": 1, "name": ""}),
        ("hello", {"ok": True, "protocol": 1, "name": "x" * 201}),
        ("hello", {"ok": True, "protocol": 1, "name": "x", "features": "read_since"}),
    ],
)
def test_what_the_schema_refuses_the_client_refuses(
    schema: dict[str, Any], op: str, response: dict[str, object]
) -> None:
    assert not validator(schema, response_form(op)).is_valid(response)
    parse = parse_hello if op == "hello" else lambda r: parse_result(r, op)
    with pytest.raises(ProtocolError):
        parse(response)


def test_an_error_response_is_valid_and_raises_its_kind(schema: dict[str, Any]) -> None:
    response = {"ok": False, "error": "no id", "kind": "ValueError"}
    validator(schema, "response_to_step").validate(response)
    with pytest.raises(ImplementationError):
        parse_result(response, "apply")
