"""Where in the user's code an error was raised: the frames of the code under test.

A failure names the user's own frames (``file:line in function``), not tokasm's: the
frames after tokasm's last one in a traceback. The bundled backends count as the user's
code when they are the target.
"""

from __future__ import annotations

import traceback
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from tokasm._display import safe_text

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["SHORT_FRAMES", "user_frames"]

_TOKASM = Path(__file__).resolve().parent.parent
#: The bundled backends are the code under test when they are the target.
_BUNDLED = _TOKASM / "implementations"
#: How many of the innermost user frames a failure message names.
SHORT_FRAMES = 3


@lru_cache(maxsize=1024)
def _is_users(filename: str) -> bool:
    """A frame of the code under test: anything outside tokasm (and the import machinery),
    or a bundled backend."""
    if filename.startswith("<frozen "):
        return False
    path = Path(filename).resolve()
    return not path.is_relative_to(_TOKASM) or path.is_relative_to(_BUNDLED)


def user_frames(tb: TracebackType | None) -> tuple[list[str], str]:
    """The user's frames of a traceback: the innermost few as ``file:line in function``, and
    the whole traceback of the user's code, escaped (for ``--debug``)."""
    frames = traceback.extract_tb(tb)
    mine = [i for i, frame in enumerate(frames) if not _is_users(frame.filename)]
    users = traceback.StackSummary.from_list(frames[mine[-1] + 1 :] if mine else frames)
    full = "".join(
        safe_text(line) + "\n" for chunk in users.format() for line in chunk.splitlines()
    )
    short = [safe_text(f"{f.filename}:{f.lineno} in {f.name}") for f in users[-SHORT_FRAMES:]]
    return short, full
