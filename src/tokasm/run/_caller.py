"""The habits of an ordinary Python caller, played on every in-process target (EVENT-OWNED).

Every dict event reaches the target in one reused dict, which must come back saying what it
said (its id, delta and final; on ``whole`` checks, the strict profile's, unmodified) and is
then overwritten with ``SCRIBBLE``, so a target that kept it reads the marker. ``gentle`` (a
new copy per apply, kept alive) tells these habits' failures from others.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from operator import is_
from typing import TYPE_CHECKING, Any

from tokasm._display import show
from tokasm.errors import EventNotOwned

if TYPE_CHECKING:
    from tokasm.corpus.steps import Apply

__all__ = ["EVENT_OWNED", "EVENT_UNTOUCHED", "OTHER_MAPPINGS", "SCRIBBLE", "CallerHabits"]

EVENT_OWNED = "EVENT-OWNED"  # changing what an event says, or depending on it after apply
EVENT_UNTOUCHED = "STRICT-EVENT-UNTOUCHED"  # changing an event at all (the strict profile)

#: What the caller writes into an event after ``apply`` returned.
SCRIBBLE = "\x00tokasm: this event was reused by the caller after apply returned"
#: ``events_in_process`` of a case whose events are lent as other mappings (CASES.md).
OTHER_MAPPINGS = "other-mappings"


class CallerText(str):
    """A caller's string of a ``str`` subclass (a ``StrEnum`` id, a markup-safe delta)."""

    __slots__ = ()


class CallerMapping(Mapping[str, object]):
    """A read-only mapping that is not a dict, as a frozen dict: ``json.dumps`` refuses it."""

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
        return {**self._items, **other} if isinstance(other, Mapping) else NotImplemented

    def __ror__(self, other: object) -> dict[str, object]:
        return {**other, **self._items} if isinstance(other, Mapping) else NotImplemented


_CONTAINERS = (dict, list)
_ABSENT = object()


def _copy(value: Any) -> Any:
    if type(value) is dict:
        return {k: _copy(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    if type(value) is list:
        return [_copy(v) if type(v) in _CONTAINERS else v for v in value]
    return value


def _other_mapping(event: Any) -> Any:
    """A dict event as a ``CallerMapping`` of ``CallerText`` strings; another, as it is."""
    if type(event) is not dict:
        return _copy(event)
    items = {k: CallerText(v) if type(v) is str else _copy(v) for k, v in event.items()}
    return CallerMapping(items)


def _same(given: Any, sent: Any) -> bool:
    """Whether ``given`` is still exactly the JSON value ``sent``: same types, equal values."""
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


def _says(event: dict[Any, Any]) -> list[object]:
    """What an event means by the seed: sent again, it must mean the same (an absent delta
    appends as ``""`` does, a missing final is false). Keys are its strings' texts: one of a
    subclass may equal ``"delta"`` and read as another word, another kind names no field."""
    fields = {str.__str__(key): v for key, v in event.items() if isinstance(key, str)}
    return [fields.get("id"), fields.get("delta", ""), fields.get("final") is True]


def _scribble(value: Any) -> None:
    """Overwrite a lent event and every container in it, each once (it may contain itself)."""
    pending, seen = [value], set()
    while pending:
        container = pending.pop()
        if id(container) in seen:
            continue
        seen.add(id(container))
        items = container.values() if type(container) is dict else container
        pending += [item for item in items if type(item) in _CONTAINERS]
        if type(container) is dict:
            keys = [key for key in container if type(key) is str]
            container.clear()
            container.update(dict.fromkeys(keys, SCRIBBLE))
        else:
            container[:] = [SCRIBBLE]


class CallerHabits:
    """Lends each event to a target as a caller would, and checks it came back unmodified."""

    def __init__(
        self, *, gentle: bool = False, other_mappings: bool = False, whole: bool = False
    ) -> None:
        self.whole = whole  # any change to the event breaks EVENT-OWNED, not only its meaning
        self._gentle = gentle or other_mappings
        self._other = other_mappings
        self._reused: dict[object, object] = {}
        self._kept: list[object] = []

    def apply(self, assembler: Any, step: Apply) -> object:
        """``assembler.apply`` of the step's event as lent (never the event itself);
        EventNotOwned if the target changed what it says (``whole``: changed it at all)."""
        event: Any = step.event
        flat = step.flat
        if not self._gentle and type(event) is dict:  # most events, first: lent in one dict
            lent = self._reused
            lent.clear()
            lent.update(event if flat else _copy(event))
        elif self._other:  # then nothing is checked: no one writes to a mapping
            self._kept.append(lent := _other_mapping(event))
            return assembler.apply(lent)
        elif self._gentle:
            self._kept.append(lent := dict(event) if flat else _copy(event))
        else:
            lent = _copy(event)
        try:
            return assembler.apply(lent)
        finally:
            try:  # the very keys and values of ``event``, in order (``==`` may be a lie)
                same = (
                    flat
                    and len(lent) == len(event)
                    and all(map(is_, lent.values(), event.values()))
                    and all(map(is_, lent, event))
                )
            except RuntimeError:  # changed meanwhile, by a thread of the target's
                same = False
            if not same:
                self._take_back(lent, event)
            elif not self._gentle:
                for key in event:
                    lent[key] = SCRIBBLE

    def _take_back(self, lent: Any, event: Any) -> None:
        """EventNotOwned if the target changed the event; then overwrite it (not gently)."""
        try:
            plain = type(event) is dict and type(lent) is dict
            if plain and not _same(_says(lent), _says(event)):
                broken: str | None = EVENT_OWNED
            elif (self.whole or not plain) and not _same(lent, event):
                broken = EVENT_UNTOUCHED if self.whole else EVENT_OWNED
            else:
                broken = None
        except Exception:  # a key's ``__eq__`` that raises: the event was changed
            broken = EVENT_OWNED
        if not self._gentle and type(lent) in _CONTAINERS:
            try:
                _scribble(lent)
            except Exception:
                broken = broken or EVENT_OWNED
        if broken:
            raise EventNotOwned(f"apply() modified the event it was given, {show(event)}", broken)

    def forget(self) -> None:
        self._kept.clear()  # the events kept for the case that ended
