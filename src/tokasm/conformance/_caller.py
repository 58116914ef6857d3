"""The habits of an ordinary Python caller, played on every in-process target (EVENT-OWNED).

A real caller does not hand each event over as a fresh object that lives
forever. It refills one dict in a loop, re-sends the same object, edits or
frees it after ``apply`` returned. So by default the runner does the same:

- **one dict, refilled**: every dict event reaches the target in the same dict
  object (cleared and refilled with a fresh deep copy of the corpus event), so
  ``id(event)`` repeats and every event is a re-sent object;
- **checked, then scribbled on**: after ``apply`` returns, the event must equal
  what was sent (else ``EventNotOwned``: the target modified it), and is then
  overwritten, nested containers included, with a marker text. An assembler
  that kept a reference to the event, or to a container inside it, reads the
  marker later, or the next event, and its texts go wrong.

Such a failure could look like any other rule's; the runner re-runs a failing
case with ``gentle=True`` (a new deep copy per apply, each kept alive until the
case ends, never touched) and names EVENT-OWNED when only the habits fail it.
The corpus's own events never reach a target, so no target can change what
another target is sent. The cost is one copy and one comparison per event.
"""

from __future__ import annotations

import math
from typing import cast

from ..errors import EventNotOwned
from ._display import show
from ._guard import reraise_unless_target

__all__ = ["SCRIBBLE", "CallerHabits"]

#: What the caller writes into an event after ``apply`` returned.
SCRIBBLE = "\x00tokasm: this event was reused by the caller after apply returned"


def _copy(value: object) -> object:
    """A deep copy of a JSON value (the corpus's events are plain JSON)."""
    if type(value) is dict:
        return {key: _copy(item) for key, item in value.items()}
    if type(value) is list:
        return [_copy(item) for item in value]
    return value


def _same(given: object, sent: object) -> bool:
    """Whether ``given`` is still exactly the JSON value ``sent``, by exact types only, so
    nothing the target put inside can run code of its own (no ``__eq__``, no ``__hash__``)."""
    kind = type(sent)
    if type(given) is not kind:
        return False
    if kind is dict:
        mine, theirs = cast("dict[object, object]", given), cast("dict[str, object]", sent)
        return len(mine) == len(theirs) and all(
            key in mine and _same(mine[key], value) for key, value in theirs.items()
        )
    if kind is list:
        items, originals = cast("list[object]", given), cast("list[object]", sent)
        return len(items) == len(originals) and all(map(_same, items, originals))
    if kind is float:
        number, original = cast("float", given), cast("float", sent)
        return number == original or (math.isnan(number) and math.isnan(original))
    return bool(given == sent)


_CONTAINERS = (dict, list)


def _scribble(value: dict[object, object] | list[object]) -> None:
    """Overwrite a lent event and every container in it, so kept references see the marker."""
    for item in list(value.values() if isinstance(value, dict) else value):
        if type(item) in _CONTAINERS:
            _scribble(cast("dict[object, object] | list[object]", item))
    if isinstance(value, dict):
        keys = [key for key in value if type(key) is str]
        value.clear()
        value.update(dict.fromkeys(keys, SCRIBBLE))
    else:
        value[:] = [SCRIBBLE]


class CallerHabits:
    """Lends each event to a target as a caller would, and checks it came back unmodified."""

    def __init__(self, *, gentle: bool = False) -> None:
        self._gentle = gentle
        self._reused: dict[object, object] = {}
        self._kept: list[object] = []

    def lend(self, event: object) -> object:
        """The object the target gets for the corpus event ``event`` (never ``event`` itself)."""
        if self._gentle or type(event) is not dict:
            lent = _copy(event)
            self._kept.append(lent)
            return lent
        self._reused.clear()
        self._reused.update(cast("dict[object, object]", _copy(event)))
        return self._reused

    def take_back(self, lent: object, event: object) -> None:
        """After ``apply`` returned: EventNotOwned if the target modified the event; then
        forget or overwrite it, as the caller would."""
        try:
            unchanged = _same(lent, event)
        except BaseException as error:  # a key the target added raised
            reraise_unless_target(error)
            unchanged = False
        if not self._gentle:
            self._kept.clear()
            if type(lent) in _CONTAINERS:
                _scribble(cast("dict[object, object] | list[object]", lent))
        if not unchanged:
            raise EventNotOwned(f"apply() modified the event it was given, {show(event)}")

    def forget(self) -> None:
        """Drop every event kept for the case that ended."""
        self._kept.clear()
