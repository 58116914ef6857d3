"""Where in the user's code something happened: the frames of the code under test.

A failure names the user's own frames (``file:line in function``), not
tokasm's: the frames after tokasm's last one in a traceback or a stack. The
bundled backends count as the user's code when they are the target.
"""

from __future__ import annotations

import linecache
import os
import stat
import sys
import threading
import traceback
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from tokasm._display import error_text, safe_text
from tokasm.run._guard import pass_on_lost_interrupt

if TYPE_CHECKING:
    from types import CodeType, FrameType, TracebackType

__all__ = ["quiet_stray_errors", "traceback_of", "user_frames", "user_stack"]

_TOKASM = Path(__file__).resolve().parent.parent
#: The bundled backends are the code under test when they are the target.
_BUNDLED = _TOKASM / "implementations"
#: How many of the innermost user frames a failure message names.
SHORT_FRAMES = 3


@lru_cache(maxsize=1024)  # resolving a path is a system call per folder, and files repeat
def _is_users(filename: str) -> bool:
    """A frame of the code under test: anything outside tokasm (and the import machinery),
    or a bundled backend."""
    if filename.startswith("<frozen "):
        return False
    try:
        path = Path(filename).resolve()
    except (OSError, ValueError, RuntimeError):
        return True
    return not path.is_relative_to(_TOKASM) or path.is_relative_to(_BUNDLED)


def _users(frames: traceback.StackSummary) -> list[traceback.FrameSummary]:
    """The frames after tokasm's last one: the user's code that tokasm called (the launcher
    script and anything else above tokasm is not the user's implementation)."""
    mine = [i for i, frame in enumerate(frames) if not _is_users(frame.filename)]
    return list(frames[mine[-1] + 1 :] if mine else frames)


def _format(frames: list[traceback.FrameSummary]) -> list[str]:
    return [safe_text(f"{frame.filename}:{frame.lineno} in {frame.name}") for frame in frames]


def _escaped(lines: list[str]) -> str:
    """Formatted frames (a file name or source line may hold anything), each line escaped."""
    return "".join(safe_text(line) + "\n" for chunk in lines for line in chunk.splitlines())


#: ``BaseException``'s own traceback getter: an error's class, the target's, may override it.
_TRACEBACK = BaseException.__dict__["__traceback__"]


def traceback_of(error: BaseException) -> TracebackType | None:
    """``error.__traceback__``, read without running any code of the error's class."""
    tb: TracebackType | None = _TRACEBACK.__get__(error)
    return tb


#: The largest source file a line is shown from (``linecache`` reads a file whole).
_MAX_SOURCE_BYTES = 4 * 1024 * 1024


def _readable_source(filename: str) -> bool:
    """A regular file of a source file's size: not a FIFO, a device, or a ``/proc`` file
    (size 0, and reading one may block), nor a huge one."""
    try:
        status = os.stat(filename)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(status.st_mode) and 0 < status.st_size <= _MAX_SOURCE_BYTES


def _summary(code: CodeType, lineno: int | None) -> traceback.FrameSummary:
    """One frame, its source line read from its file on disk only. ``traceback``'s own
    extraction asks the frame's module (its ``__loader__``) for the source of a file that
    does not exist: that is the target's code, and it may raise ``SystemExit(0)`` or hang."""
    filename, name = safe_text(code.co_filename), safe_text(code.co_name)
    line = ""
    if lineno is not None and _readable_source(filename):
        line = linecache.getline(filename, lineno)
    return traceback.FrameSummary(filename, lineno, name, lookup_line=False, line=line)


def _traceback_frames(tb: TracebackType | None) -> traceback.StackSummary:
    frames = []
    while tb is not None:
        frames.append(_summary(tb.tb_frame.f_code, tb.tb_lineno))
        tb = tb.tb_next
    return traceback.StackSummary.from_list(frames)


def _stack_frames(frame: FrameType | None) -> traceback.StackSummary:
    frames = []
    while frame is not None:
        frames.append(_summary(frame.f_code, frame.f_lineno))
        frame = frame.f_back
    return traceback.StackSummary.from_list(frames[::-1])


def user_frames(tb: TracebackType | None) -> tuple[list[str], str]:
    """The user's frames of a traceback: the innermost few as ``file:line in function``, and
    the whole traceback of the user's code (for ``--debug``)."""
    try:
        frames = _users(_traceback_frames(tb))
        full = _escaped(traceback.StackSummary.from_list(frames).format())
    except Exception:  # a frame that cannot be read is left out
        return [], ""
    return _format(frames[-SHORT_FRAMES:]), full


def user_stack(frame: FrameType | None) -> str:
    """The user's frames of a running thread's stack, innermost last (a hang's location)."""
    try:
        frames = _users(_stack_frames(frame))
        return _escaped(traceback.StackSummary.from_list(frames).format())
    except Exception:  # a frame that cannot be read is left out
        return ""


def _stray(where: str, error: BaseException | None, tb: TracebackType | None) -> None:
    frames, _ = user_frames(tb)
    at = f" at {frames[-1]}" if frames else ""
    shown = "an error" if error is None else error_text(error)
    try:
        print(f"tokasm: ignored {shown} raised in {where}{at}", file=sys.stderr)
    except Exception:  # stderr is gone: nothing to tell
        return


def _unraisable(info: sys.UnraisableHookArgs) -> None:
    if not pass_on_lost_interrupt(info.exc_value):  # the user's Ctrl-C is no stray error
        _stray("a finalizer or callback", info.exc_value, info.exc_traceback)


def _thread_error(info: threading.ExceptHookArgs) -> None:
    name = "a thread" if info.thread is None else f"thread {safe_text(info.thread.name, 80)!r}"
    _stray(name, info.exc_value, info.exc_traceback)


def quiet_stray_errors() -> None:
    """An error the target raises where no one can catch it (a ``__del__``, a thread it
    started) prints one escaped line naming the user's frame, not a traceback."""
    sys.unraisablehook = _unraisable
    threading.excepthook = _thread_error
