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

A case marked ``events_in_process: other-mappings`` (CASES.md) is lent otherwise:
each event a new read-only mapping that is not a dict (``CallerMapping``), its
strings of a ``str`` subclass (``CallerText``), kept alive and never touched:
another caller's valid events (EVT-SHAPE), which JSON cannot carry.

Such a failure could look like any other rule's; the runner re-runs a failing
case with ``gentle=True`` (a new deep copy per apply, each kept alive until the
case ends, never touched) and names EVENT-OWNED when only the habits fail it.
The corpus's own events never reach a target, so no target can change what
another target is sent. The cost is one copy and one comparison per event.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from operator import is_
from typing import Any

from tokasm._display import show
from tokasm.errors import EventNotOwned

__all__ = [
    "OTHER_MAPPINGS",
    "SCRIBBLE",
    "CallerHabits",
    "CallerMapping",
    "CallerText",
    "OtherMappingsCaller",
]

#: What the caller writes into an event after ``apply`` returned.
SCRIBBLE = "\x00tokasm: this event was reused by the caller after apply returned"

#: ``events_in_process`` of a case whose events are lent as other mappings (CASES.md).
OTHER_MAPPINGS = "other-mappings"


class CallerText(str):
    """A ``str`` subclass, as a caller's strings may be (a ``StrEnum`` id, a markup-safe
    delta): a string all the same (EVT-SHAPE), and a text when returned (RETURN-TYPE)."""

    __slots__ = ()


class CallerMapping(Mapping[str, object]):
    """A read-only mapping that is not a dict, as a frozen-dict type is: it has dict's
    read-only methods (``copy()``, ``|``) and copies, deep or not, so the usual correct
    habits (``dict(event)``, ``event.copy()``, ``copy.deepcopy(event)``) take it, while
    a check for ``dict`` or ``json.dumps`` refuses it (EVT-SHAPE)."""

    __slots__ = ("_items",)

    def __init__(self, items: dict[str, object]) -> None:
        self._items = items

    def __getitem__(self, key: str) -> object:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._items!r})"

    def __reduce__(self) -> tuple[type[CallerMapping], tuple[dict[str, object]]]:
        return (type(self), (dict(self._items),))

    def copy(self) -> dict[str, object]:
        return dict(self._items)

    def __or__(self, other: object) -> dict[str, object]:
        if not isinstance(other, Mapping):
            return NotImplemented
        return {**self._items, **other}

    def __ror__(self, other: object) -> dict[str, object]:
        if not isinstance(other, Mapping):
            return NotImplemented
        return {**other, **self._items}


_CONTAINERS = (dict, list)
_CONTAINER_TYPES = frozenset(_CONTAINERS)
_ABSENT = object()


def _copy(value: object) -> object:
    """A deep copy of a JSON value (the corpus's events are plain JSON)."""
    if type(value) is dict:
        return {k: _copy(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    if type(value) is list:
        return [_copy(v) if type(v) in _CONTAINERS else v for v in value]
    return value


def _other_mapping(event: object) -> object:
    """``event`` as another caller hands it over: a read-only mapping that is not a dict,
    its string values of a ``str`` subclass; an event that is not a dict, as it is."""
    if type(event) is not dict:
        return _copy(event)
    return CallerMapping(
        {
            key: CallerText(value) if type(value) is str else _copy(value)
            for key, value in event.items()
        }
    )


def _same(given: Any, sent: Any) -> bool:
    """Whether ``given`` is still exactly the JSON value ``sent``: the same types all
    through (a ``str`` subclass put in its place is a change), equal values, NaN as NaN."""
    kind = type(sent)
    if type(given) is not kind:
        return False
    if kind is dict:
        return (
            len(given) == len(sent)
            and all(type(key) is str for key in given)
            and all(_same(given.get(key, _ABSENT), value) for key, value in sent.items())
        )
    if kind is list:
        return len(given) == len(sent) and all(map(_same, given, sent))
    return bool(given == sent) or (kind is float and math.isnan(given) and math.isnan(sent))


def _scribble(value: Any) -> None:
    """Overwrite a lent event (a dict or list) and every container in it, so kept references
    see the marker. Each container once, since a target may have made the event contain
    itself; only ``str`` keys are put back, since a key the target added may not hash again."""
    pending = _overwrite(value)
    seen = {id(value)}
    while pending:  # nothing nested, in the usual event
        container = pending.pop()
        if id(container) not in seen:
            seen.add(id(container))
            pending += _overwrite(container)


def _overwrite(container: Any) -> list[Any]:
    """Put the marker in place of what ``container`` holds; the containers it held."""
    if type(container) is dict:
        nested = [item for item in container.values() if type(item) in _CONTAINERS]
        keys = [key for key in container if type(key) is str]
        container.clear()
        container.update(dict.fromkeys(keys, SCRIBBLE))
    else:
        nested = [item for item in container if type(item) in _CONTAINERS]
        container[:] = [SCRIBBLE]
    return nested


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
        if not _CONTAINER_TYPES.isdisjoint(map(type, event.values())):
            for key, value in event.items():  # not ``reused``: a target's thread may hold it
                if type(value) in _CONTAINERS:
                    reused[key] = _copy(value)
        return reused

    def take_back(self, lent: Any, event: Any) -> None:
        """After ``apply`` returned: EventNotOwned if the target modified the event; then
        forget or overwrite it, as the caller would. Whatever the target left in the event
        that raises here (a key's ``__eq__``) counts as a modification."""
        try:  # quickly, for the usual event: the very keys and values of ``event``, in order
            quick = (
                type(lent) is dict
                and type(event) is dict
                and len(lent) == len(event)
                and False not in map(is_, lent, event)
                and False not in map(is_, lent.values(), event.values())
            )
            unchanged = quick or _same(lent, event)
        except Exception:  # a key's ``__eq__`` that raises: the event was changed
            quick = unchanged = False
        if not self._gentle:
            if self._kept:
                self._kept.clear()
            try:
                if quick:
                    for key in event:
                        lent[key] = SCRIBBLE
                elif type(lent) in _CONTAINERS:
                    _scribble(lent)
            except Exception:
                unchanged = False
        if not unchanged:
            raise EventNotOwned(f"apply() modified the event it was given, {show(event)}")

    def forget(self) -> None:
        """Drop every event kept for the case that ended."""
        self._kept.clear()


class OtherMappingsCaller(CallerHabits):
    """Another caller's valid events (EVT-SHAPE): each a new ``CallerMapping`` of
    ``CallerText`` strings, kept alive until the case ends. They are read-only, so there
    is nothing to take back."""

    def __init__(self) -> None:
        super().__init__(gentle=True)

    def lend(self, event: Any) -> object:
        lent = _other_mapping(event)
        self._kept.append(lent)
        return lent

    def take_back(self, lent: Any, event: Any) -> None:
        return
