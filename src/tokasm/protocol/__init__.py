"""The line protocol: its codec, the supervised client that runs every target out of
tokasm's process (foreign testees and tokasm's own Python worker), and the Python testee
(``python -m tokasm.protocol.testee``, which this package does not import)."""

from tokasm.protocol._client import (
    DEFAULT_TIMEOUT,
    PIPELINE_WINDOW,
    START_TIMEOUT,
    CommandTarget,
    LineTooLong,
    NoResponse,
    Process,
    WorkerTarget,
    end_testees,
    fatal_signals_kill_testees,
    kill_testees,
    python_child,
    python_testee_command,
    split_command,
    testees_end_with_the_run,
)

__all__ = [
    "DEFAULT_TIMEOUT", "PIPELINE_WINDOW", "START_TIMEOUT", "CommandTarget", "LineTooLong",
    "NoResponse", "Process", "WorkerTarget", "end_testees", "fatal_signals_kill_testees",
    "kill_testees", "python_child", "python_testee_command", "split_command",
    "testees_end_with_the_run",
]  # fmt: skip
