"""A protocol testee (list-join) that reads requests as fast as they come, on a thread, and
records the most it ever held unanswered: how far ahead the kit writes.

    python greedy.py RECORD
"""

from __future__ import annotations

import queue
import sys
import threading
from pathlib import Path


def main() -> None:
    from tokasm.implementations import ListJoinAssembler
    from tokasm.protocol._codec import encode
    from tokasm.protocol.testee import respond
    from tokasm.run.targets import PythonTarget

    target = PythonTarget(ListJoinAssembler, "greedy")
    lines: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    read = [0]

    def reader() -> None:
        for line in sys.stdin.buffer:
            read[0] += 1
            lines.put(line)
        lines.put(None)

    threading.Thread(target=reader, daemon=True).start()
    answered = most = 0
    while (line := lines.get()) is not None:
        most = max(most, read[0] - answered)
        sys.stdout.buffer.write(encode(respond(target, line)))
        sys.stdout.buffer.flush()
        answered += 1
    Path(sys.argv[1]).write_text(str(most))


if __name__ == "__main__":
    main()
