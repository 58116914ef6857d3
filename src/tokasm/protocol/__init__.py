"""The line protocol: its codec, the supervised client that runs every target out of
tokasm's process (foreign testees and tokasm's own Python worker), and the Python testee.

Names are loaded when first used (PEP 562): ``python -m tokasm.protocol.testee`` runs
the testee module as ``__main__``, which this package must not have imported first.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokasm.protocol._client import (
        DEFAULT_TIMEOUT,
        PIPELINE_WINDOW,
        START_TIMEOUT,
        CommandTarget,
        end_testees,
        fatal_signals_kill_testees,
        kill_testees,
        split_command,
        testees_end_with_the_run,
    )
    from tokasm.protocol.testee import python_testee_command
    from tokasm.protocol.worker import WorkerTarget

_HOMES = {
    "tokasm.protocol._client": (
        "DEFAULT_TIMEOUT", "PIPELINE_WINDOW", "START_TIMEOUT", "CommandTarget", "end_testees",
        "fatal_signals_kill_testees", "kill_testees", "split_command", "testees_end_with_the_run",
    ),
    "tokasm.protocol.testee": ("python_testee_command",),
    "tokasm.protocol.worker": ("WorkerTarget",),
}  # fmt: skip
_HOME_OF = {name: home for home, names in _HOMES.items() for name in names}

__all__ = [
    "DEFAULT_TIMEOUT", "PIPELINE_WINDOW", "START_TIMEOUT", "CommandTarget", "WorkerTarget",
    "end_testees", "fatal_signals_kill_testees", "kill_testees", "python_testee_command",
    "split_command", "testees_end_with_the_run",
]  # fmt: skip


def __getattr__(name: str) -> object:
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(home), name)
