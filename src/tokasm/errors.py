"""Every error tokasm raises on purpose, in one hierarchy, and the exit code each one means.

``UsageError`` and its kinds: the run cannot start as asked (exit 2). ``TargetFault``
and ``ImplementationError``: the thing under test misbehaved, which errors or fails the
case that was running, never the run. ``ProtocolError``: a line that is no valid message.
"""

from __future__ import annotations

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "CorpusError",
    "EventNotOwned",
    "ImplementationError",
    "ProtocolError",
    "ReportError",
    "TargetError",
    "TargetFault",
    "TokasmError",
    "TokasmExit",
    "TokasmInterrupt",
    "UsageError",
    "XfailError",
]

#: Exit codes shared by every subcommand; each subcommand's help says what 1 means for it.
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
#: Stopped by SIGINT (Ctrl-C) or SIGTERM (a CI cancel): 128 + the signal's number, as a shell
#: reports it. Every testee process group is killed first.
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class TokasmError(Exception):
    """Base of every error tokasm raises on purpose."""


class TokasmExit(SystemExit):
    """tokasm's own end of a run: ``--help``, a usage error, SIGTERM's 143."""


class TokasmInterrupt(KeyboardInterrupt):
    """The user's Ctrl-C, as tokasm raises it (a target's own KeyboardInterrupt is its
    case's error, in process too)."""


class UsageError(TokasmError):
    """The run cannot start as asked (exit 2); the message names the option, file or target."""


class TargetError(UsageError):
    """A target cannot be loaded or started; the message names it."""


class CorpusError(UsageError):
    """A case file is unreadable or malformed; the message names file and case."""


class XfailError(UsageError):
    """An expected-failure file is unreadable or malformed; the message names file and line."""


class ReportError(UsageError):
    """A report cannot be written where it was asked for; the message names the path."""


class TargetFault(TokasmError):
    """The testee itself failed (hang, crash, garbage): the case errors, the run goes on."""


class ImplementationError(TokasmError):
    """The implementation raised (or answered ``ok: false``) for one request; ``frames``
    (innermost last) and ``traceback`` say where in the user's code."""

    def __init__(
        self, kind: str | None, message: str, *, frames: tuple[str, ...] = (), traceback: str = ""
    ) -> None:
        super().__init__(f"{kind}: {message}" if kind else message)
        self.kind = kind
        self.message = message
        self.frames = frames
        self.traceback = traceback


class EventNotOwned(ImplementationError):
    """The implementation modified the event it was given (EVENT-OWNED in spec/SPEC.md)."""

    def __init__(self, message: str) -> None:
        super().__init__("EVENT-OWNED", message)


class ProtocolError(TokasmError):
    """A line that is not a valid message of the protocol (spec/PROTOCOL.md)."""
