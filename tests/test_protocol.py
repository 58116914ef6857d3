"""Protocol version 1 end to end: real testee processes, the documented session, the corpus.

The example session in spec/PROTOCOL.md is replayed against both bundled
testees, so the document cannot drift from what they do.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import QUICK, example_session
from tokasm.cli import main
from tokasm.corpus._load import load_corpus
from tokasm.corpus.steps import Apply, Get, ReadSince
from tokasm.errors import ImplementationError, ProtocolError, TargetFault
from tokasm.protocol._client import CommandTarget, python_testee_command
from tokasm.protocol._codec import (
    decode,
    encode,
    hello_request,
    new_request,
    parse_hello,
    parse_result,
)
from tokasm.run.runner import run_cases

REPO = Path(__file__).resolve().parent.parent
NODE_TESTEE = REPO / "testees" / "node" / "tokasm-testee.js"
PYTHON_STRICT = [*python_testee_command("list-join"), "--strict"]

node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def comparable(response: dict[str, object]) -> dict[str, object]:
    """What the session pins down: all but hello's name and the text of an error."""
    return {k: v for k, v in response.items() if k not in ("name", "error")}


def talk(argv: list[str], requests: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """Run a testee on a fixed input; end of input ends it."""
    return subprocess.run(argv, input=requests, capture_output=True, timeout=60, check=False)


def replay(argv: list[str]) -> str:
    """The documented session sent to the testee ``argv``: the name it gives at hello."""
    session = example_session()
    done = talk(argv, "".join(request + "\n" for request, _ in session).encode())
    assert done.returncode == 0, done.stderr
    answers = done.stdout.splitlines()
    assert len(answers) == len(session), done.stdout
    for (request, expected), actual in zip(session, answers, strict=True):
        assert comparable(json.loads(actual)) == comparable(json.loads(expected)), request
    name: str = json.loads(answers[0])["name"]
    return name


def test_python_testee_follows_the_documented_session() -> None:
    assert replay(PYTHON_STRICT) == "list-join (strict)"


@pytest.mark.node
@node
def test_node_testee_follows_the_documented_session() -> None:
    """Its corpus over the protocol, every profile and the cost probes, is
    tests/test_node_route.py's (the reference class)."""
    assert replay(["node", str(NODE_TESTEE)]).startswith("tokasm-node")


def test_python_testee_passes_the_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    # The corpus only: fuzzing a testee is tests/test_fuzz.py's, the cost probe over the
    # protocol tests/test_cost.py's.
    code = main(["check", "-q", *QUICK, "--cmd", shlex.join(python_testee_command("list-join"))])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "CONFORMANCE PASSED" in out


def test_strict_python_testee_passes_the_strict_profile() -> None:
    subject = CommandTarget(PYTHON_STRICT)
    try:
        results = list(run_cases(subject, load_corpus(), {"strict"}))
    finally:
        subject.close()
    assert subject.name == "list-join (strict)"  # the name the testee gave at hello
    ran = [r for r in results if r.outcome != "skipped"]
    assert ran, "the corpus has strict cases"
    assert [r for r in ran if r.outcome != "passed"] == []


@pytest.mark.node
@node
def test_node_testee_counts_code_points_not_utf16_units() -> None:
    astral = "\U0001f600" * 3
    requests = [
        hello_request(),
        new_request("a"),
        Apply("a", None, {"id": "m", "delta": astral + "ab"}).request(),
        *(ReadSince("a", None, "m", offset).request() for offset in range(7)),
    ]
    done = talk(["node", str(NODE_TESTEE)], b"".join(encode(r) for r in requests))
    results = [decode(line).get("result") for line in done.stdout.splitlines()[3:]]
    assert results == [(astral + "ab")[n:] for n in range(7)]


#: A testee that answers each get with its next argument, as it is written.
SCRIPTED = """
import json, sys
answers = iter(sys.argv[1:])
for line in sys.stdin:
    op = json.loads(line)["op"]
    answer = next(answers) if op == "get" else '{"ok":true,"protocol":1,"name":"scripted"}'
    sys.stdout.buffer.write(answer.encode() + b"\\n")
    sys.stdout.flush()
"""


def test_a_text_result_is_read_as_json_reads_it() -> None:
    """Escapes, raw UTF-8 and lone surrogates; a key after the result, the result again, a
    space after the line (not the usual line: read in full); a control character, refused."""
    answers = {
        r'{"ok":true,"result":"a\"b\\"}': 'a"b\\',
        r'{"ok":true,"result":"\ud83d\ude00\u00e9\ud800\u0001"}': "\U0001f600\u00e9\ud800\x01",
        '{"ok":true,"result":"\u00e9\U0001f600"}': "\u00e9\U0001f600",
        r'{"ok":true,"result":"a","note":"b"}': "a",
        r'{"ok":true,"result":"a","result":"b"}': "b",
        '{"ok":true,"result":"a"} ': "a",
    }
    refused = '{"ok":true,"result":"\x01"}'  # a control character, unescaped
    subject = CommandTarget([sys.executable, "-c", SCRIPTED, *answers, refused])
    try:
        assert [subject.perform(Get("a", None, "m")) for _ in answers] == list(answers.values())
        with pytest.raises(TargetFault, match="invalid response"):
            subject.perform(Get("a", None, "m"))
    finally:
        subject.close()


def test_testee_answers_bad_requests_and_keeps_serving() -> None:
    lines = [
        b"not json\n",
        encode({"op": "teleport"}),
        encode({"op": "apply", "event": {"id": "m"}}),  # no instance
        encode({"op": "get", "instance": "nobody", "id": "m"}),  # never created
        encode(hello_request()),
    ]
    done = talk(python_testee_command("list-join"), b"".join(lines))
    responses = [decode(line) for line in done.stdout.splitlines()]
    assert [r["ok"] for r in responses] == [False, False, False, False, True]
    assert all(isinstance(r["error"], str) and r["error"] for r in responses[:4])
    assert "teleport" in responses[1]["error"]


def test_testee_with_a_bad_target_exits_2_naming_it() -> None:
    done = talk(python_testee_command("no_such_module:Thing"))
    assert done.returncode == 2
    assert b"no_such_module" in done.stderr
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("response", "problem"),
    [
        ({"ok": True, "protocol": True, "name": "x"}, "protocol True"),
        ({"ok": True, "protocol": 2, "name": "x"}, "protocol 2"),
        ({"ok": True, "protocol": 1, "name": ""}, "name"),
        ({"ok": True, "protocol": 1, "name": "x", "features": "read_since"}, "features"),
        ({"ok": False, "error": "go away"}, "go away"),
    ],
)
def test_a_bad_hello_is_refused_with_the_reason(response: dict[str, object], problem: str) -> None:
    with pytest.raises(ProtocolError, match=problem):
        parse_hello(response)


