"""A protocol testee (list-join) that attacks the kit, one class of attack per mode.

    python hostile.py MODE [--at N] [--marker PATH] [--pgid PATH]

``--pgid PATH`` appends this process's group id to PATH (a file or a FIFO)
at start, so a test can check that the whole group is gone after the run.
Once-only modes strike at request number N (hello is 1) and create the
marker, so a restarted testee behaves (or, for ``hang-restart`` and
``identity``, behaves differently after the restart).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
from pathlib import Path

ONCE = (
    "grandchild-crash",
    "stray-line",
    "deep-response",
    "unclosed-string",
    "hang-restart",
)
MODES = (
    *ONCE,
    "hang-all",
    "endless-stdout",
    "endless-stderr",
    "deep-hello",
    "identity",
    "no-stream-reading",
)
#: 200 KB, 100,000 deep: past the json module's limit on every Python (3.13's takes 1000).
DEEP = b'{"ok":true,"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
#: 1.2 MB: a string never closed, of escaped quotes and brackets (enough to be counted).
UNCLOSED = b'{"ok":true,"result":"' + b'\\"[' * 400_000 + b"\n"


def block_forever() -> None:
    threading.Event().wait()


def flood(fd: int) -> None:
    """Write to ``fd`` without a line feed until killed."""
    block = b"x" * (1 << 16)
    while True:
        os.write(fd, block)


def keep_the_pipes() -> None:
    """A grandchild that inherits stdout and stderr and outlives a crash, until killed."""
    code = "import threading; threading.Event().wait()"
    subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL)


def strike(mode: str, answer: bytes) -> bytes:
    """What to write, once, instead of ``answer``."""
    if mode == "grandchild-crash":
        os._exit(3)
    if mode == "stray-line":
        return answer + answer
    if mode == "deep-response":
        return DEEP
    if mode == "unclosed-string":
        return UNCLOSED
    block_forever()  # hang-restart
    return answer


def serve(args: argparse.Namespace, restarted: bool) -> None:
    from tokasm.implementations import ListJoinAssembler
    from tokasm.protocol._codec import encode
    from tokasm.protocol.testee import respond
    from tokasm.run.targets import PythonTarget

    subject = PythonTarget(ListJoinAssembler, "hostile")
    requests = sys.stdin.buffer
    out = sys.stdout.buffer
    for number, line in enumerate(requests, start=1):
        response = respond(subject, line)
        if number == 1:
            if args.mode == "deep-hello":
                out.write(DEEP)
                out.flush()
                continue
            if args.mode == "hang-restart" and restarted:
                block_forever()
            if args.mode == "identity" and restarted:
                response.update(name="hostile, restarted", features=[])
        elif args.mode == "hang-all":
            continue  # reads on, never answers
        elif args.mode == "endless-stdout":
            flood(1)
        elif args.mode == "identity" and not restarted and number == args.at:
            assert args.marker is not None
            args.marker.touch()
            os._exit(3)
        elif args.mode in ONCE and not restarted and number == args.at:
            assert args.marker is not None
            args.marker.touch()
            out.write(strike(args.mode, encode(response)))
            out.flush()
            continue
        out.write(encode(response))
        out.flush()


def serve_one_line_per_read() -> None:
    """The classic mistake with pipelining: one ``read``, one answer, the rest dropped."""
    from tokasm.implementations import ListJoinAssembler
    from tokasm.protocol._codec import encode
    from tokasm.protocol.testee import respond
    from tokasm.run.targets import PythonTarget

    subject = PythonTarget(ListJoinAssembler, "hostile")
    while chunk := os.read(0, 1 << 16):
        sys.stdout.buffer.write(encode(respond(subject, chunk.split(b"\n", 1)[0])))
        sys.stdout.buffer.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--at", type=int, default=4, help="request number of a once-only fault")
    parser.add_argument("--marker", type=Path, help="exists once the fault has struck")
    parser.add_argument("--pgid", type=Path, help="append this process group's id here")
    args = parser.parse_args()
    if args.pgid is not None:
        with args.pgid.open("a", encoding="ascii") as report:
            report.write(f"{os.getpgid(0)}\n")
    restarted = args.marker is not None and args.marker.exists()
    if args.mode == "grandchild-crash" and not restarted:
        keep_the_pipes()
    if args.mode == "endless-stderr":
        threading.Thread(target=flood, args=(2,), daemon=True).start()
    if args.mode == "no-stream-reading":
        serve_one_line_per_read()
        return
    serve(args, restarted)


if __name__ == "__main__":
    main()
