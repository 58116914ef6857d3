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

import itertools
import math
from typing import Any

from ..errors import EventNotOwned
from ._display import show
from ._guard import reraise_unless_target

__all__ = ["SCRIBBLE", "CallerHabits"]

#: What the caller writes into an event after ``apply`` returned.
SCRIBBLE = "\x00tokasm: this event was reused by the caller after apply returned"


_CONTAINERS = (dict, list)
_ABSENT = object()


def _copy(value: object) -> object:
    """A deep copy of a JSON value (the corpus's events are plain JSON)."""
    if type(value) is dict:
        return {k: _copy(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    if type(value) is list:
        return [_copy(v) if type(v) in _CONTAINERS else v for v in value]
    return value


def _same_item(item: Any, value: Any) -> bool:
    """One value of a container: same exact type, then equal (NaN equal to NaN)."""
    kind = type(value)
    if type(item) is not kind:
        return False
    if kind in _CONTAINERS:
        return _same(item, value)
    if item == value:
        return True
    return kind is float and math.isnan(item) and math.isnan(value)


def _same(given: Any, sent: Any) -> bool:
    """Whether ``given`` is still exactly the JSON value ``sent``, by exact types first, so
    nothing the target put inside runs code of its own (no ``__eq__``, no ``__hash__``)."""
    if type(sent) is dict:
        if type(given) is not dict or len(given) != len(sent):
            return False
        found = map(given.get, sent, itertools.repeat(_ABSENT))
        return all(map(_same_item, found, sent.values()))
    if type(sent) is list:
        return type(given) is list and len(given) == len(sent) and all(map(_same_item, given, sent))
    return _same_item(given, sent)


def _scribble(value: Any) -> None:
    """Overwrite a lent event (a dict or list) and every container in it, so kept references
    see the marker."""
    for item in list(value.values() if type(value) is dict else value):
        if type(item) in _CONTAINERS:
            _scribble(item)
    if type(value) is dict:
        keys = list(value)
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

    def lend(self, event: Any) -> object:
        """The object the target gets for the corpus event ``event`` (never ``event`` itself)."""
        if self._gentle or type(event) is not dict:
            lent = _copy(event)
            self._kept.append(lent)
            return lent
        reused = self._reused
        reused.clear()
        reused.update(event)
        for key, value in reused.items():
            if type(value) in _CONTAINERS:
                reused[key] = _copy(value)
        return reused

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
                _scribble(lent)
        if not unchanged:
            raise EventNotOwned(f"apply() modified the event it was given, {show(event)}")

    def forget(self) -> None:
        """Drop every event kept for the case that ended."""
        self._kept.clear()