def test_hello_keeps_only_features_this_kit_knows() -> None:
    hello = {"ok": True, "protocol": 1, "name": "x", "features": ["read_since", "teleport"]}
    assert parse_hello(hello) == ("x", frozenset({"read_since"}))


@pytest.mark.parametrize(
    "response",
    [{"ok": True, "result": 3}, {"ok": True}, {"ok": "yes", "result": None}, {"ok": False}],
)
def test_an_invalid_result_is_a_protocol_error(response: dict[str, object]) -> None:
    with pytest.raises(ProtocolError):
        parse_result(response, "get")


def test_an_error_response_carries_its_kind() -> None:
    with pytest.raises(ImplementationError) as raised:
        parse_result({"ok": False, "error": "no id", "kind": "ValueError"}, "apply")
    assert (raised.value.kind, raised.value.message) == ("ValueError", "no id")


@pytest.mark.parametrize("line", [b"\xff{}", b"[1]", b"{", b""])
def test_decode_refuses_what_is_not_a_json_object_line(line: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode(line)


def test_encode_writes_one_ascii_line_that_decodes_back() -> None:
    message = {"op": "apply", "instance": "a", "event": {"id": "\n", "delta": "é\U0001f600\r\n"}}
    line = encode(message)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert line.isascii()
    assert decode(line[:-1]) == message
    with pytest.raises(ValueError, match="JSON"):
        encode({"event": {"id": "m", "delta": float("nan")}})
