"""Every error tokasm raises on purpose. ``UsageError`` and its kinds: the run cannot start as
asked (exit 2); ``TargetFault`` and ``ImplementationError`` cost a case, never the run."""

from __future__ import annotations

#: Exit codes of every subcommand (each one's help says what 1 means for it); a SIGINT or
#: SIGTERM ends a run, its testees killed first, with 128 + the signal's number.
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143


class TokasmError(Exception):
    """Base of every error tokasm raises on purpose."""


class TokasmExit(SystemExit):
    """SIGTERM's 143: tokasm's own end of a run, which no target call may swallow."""


class TokasmInterrupt(KeyboardInterrupt):
    """The user's Ctrl-C as tokasm raises it (a target's own KeyboardInterrupt errors its case)."""


class UsageError(TokasmError):
    """The run cannot start as asked (exit 2); the message names the option, file or target."""


class TargetError(UsageError):
    """A target cannot be loaded or started."""


class CorpusError(UsageError):
    """A case file is unreadable or malformed; the message names file and case."""


class XfailError(UsageError):
    """An expected-failure file is unreadable or malformed; the message names file and line."""


class ReportError(UsageError):
    """A report cannot be written where it was asked for."""


class TargetFault(TokasmError):
    """The testee itself failed (hang, crash, garbage): the case errors, the run goes on."""


class ImplementationError(TokasmError):
    """The implementation raised (or answered ``ok: false``); ``frames`` (innermost last)
    and ``traceback`` say where in the user's code."""

    def __init__(
        self, kind: str | None, message: str, *, frames: tuple[str, ...] = (), traceback: str = ""
    ) -> None:
        super().__init__(f"{kind}: {message}" if kind else message)
        self.kind, self.message, self.frames, self.traceback = kind, message, frames, traceback


class EventNotOwned(ImplementationError):
    """The implementation changed the event it was given; ``kind`` is the rule broken
    (EVENT-OWNED, or STRICT-EVENT-UNTOUCHED in spec/SPEC.md)."""

    def __init__(self, message: str, rule: str) -> None:
        super().__init__(rule, message)


class ProtocolError(TokasmError):
    """A line that is not a valid message of the protocol (spec/PROTOCOL.md)."""
