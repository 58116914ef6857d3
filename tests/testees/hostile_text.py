"""A protocol testee (list-join) whose own text is hostile, for the report tests.

    python hostile_text.py NAME_JSON [--error-json TEXT_JSON] [--error-chars N]

It announces the JSON-decoded NAME_JSON at hello and answers every ``get``
with an error whose text and kind are TEXT_JSON (default: the name), padded
to N characters (a 20 MB error takes ``--error-chars 20000000``). JSON, so a
test can pass newlines, ANSI escapes or a lone surrogate such as ``"\\ud83d"``.
"""

from __future__ import annotations

import argparse
import json
import sys


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("name_json")
    parser.add_argument("--error-json")
    parser.add_argument("--error-chars", type=int, default=0)
    args = parser.parse_args()
    name: str = json.loads(args.name_json)
    text: str = name if args.error_json is None else json.loads(args.error_json)

    from tokasm.implementations import ListJoinAssembler
    from tokasm.protocol._codec import encode
    from tokasm.protocol.testee import respond
    from tokasm.run.targets import PythonTarget

    subject = PythonTarget(ListJoinAssembler, "hostile")
    error = text + "x" * max(0, args.error_chars - len(text))
    for line in sys.stdin.buffer:
        request = json.loads(line)
        if request.get("op") == "hello":
            response: dict[str, object] = {"ok": True, "protocol": 1, "name": name}
        elif request.get("op") == "get":
            response = {"ok": False, "error": error, "kind": text}
        else:
            response = respond(subject, line)
        sys.stdout.buffer.write(encode(response))
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
