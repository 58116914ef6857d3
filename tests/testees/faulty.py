"""A protocol testee (list-join) that misbehaves on purpose, for the fault tests.

    python faulty.py MODE [--at N] [--marker PATH]

Once-only faults (hang, crash, garbage) strike at request number N (hello is
1) and create the marker file, so the respawned testee behaves: exactly one
case must pay for the fault. ``late-stray`` answers request N, then waits until
the FIFO at the marker's path is opened, writes its answer again, and closes it;
``late-exit`` exits with code 3 there instead.
The other modes fail at start or at hello.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path

ONCE = ("hang", "crash", "garbage")
MODES = (
    *ONCE,
    "late-stray",
    "late-exit",
    "chatty",
    "cannot-start",
    "silent-hello",
    "wrong-version",
)


def strike(mode: str, number: int) -> None:
    """Misbehave for one request: block forever, die, or answer with a line that is not JSON."""
    print(f"faulty testee: {mode} at request {number}", file=sys.stderr, flush=True)
    if mode == "hang":
        threading.Event().wait()  # blocks until the kit kills this process
    if mode == "crash":
        os._exit(3)
    sys.stdout.buffer.write(b"this is not json\n")
    sys.stdout.buffer.flush()


def serve(mode: str, strike_at: int, marker: Path | None) -> None:
    """Serve list-join, faulting as ``mode`` says."""
    from tokasm.implementations import ListJoinAssembler
    from tokasm.protocol._codec import encode
    from tokasm.protocol.testee import respond
    from tokasm.run.targets import PythonTarget

    subject = PythonTarget(ListJoinAssembler, f"faulty-{mode}")
    armed = mode in ONCE and marker is not None and not marker.exists()
    for number, line in enumerate(sys.stdin.buffer, start=1):
        if armed and marker is not None and number == strike_at:
            marker.touch()
            strike(mode, number)
            continue
        response = respond(subject, line)
        if number == 1 and mode == "wrong-version":
            response["protocol"] = 2
        if mode == "chatty":  # far more stderr than a pipe holds, on every request
            sys.stderr.write("chatter " * 20_000 + "\n")
        sys.stdout.buffer.write(encode(response))
        sys.stdout.buffer.flush()
        if mode.startswith("late-") and marker is not None and number == strike_at:
            with marker.open("w"):  # the test opens it when the case is over
                if mode == "late-exit":  # its stdout closed before the FIFO tells the test
                    os.close(1)
                    os._exit(3)
                sys.stdout.buffer.write(encode(response))
                sys.stdout.buffer.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--at", type=int, default=0, help="request number of a once-only fault")
    parser.add_argument("--marker", type=Path, help="exists once the fault has struck")
    args = parser.parse_args()
    # The start-up faults come before importing tokasm, so they strike within milliseconds.
    if args.mode == "cannot-start":
        sys.exit("faulty testee: cannot start, no configuration found")
    if args.mode == "silent-hello":
        sys.stdin.buffer.readline()
        threading.Event().wait()
    serve(args.mode, args.at, args.marker)


if __name__ == "__main__":
    main()
