"""Subtly broken assemblers, each wrong in exactly one rule, that the corpus must catch.

A kit that passes a buggy implementation is worse than none. Every class here
is a correct assembler except for one mistake that real implementations make;
its docstring names the requirement id it breaks. ``MUTANTS`` maps a short
name to the class, that id, the profile whose cases must catch it and its
family (``tests/test_mutants.py`` proves each one is caught).

Families: ``slip`` mutants are local code slips (a wrong operator, a missing
branch). The design families are whole-design bugs, each written before the
case that catches it, and each passed corpus 1.0.0 (see ``DESIGN_FAMILIES``):
``scale`` bugs show only past a size, ``data`` bugs on special-looking ids or
texts, ``timing`` bugs with a particular order of reads. ``beyond`` mutants are limits past
the required corpus's sizes, caught by the opt-in ``scale`` profile. Every class takes no
argument, so ``tokasm check mutants:DropsEmptyDelta`` works with this folder
importable; strict mutants need ``--profile strict``.

Only the standard library and tokasm are imported, so the file can be copied
anywhere.
"""

from __future__ import annotations

import hashlib
import html
import json
import posixpath
import re
import unicodedata
import uuid
import weakref
import zlib
from bisect import bisect_right, insort
from collections import OrderedDict, UserString, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

from tokasm.implementations import Event, ListJoinAssembler, StrictAssembler, validate_event

__all__ = ["COST_MUTANTS", "DESIGN_FAMILIES", "MUTANTS", "Mutant"]


@dataclass(frozen=True)
class Mutant:
    """One broken assembler: the class, the rule it breaks, the profile that catches it."""

    factory: type[Any]
    requirement: str
    profile: str
    family: str


#: Mutant name (kebab case of the class name) -> the mutant.
MUTANTS: dict[str, Mutant] = {}

#: The families of whole-design bugs (issue 8), as opposed to ``slip``.
DESIGN_FAMILIES = ("scale", "data", "timing")

_Class = TypeVar("_Class", bound=type[Any])


def _kebab(name: str) -> str:
    return "".join(f"-{c.lower()}" if c.isupper() else c for c in name).lstrip("-")


def _breaks(requirement: str, *, strictly: bool = False) -> Callable[[_Class], _Class]:
    """Register the decorated class as the mutant that breaks ``requirement``; ``strictly``:
    behind the strict validator, in the strict profile (it breaks only a rule past the seed)."""

    def register(cls: _Class) -> _Class:
        family = getattr(cls, "FAMILY", "slip")
        factory, profile = (_strictly(cls), "strict") if strictly else (cls, cls.PROFILE)
        MUTANTS[_kebab(cls.__name__)] = Mutant(factory, requirement, profile, family)
        return cls

    return register


def _strictly(cls: type[Any]) -> type[Any]:
    """``cls`` behind the strict validator, named and documented as ``cls``."""

    def __init__(self: StrictAssembler) -> None:
        StrictAssembler.__init__(self, cls())

    return type(cls.__name__, (StrictAssembler,), {"__init__": __init__, "__doc__": cls.__doc__})


def _extra(event: Event) -> Mapping[str, object]:
    """The event as a plain mapping, to read keys the ``Event`` type does not declare."""
    return cast("Mapping[str, object]", event)


def _without(event: Event, key: str) -> Event:
    """A copy of the event without ``key``."""
    return cast("Event", {k: v for k, v in event.items() if k != key})


class _Correct:
    """A correct assembler (parts list, text cached at final) with hooks to break."""

    PROFILE: ClassVar[str] = "required"

    def __init__(self) -> None:
        self._parts: dict[str, list[str]] = {}
        self._done: dict[str, str] = {}

    def _key(self, message_id: str) -> str:
        return message_id

    def _delta(self, delta: str) -> str:
        return delta

    def _finish(self, text: str) -> str:
        return text

    def _open(self, key: str) -> list[str]:
        return self._parts.setdefault(key, [])

    def apply(self, event: Event) -> str | None:
        key = self._key(event["id"])
        final = event.get("final", False)
        if key in self._done:
            return self._done[key] if final else None
        parts = self._open(key)
        if "delta" in event:
            parts.append(self._delta(event["delta"]))
        if not final:
            return None
        text = self._done[key] = self._finish("".join(parts))
        del self._parts[key]
        return text

    def get(self, message_id: str) -> str | None:
        key = self._key(message_id)
        if key in self._done:
            return self._done[key]
        parts = self._parts.get(key)
        return None if parts is None else "".join(parts)


# --- required profile ------------------------------------------------------------------


@_breaks("ASM-STATE")
class SharedState(_Correct):
    """Breaks ASM-STATE: the dictionaries live on the class, so every instance shares them."""

    _shared_parts: ClassVar[dict[str, list[str]]] = {}
    _shared_done: ClassVar[dict[str, str]] = {}

    def __init__(self) -> None:
        self._parts = self._shared_parts
        self._done = self._shared_done


@_breaks("ASM-STATE")
class SharedFinalizedIds(_Correct):
    """Breaks ASM-STATE: texts are per instance, but the set of finalized ids is global."""

    _finalized: ClassVar[set[str]] = set()

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        if key in self._finalized and key not in self._done:
            return "" if event.get("final", False) else None
        result = super().apply(event)
        if event.get("final", False):
            self._finalized.add(key)
        return result


@_breaks("EVT-SHAPE")
class FinalKeyPresence(_Correct):
    """Breaks EVT-SHAPE: finalizes whenever the key ``final`` is present, even ``final: false``."""

    def apply(self, event: Event) -> str | None:
        if "final" in event:
            return super().apply({**event, "final": True})
        return super().apply(event)


@_breaks("EVT-WELLFORMED")
class RejectsEventWithoutDelta(_Correct):
    """Breaks EVT-WELLFORMED: reads ``event["delta"]`` unconditionally: no delta raises."""

    def apply(self, event: Event) -> str | None:
        if "delta" not in event:
            raise KeyError("delta")
        return super().apply(event)


@_breaks("EVT-ID-ANY")
class CaseInsensitiveIds(_Correct):
    """Breaks EVT-ID-ANY: compares ids case-insensitively (``"MSG"`` is ``"msg"``)."""

    def _key(self, message_id: str) -> str:
        return message_id.lower()


@_breaks("EVT-ID-ANY")
class CasefoldedIds(_Correct):
    """Breaks EVT-ID-ANY: compares casefolded ids (``"straße"`` is ``"STRASSE"``)."""

    def _key(self, message_id: str) -> str:
        return message_id.casefold()


@_breaks("EVT-ID-ANY")
class StripsIdWhitespace(_Correct):
    """Breaks EVT-ID-ANY: strips whitespace around ids (``" m"`` is ``"m"``)."""

    def _key(self, message_id: str) -> str:
        return message_id.strip()


@_breaks("EVT-ID-ANY")
class NormalizesIds(_Correct):
    """Breaks EVT-ID-ANY: NFC-normalizes ids (NFD ``"cafe\\u0301"`` is ``"caf\\u00e9"``)."""

    def _key(self, message_id: str) -> str:
        return unicodedata.normalize("NFC", message_id)


@_breaks("EVT-ID-ANY")
class NfkcIds(_Correct):
    """Breaks EVT-ID-ANY: NFKC-normalizes ids (the ligature ``"\\ufb01"`` is ``"fi"``)."""

    def _key(self, message_id: str) -> str:
        return unicodedata.normalize("NFKC", message_id)


@_breaks("EVT-ID-ANY")
class TruncatesLongIds(_Correct):
    """Breaks EVT-ID-ANY: keys messages by the first 256 characters of the id."""

    def _key(self, message_id: str) -> str:
        return message_id[:256]


@_breaks("EVT-ID-ANY")
class IgnoresEmptyId(_Correct):
    """Breaks EVT-ID-ANY: ``if not event["id"]`` - events for the empty id are dropped."""

    def apply(self, event: Event) -> str | None:
        if not event["id"]:
            return None
        return super().apply(event)

    def get(self, message_id: str) -> str | None:
        return super().get(message_id) if message_id else None


@_breaks("EVT-EXTRA-KEYS")
class TextKeyAsDelta(_Correct):
    """Breaks EVT-EXTRA-KEYS: takes the key ``text`` as the delta when ``delta`` is missing."""

    def apply(self, event: Event) -> str | None:
        text = _extra(event).get("text")
        if "delta" not in event and isinstance(text, str):
            return super().apply({**event, "delta": text})
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class FinishReasonFinalizes(_Correct):
    """Breaks EVT-EXTRA-KEYS: a non-null ``finish_reason`` finalizes, as in OpenAI chunks."""

    def apply(self, event: Event) -> str | None:
        if _extra(event).get("finish_reason") is not None:
            return super().apply({**event, "final": True})
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class RejectsUnknownKeys(_Correct):
    """Breaks EVT-EXTRA-KEYS: raises ValueError on any key but id, delta and final."""

    def apply(self, event: Event) -> str | None:
        unknown = set(event) - {"id", "delta", "final"}
        if unknown:
            raise ValueError(f"unknown event keys {sorted(unknown)}")
        return super().apply(event)


@_breaks("APPEND")
class LastDeltaWins(_Correct):
    """Breaks APPEND: ``text = delta`` instead of ``text += delta``."""

    def apply(self, event: Event) -> str | None:
        parts = self._parts.get(event["id"])
        if parts is not None and "delta" in event:
            parts.clear()  # the new delta replaces everything before it
        return super().apply(event)


@_breaks("APPEND-EMPTY")
class DropsEmptyDelta(_Correct):
    """Breaks APPEND-EMPTY: ``if not delta: return`` - an empty delta never creates the message."""

    def apply(self, event: Event) -> str | None:
        if event.get("delta") == "" and not event.get("final", False):
            return None
        return super().apply(event)


@_breaks("APPEND-EXACT")
class CrlfToLf(_Correct):
    """Breaks APPEND-EXACT: converts CRLF in each delta to LF."""

    def _delta(self, delta: str) -> str:
        return delta.replace("\r\n", "\n")


@_breaks("APPEND-EXACT")
class UniversalNewlinesAtFinal(_Correct):
    """Breaks APPEND-EXACT: rewrites CRLF and lone CR to LF in the completed text only."""

    def _finish(self, text: str) -> str:
        return text.replace("\r\n", "\n").replace("\r", "\n")


@_breaks("APPEND-EXACT")
class NfcText(_Correct):
    """Breaks APPEND-EXACT: NFC-normalizes each delta (decomposed accents get composed)."""

    def _delta(self, delta: str) -> str:
        return unicodedata.normalize("NFC", delta)


@_breaks("APPEND-EXACT")
class NfcFinalText(_Correct):
    """Breaks APPEND-EXACT: NFC-normalizes the completed text, so split combining marks merge."""

    def _finish(self, text: str) -> str:
        return unicodedata.normalize("NFC", text)


@_breaks("APPEND-EXACT")
class StripsFinalText(_Correct):
    """Breaks APPEND-EXACT: strips trailing whitespace from the completed text."""

    def _finish(self, text: str) -> str:
        return text.rstrip()


@_breaks("APPEND-EXACT")
class DropsNul(_Correct):
    """Breaks APPEND-EXACT: removes NUL characters, as C-string based code does."""

    def _delta(self, delta: str) -> str:
        return delta.replace("\0", "")


@_breaks("APPEND-EXACT")
class ExpandsTabs(_Correct):
    """Breaks APPEND-EXACT: expands tabs to spaces."""

    def _delta(self, delta: str) -> str:
        return delta.expandtabs()


@_breaks("APPEND-EXACT")
class DropsBom(_Correct):
    """Breaks APPEND-EXACT: drops a byte-order mark at the start of a message (utf-8-sig)."""

    def _delta(self, delta: str) -> str:
        return delta.removeprefix("\ufeff")


@_breaks("APPEND-EXACT")
class EscapesAstral(_Correct):
    """Breaks APPEND-EXACT: round-trips deltas through ASCII with escapes for astral characters."""

    def _delta(self, delta: str) -> str:
        if not delta or max(delta) < "\U00010000":  # nothing to escape: quickly
            return delta
        return "".join(c if ord(c) < 0x10000 else f"\\U{ord(c):08x}" for c in delta)


@_breaks("APPEND-LONG")
class LosesDeepDelta(_Correct):
    """Breaks APPEND-LONG: silently loses the 3000th delta of a message."""

    def __init__(self) -> None:
        super().__init__()
        self._counts: dict[str, int] = {}

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        if "delta" in event and key not in self._done:
            self._counts[key] = self._counts.get(key, 0) + 1
            if self._counts[key] == 3000:
                return super().apply(_without(event, "delta"))
        return super().apply(event)


@_breaks("APPEND-LONG")
class TruncatesLongDelta(_Correct):
    """Breaks APPEND-LONG: keeps only the first 4096 characters of each delta."""

    def _delta(self, delta: str) -> str:
        return delta[:4096]


@_breaks("APPEND-LONG")
class CapsMessageLength(_Correct):
    """Breaks APPEND-LONG: stops appending once a message holds 65536 characters."""

    def _finish(self, text: str) -> str:
        return text[:65536]


@_breaks("APPEND-REPEAT")
class DedupesRepeats(_Correct):
    """Breaks APPEND-REPEAT: drops a delta equal to the message's previous delta."""

    def apply(self, event: Event) -> str | None:
        parts = self._parts.get(event["id"])
        if parts and "delta" in event and parts[-1] == event["delta"]:
            return super().apply(_without(event, "delta"))
        return super().apply(event)


@_breaks("ORDER")
class FinalDeltaFirst(_Correct):
    """Breaks ORDER: the final event's delta is put before the earlier deltas."""

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        if event.get("final", False) and "delta" in event and key in self._parts:
            self._parts[key].insert(0, event["delta"])
            return super().apply({"id": key, "final": True})
        return super().apply(event)


@_breaks("ORDER")
class SortsParts(_Correct):
    """Breaks ORDER: keeps each message's parts sorted, as a heap or sorted container would."""

    def apply(self, event: Event) -> str | None:
        result = super().apply(event)
        parts = self._parts.get(event["id"], [])
        if parts:  # sorted already but for the part just added
            insort(parts, parts.pop())
        return result


@_breaks("INTERLEAVE")
class EvictsPast256Open(_Correct):
    """Breaks INTERLEAVE: an LRU of 256 open messages forgets the oldest one."""

    def __init__(self) -> None:
        super().__init__()
        self._parts = OrderedDict()

    def _open(self, key: str) -> list[str]:
        parts = super()._open(key)
        assert isinstance(self._parts, OrderedDict)
        self._parts.move_to_end(key)
        while len(self._parts) > 256:
            self._parts.popitem(last=False)
        return parts


@_breaks("INTERLEAVE")
class OneOpenMessage(_Correct):
    """Breaks INTERLEAVE: a new message id implicitly finalizes the previous open one."""

    def _open(self, key: str) -> list[str]:
        for other in [k for k in self._parts if k != key]:
            self._done[other] = "".join(self._parts.pop(other))
        return super()._open(key)


@_breaks("CREATE")
class NoDeltaNoState(_Correct):
    """Breaks CREATE: an event without a delta does not create the message."""

    def apply(self, event: Event) -> str | None:
        if "delta" not in event and not event.get("final", False):
            return None
        return super().apply(event)


@_breaks("NONFINAL-NONE")
class NonfinalReturnsEmpty(_Correct):
    """Breaks NONFINAL-NONE: a non-final event returns ``""`` instead of None."""

    def apply(self, event: Event) -> str | None:
        result = super().apply(event)
        return "" if result is None and event["id"] not in self._done else result


@_breaks("NONFINAL-NONE")
class NonfinalReturnsText(_Correct):
    """Breaks NONFINAL-NONE: a non-final event returns the text so far (cumulative API)."""

    def apply(self, event: Event) -> str | None:
        result = super().apply(event)
        return self.get(event["id"]) if result is None and event["id"] in self._parts else result


@_breaks("FINAL-RETURN")
class FinalOfOpenReturnsNone(_Correct):
    """Breaks FINAL-RETURN: finalizing an open message returns None (a forgotten return)."""

    def apply(self, event: Event) -> str | None:
        was_open = event["id"] in self._parts and event["id"] not in self._done
        result = super().apply(event)
        return None if was_open else result


@_breaks("FINAL-RETURN")
class FinalExcludesDelta(_Correct):
    """Breaks FINAL-RETURN: returns the text from before the final event's own delta."""

    def apply(self, event: Event) -> str | None:
        before = self.get(event["id"]) if event.get("final") else None  # a read costs
        result = super().apply(event)
        if result is not None and "delta" in event and before is not None:
            return before
        return result


@_breaks("FINAL-UNSEEN")
class UnseenFinalNone(_Correct):
    """Breaks FINAL-UNSEEN: finalizing an id never seen returns None."""

    def apply(self, event: Event) -> str | None:
        unseen = event["id"] not in self._parts and event["id"] not in self._done
        result = super().apply(event)
        return None if unseen else result


@_breaks("FINAL-UNSEEN")
class UnseenFinalIgnoresDelta(_Correct):
    """Breaks FINAL-UNSEEN: finalizing an id never seen returns ``""`` even with a delta."""

    def apply(self, event: Event) -> str | None:
        unseen = event["id"] not in self._parts and event["id"] not in self._done
        result = super().apply(event)
        return "" if unseen and result is not None else result


@_breaks("GET-TEXT")
class GetNoneWhileOpen(_Correct):
    """Breaks GET-TEXT: ``get`` only knows finalized messages."""

    def get(self, message_id: str) -> str | None:
        return self._done.get(message_id)


@_breaks("GET-TEXT")
class ForgetsTextAfterFinal(_Correct):
    """Breaks GET-TEXT: the buffer is released at final and ``get`` forgets to read the cache."""

    def get(self, message_id: str) -> str | None:
        parts = self._parts.get(message_id)
        return None if parts is None else "".join(parts)


@_breaks("GET-UNKNOWN")
class GetUnknownEmpty(_Correct):
    """Breaks GET-UNKNOWN: ``get`` of an unknown id returns ``""`` instead of None."""

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        return "" if text is None else text


@_breaks("GET-UNKNOWN")
class GetCreatesState(_Correct):
    """Breaks GET-UNKNOWN: ``get`` of an unknown id returns None but creates the message."""

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        self._parts.setdefault(message_id, [])
        return text


@_breaks("RETURN-TYPE")
class ReturnsUserString(_Correct):
    """Breaks RETURN-TYPE: texts are ``collections.UserString`` objects, not ``str`` instances."""

    def _finish(self, text: str) -> str:
        return cast("str", UserString(text))


@_breaks("AFTER-DELTA-IGNORED")
class AppendsAfterFinal(_Correct):
    """Breaks AFTER-DELTA-IGNORED: a non-final delta after final is appended to the text."""

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        if key in self._done and not event.get("final", False) and "delta" in event:
            self._done[key] += event["delta"]
            return None
        return super().apply(event)


@_breaks("AFTER-DELTA-IGNORED")
class FalsyFinalReopens(_Correct):
    """Breaks AFTER-DELTA-IGNORED: ``if done.get(id):`` - a message finalized as ``""`` reopens."""

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        if self._done.get(key) == "":
            del self._done[key]
        return super().apply(event)


@_breaks("AFTER-REFINAL")
class RefinalReturnsNone(_Correct):
    """Breaks AFTER-REFINAL: a second final returns None (finalize is not idempotent)."""

    def apply(self, event: Event) -> str | None:
        again = event["id"] in self._done
        result = super().apply(event)
        return None if again else result


@_breaks("AFTER-REFINAL")
class RefinalAppendsDelta(_Correct):
    """Breaks AFTER-REFINAL: a second final appends its delta and returns the longer text."""

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        if key in self._done and event.get("final", False) and "delta" in event:
            self._done[key] += event["delta"]
        return super().apply(event)


@_breaks("AFTER-NONFINAL")
class NonfinalAfterFinalReturnsText(_Correct):
    """Breaks AFTER-NONFINAL: a non-final event on a finalized id returns the completed text."""

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        if key in self._done:
            return self._done[key]
        return super().apply(event)


# --- required profile: design bugs (scale, special-looking data, read timing) -----------


class _Scale(_Correct):
    """A correct assembler but for a limit that only a large case reaches."""

    FAMILY: ClassVar[str] = "scale"


class _Data(_Correct):
    """A correct assembler but for special-looking ids or texts it treats as something else."""

    FAMILY: ClassVar[str] = "data"


class _Timing(_Correct):
    """A correct assembler but for a read cache that goes stale with some order of reads."""

    FAMILY: ClassVar[str] = "timing"


@_breaks("APPEND")
class TakesLongerPrefixedDeltaAsSnapshot(_Data):
    """Breaks APPEND: a delta that starts with the whole text so far (three characters or
    more) and is longer replaces it, for providers that resend the full text each time."""

    def __init__(self) -> None:
        super().__init__()
        self._sizes: dict[str, int] = {}  # the text so far joined only for a longer delta

    def apply(self, event: Event) -> str | None:
        key, delta = self._key(event["id"]), event.get("delta")
        if delta is not None and key not in self._done:
            size, parts = self._sizes.get(key, 0), self._parts.get(key)
            if parts and 3 <= size < len(delta) and delta.startswith("".join(parts)):
                parts[:] = []
                size = 0
            self._sizes[key] = size + len(delta)
        return super().apply(event)


@_breaks("APPEND-REPEAT")
class DropsRetransmittedDelta(_Data):
    """Breaks APPEND-REPEAT: a delta of 12 characters or more equal to the one just before
    it is taken for a retransmission and dropped."""

    def __init__(self) -> None:
        super().__init__()
        self._last: dict[str, str] = {}

    def apply(self, event: Event) -> str | None:
        key, delta = self._key(event["id"]), event.get("delta")
        if delta is not None and len(delta) >= 12 and self._last.get(key) == delta:
            event = _without(event, "delta")
        if delta is not None:
            self._last[key] = delta
        return super().apply(event)


@_breaks("EVT-ID-ANY")
class StripsCarriageReturnFromIds(_Data):
    """Breaks EVT-ID-ANY: ``id.rstrip("\\r")``, as for ids read from CRLF lines."""

    def _key(self, message_id: str) -> str:
        return message_id.rstrip("\r")


@_breaks("EVT-ID-ANY")
class StripsNulFromIds(_Data):
    """Breaks EVT-ID-ANY: ``id.strip("\\x00")``, as for ids from fixed-size C buffers."""

    def _key(self, message_id: str) -> str:
        return message_id.strip("\x00")


@_breaks("ASM-STATE")
class SharesFinalTextsBySize(_Correct):
    """Breaks ASM-STATE: a module-wide cache of final texts keyed by id and length, which
    ``get`` reads first: instances that finalize one id with texts of one length share it."""

    _cache: ClassVar[dict[tuple[str, int], str]] = {}

    def apply(self, event: Event) -> str | None:
        result = super().apply(event)
        if result is not None:
            self._cache[(event["id"], len(result))] = result
        return result

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        if text is None or message_id not in self._done:
            return text
        return self._cache.get((message_id, len(text)), text)


@_breaks("APPEND-LONG")
class PartsDequeMaxlen(_Scale):
    """Breaks APPEND-LONG: parts live in ``deque(maxlen=16384)``, which drops the oldest ones."""

    def _open(self, key: str) -> list[str]:
        if key not in self._parts:
            self._parts[key] = cast("list[str]", deque(maxlen=1 << 14))
        return self._parts[key]


@_breaks("APPEND-LONG")
class PagedBufferOffByOne(_Scale):
    """Breaks APPEND-LONG: 64 KiB pages; a delta spilling into the next page loses a character.

    Deltas longer than a page get a page of their own, so only a text grown
    past 65536 characters by ordinary deltas shows the bug.
    """

    PAGE: ClassVar[int] = 1 << 16

    def _open(self, key: str) -> list[str]:
        return self._parts.setdefault(key, [""])

    def _append(self, pages: list[str], delta: str) -> None:
        room = self.PAGE - len(pages[-1])
        if len(delta) > self.PAGE:
            pages.extend((delta, ""))
        elif len(delta) <= room:
            pages[-1] += delta
        else:
            pages[-1] += delta[:room]
            pages.append(delta[room + 1 :])  # off by one: should be delta[room:]

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        if key not in self._done and "delta" in event:
            self._append(self._open(key), event["delta"])
            return super().apply(_without(event, "delta"))
        return super().apply(event)


@_breaks("GET-TEXT")
class FinalizedLru(_Scale):
    """Breaks GET-TEXT: completed texts sit in an LRU of 4096, so old messages read as None."""

    CAPACITY: ClassVar[int] = 4096

    def __init__(self) -> None:
        super().__init__()
        self._done = OrderedDict()

    def apply(self, event: Event) -> str | None:
        result = super().apply(event)
        assert isinstance(self._done, OrderedDict)
        while len(self._done) > self.CAPACITY:
            self._done.popitem(last=False)
        return result


@_breaks("INTERLEAVE")
class TotalBufferCap(_Scale):
    """Breaks INTERLEAVE: past 1 MiB buffered in all open messages, the oldest other is dropped."""

    CAP: ClassVar[int] = 1 << 20

    def __init__(self) -> None:
        super().__init__()
        self._sizes: dict[str, int] = {}  # open message -> characters buffered
        self._total = 0

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        result = super().apply(event)
        if key in self._parts:
            added = len(event.get("delta", ""))
            self._sizes[key] = self._sizes.get(key, 0) + added
            self._total += added
        else:
            self._total -= self._sizes.pop(key, 0)
        if self._total <= self.CAP:
            return result
        for other in [k for k in self._sizes if k != key]:
            if self._total <= self.CAP:
                break
            del self._parts[other]
            self._total -= self._sizes.pop(other)
        return result


@_breaks("INTERLEAVE")
class IdleOpenExpires(_Scale):
    """Breaks INTERLEAVE: an open message idle for 4096 events of others is dropped as abandoned."""

    TTL: ClassVar[int] = 4096

    def __init__(self) -> None:
        super().__init__()
        self._clock = 0
        self._seen: dict[str, int] = {}

    def apply(self, event: Event) -> str | None:
        self._clock += 1
        self._seen[event["id"]] = self._clock
        if self._clock % 256 == 0:  # sweep now and then
            for key in [k for k in self._parts if self._clock - self._seen[k] > self.TTL]:
                del self._parts[key]
        return super().apply(event)


@_breaks("INTERLEAVE")
class OpenMessagesCapped(_Scale):
    """Breaks INTERLEAVE: at most 1024 open messages; a new one beyond that is refused."""

    LIMIT: ClassVar[int] = 1024

    def _open(self, key: str) -> list[str]:
        if key not in self._parts and len(self._parts) >= self.LIMIT:
            return []  # over capacity: the delta goes nowhere
        return super()._open(key)

    def apply(self, event: Event) -> str | None:
        if event["id"] not in self._parts and event.get("final", False):
            self._parts.setdefault(event["id"], [])  # finishing always works
        return super().apply(event)


@_breaks("EVT-ID-ANY")
class NormpathIds(_Data):
    """Breaks EVT-ID-ANY: ids are normalized as paths (``"a//b"`` and ``"a/./b"`` are ``"a/b"``)."""

    def _key(self, message_id: str) -> str:
        return posixpath.normpath(message_id) if "/" in message_id else message_id


@_breaks("EVT-ID-ANY")
class DoneSuffixKey(_Data):
    """Breaks EVT-ID-ANY: one flat key space; ``id + ":done"`` marks a finalized id."""

    def __init__(self) -> None:
        super().__init__()
        self._store: dict[str, str] = {}

    def apply(self, event: Event) -> str | None:
        key, final = event["id"], event.get("final", False)
        if f"{key}:done" in self._store:
            return self._store[key] if final else None
        text = self._store.setdefault(key, "") + event.get("delta", "")
        self._store[key] = text
        if not final:
            return None
        self._store[f"{key}:done"] = "1"
        return text

    def get(self, message_id: str) -> str | None:
        return self._store.get(message_id)


@_breaks("EVT-ID-ANY")
class InstanceDictStore(_Data):
    """Breaks EVT-ID-ANY: texts are kept in the instance ``__dict__``, beside its own attributes."""

    def __init__(self) -> None:
        self._done: dict[str, str] = {}

    def apply(self, event: Event) -> str | None:
        key, final = event["id"], event.get("final", False)
        if key in self._done:
            return self._done[key] if final else None
        text: str = vars(self).get(key, "") + event.get("delta", "")
        vars(self)[key] = text
        if not final:
            return None
        self._done[key] = vars(self).pop(key)
        return text

    def get(self, message_id: str) -> str | None:
        if message_id in self._done:
            return self._done[message_id]
        text = vars(self).get(message_id)
        return text if isinstance(text, str) else None


@_breaks("EVT-ID-ANY")
class EmptyIdIsDefault(_Data):
    """Breaks EVT-ID-ANY: ``event.get("id") or "default"`` - the empty id is the default message."""

    def _key(self, message_id: str) -> str:
        return message_id or "default"


@_breaks("EVT-ID-ANY")
class Crc32Keys(_Data):
    """Breaks EVT-ID-ANY: messages are keyed by ``zlib.crc32`` of the id, which collides."""

    def _key(self, message_id: str) -> str:
        return f"{zlib.crc32(message_id.encode('utf-8', 'surrogatepass')):08x}"


@_breaks("APPEND-EXACT")
class SseDoneSentinel(_Data):
    """Breaks APPEND-EXACT: a delta ``[DONE]`` is the SSE end marker and is not appended."""

    def _delta(self, delta: str) -> str:
        return "" if delta.strip() == "[DONE]" else delta


@_breaks("APPEND-EXACT")
class StripsSpecialTokens(_Data):
    """Breaks APPEND-EXACT: removes model control tokens such as ``<|endoftext|>`` from deltas."""

    def _delta(self, delta: str) -> str:
        return re.sub(r"<\|[a-z_]+\|>", "", delta)


@_breaks("APPEND-EXACT")
class StripsSseDataPrefix(_Data):
    """Breaks APPEND-EXACT: a delta starting with ``data: `` has that SSE prefix removed."""

    def _delta(self, delta: str) -> str:
        return delta.removeprefix("data: ")


@_breaks("GET-TEXT")
class NullTextsAreNone(_Data):
    """Breaks GET-TEXT: texts go through a string store that spells a missing value "None"."""

    MISSING: ClassVar[frozenset[str]] = frozenset({"None", "null", "undefined"})

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        return None if text in self.MISSING else text


@_breaks("APPEND-EXACT")
class CollapsesBlankLines(_Data):
    """Breaks APPEND-EXACT: Markdown-style clean-up squeezes three or more newlines into two."""

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        return None if text is None else re.sub("\n{3,}", "\n\n", text)


@_breaks("APPEND-EXACT")
class HoldsBackTrailingCr(_Data):
    """Breaks APPEND-EXACT: a trailing CR waits for an LF; a final without delta drops it."""

    def __init__(self) -> None:
        super().__init__()
        self._held: dict[str, str] = {}

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        if key not in self._done and "delta" in event:
            delta = self._held.pop(key, "") + event["delta"]
            if delta.endswith("\r") and not event.get("final", False):
                delta, self._held[key] = delta[:-1], "\r"
            event = {**event, "delta": delta}
        elif event.get("final", False):
            self._held.pop(key, None)  # forgets to flush the held CR
        return super().apply(event)

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        return None if text is None else text + self._held.get(message_id, "")


@_breaks("EVT-EXTRA-KEYS")
class RoleStartsMessage(_Data):
    """Breaks EVT-EXTRA-KEYS: an event carrying ``role`` starts the message afresh."""

    def apply(self, event: Event) -> str | None:
        if "role" in event and event["id"] in self._parts:
            self._parts[event["id"]].clear()
        return super().apply(event)


@_breaks("GET-TEXT")
class CacheByPartCount(_Timing):
    """Breaks GET-TEXT: a read cache keyed by part count, which compaction every 64 parts resets."""

    def __init__(self) -> None:
        super().__init__()
        self._read: dict[str, tuple[int, str]] = {}

    def apply(self, event: Event) -> str | None:
        result = super().apply(event)
        parts = self._parts.get(event["id"])
        if parts is not None and len(parts) >= 64:
            parts[:] = ["".join(parts)]
        return result

    def get(self, message_id: str) -> str | None:
        parts = self._parts.get(message_id)
        if parts is None:
            return super().get(message_id)
        cached = self._read.get(message_id)
        if cached is None or cached[0] != len(parts):
            cached = self._read[message_id] = (len(parts), "".join(parts))
        return cached[1]


@_breaks("GET-TEXT")
class ThrottledLiveView(_Timing):
    """Breaks GET-TEXT: from the 4th read on, an open message is re-joined only every 32 deltas."""

    def __init__(self) -> None:
        super().__init__()
        self._view: dict[str, tuple[int, int, str]] = {}  # reads, parts joined, text

    def get(self, message_id: str) -> str | None:
        parts = self._parts.get(message_id)
        if parts is None:
            return super().get(message_id)
        reads, joined, text = self._view.get(message_id, (0, -1, ""))
        if reads < 3 or len(parts) - joined >= 32:
            joined, text = len(parts), "".join(parts)
        self._view[message_id] = (reads + 1, joined, text)
        return text


@_breaks("GET-TEXT")
class MemoizesUnknownGet(_Timing):
    """Breaks GET-TEXT: unknown ids are remembered by ``get``; only streaming events forget them."""

    def __init__(self) -> None:
        super().__init__()
        self._unknown: set[str] = set()  # a negative cache: ids known to read as None

    def apply(self, event: Event) -> str | None:
        if not event.get("final", False):
            self._unknown.discard(event["id"])
        return super().apply(event)

    def get(self, message_id: str) -> str | None:
        if message_id in self._unknown:
            return None
        text = super().get(message_id)
        if text is None:
            self._unknown.add(message_id)
        return text


# Found by the sensitivity pass on corpus 1.4.0 (each passed a default check then).


@_breaks("APPEND-EXACT")
class SentencePieceSpaces(_Data):
    """Breaks APPEND-EXACT: turns SentencePiece's word marker U+2581 into a space, as a
    gateway forwarding raw tokens does; a real U+2581 in text is changed too."""

    def _delta(self, delta: str) -> str:
        return delta.replace("\u2581", " ")


@_breaks("APPEND-EXACT")
class ByteLevelBpeSpaces(_Data):
    """Breaks APPEND-EXACT: turns byte-level BPE's U+0120 and U+010A into a space and a
    newline, as code decoding GPT-2-style tokens by hand does."""

    def _delta(self, delta: str) -> str:
        return delta.replace("\u0120", " ").replace("\u010a", "\n")


@_breaks("APPEND-EXACT")
class RepairsMojibake(_Data):
    """Breaks APPEND-EXACT: a delta that reads as UTF-8 once encoded as cp1252 is "repaired"
    (a hand-made ftfy), so real text such as U+00C3 U+2014 becomes U+00D7."""

    def _delta(self, delta: str) -> str:
        try:
            return delta.encode("cp1252").decode("utf-8")
        except UnicodeError:
            return delta


@_breaks("APPEND-EXACT")
class UnescapesNumericEntities(_Data):
    """Breaks APPEND-EXACT: decodes numeric character references (``&#39;``, ``&#x27;``),
    as clients of APIs that returned them escaped do."""

    def _delta(self, delta: str) -> str:
        return re.sub(
            r"&#(x?)([0-9a-fA-F]+);",
            lambda found: chr(int(found.group(2), 16 if found.group(1) else 10)),
            delta,
        )


@_breaks("APPEND-EXACT")
class StripsTextPresentationSelector(_Data):
    """Breaks APPEND-EXACT: removes U+FE0E (text presentation), as emoji sanitizers do."""

    def _delta(self, delta: str) -> str:
        return delta.replace("\ufe0e", "")


@_breaks("APPEND-EXACT")
class StripsReasoningBlocks(_Data):
    """Breaks APPEND-EXACT: removes ``<think>...</think>`` from the completed text, as
    gateways in front of reasoning models do."""

    def _finish(self, text: str) -> str:
        return re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL)


@_breaks("EVT-ID-ANY")
class CanonicalUuidIds(_Data):
    """Breaks EVT-ID-ANY: an id that parses as a UUID is keyed by its canonical spelling, so
    upper case, braces, ``urn:uuid:`` and hyphen-less forms are one message."""

    def _key(self, message_id: str) -> str:
        try:
            return str(uuid.UUID(message_id))
        except ValueError:
            return message_id


@_breaks("EVT-ID-ANY")
class LowercasesEmailLikeIds(_Data):
    """Breaks EVT-ID-ANY: an id with an ``@`` is lower-cased, as user ids that are e-mail
    addresses often are; other ids stay case-sensitive."""

    def _key(self, message_id: str) -> str:
        return message_id.lower() if "@" in message_id else message_id


@_breaks("EVT-ID-ANY")
class CanonicalJsonIds(_Data):
    """Breaks EVT-ID-ANY: an id that parses as a JSON object or array is keyed by its
    canonical dump, so key order and spacing stop mattering."""

    def _key(self, message_id: str) -> str:
        if message_id[:1] in ("{", "["):
            try:
                return json.dumps(json.loads(message_id), sort_keys=True)
            except ValueError:
                pass
        return message_id


@_breaks("EVT-ID-ANY")
class KeysFloatLikeIdsAsFloats(_Data):
    """Breaks EVT-ID-ANY: an id that is the ``repr`` of a float is stored as that float, to
    keep numeric ids as numbers; ``"nan"`` then never finds its message again, and ``"0.0"``
    and ``"-0.0"`` are one."""

    def __init__(self) -> None:
        super().__init__()
        self._parts = cast("dict[str, list[str]]", _FloatKeys())
        self._done = cast("dict[str, str]", _FloatKeys())


class _FloatKeys(dict[object, Any]):
    """A dict whose ``str`` keys that read as a float's ``repr`` are that float."""

    @staticmethod
    def _float(key: object) -> object:
        if isinstance(key, str):
            try:
                number = float(key)
            except ValueError:
                return key
            return number if repr(number) == key else key
        return key

    def __getitem__(self, key: object) -> Any:
        return super().__getitem__(self._float(key))

    def __setitem__(self, key: object, value: Any) -> None:
        super().__setitem__(self._float(key), value)

    def __delitem__(self, key: object) -> None:
        super().__delitem__(self._float(key))

    def __contains__(self, key: object) -> bool:
        return super().__contains__(self._float(key))

    def get(self, key: object, default: Any = None) -> Any:
        return super().get(self._float(key), default)

    def setdefault(self, key: object, default: Any = None) -> Any:
        return super().setdefault(self._float(key), default)


class _HidesAnUnfinishedTail(_Data):
    """While a message is open, ``get`` leaves out a tail that ``_unfinished`` says is a
    part of something not yet whole, so a UI never shows half of it."""

    def _unfinished(self, text: str) -> int:
        return 0

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        if text is None or self._key(message_id) in self._done:
            return text
        return text[: len(text) - self._unfinished(text)]


@_breaks("GET-TEXT")
class HidesTrailingJoinerWhileOpen(_HidesAnUnfinishedTail):
    """Breaks GET-TEXT: an open text ending in a zero-width joiner reads without it."""

    def _unfinished(self, text: str) -> int:
        return int(text.endswith("\u200d"))


@_breaks("GET-TEXT")
class HidesHalfAFlagWhileOpen(_HidesAnUnfinishedTail):
    """Breaks GET-TEXT: an open text ending in an odd run of regional indicators (half a
    flag) reads without the last one."""

    def _unfinished(self, text: str) -> int:
        run = len(text) - len(text.rstrip(_REGIONAL_INDICATORS))
        return run % 2


_REGIONAL_INDICATORS = "".join(chr(code) for code in range(0x1F1E6, 0x1F200))


@_breaks("GET-TEXT")
class HoldsBackStopSequencePrefix(_HidesAnUnfinishedTail):
    """Breaks GET-TEXT: an open text ending in the start of a stop sequence (``<|im_end|>``,
    ``</s>``, ``<|endoftext|>``) reads without it, as inference servers hold text back."""

    def _unfinished(self, text: str) -> int:
        stops = ("<|endoftext|>", "</s>", "<|im_end|>")
        return max(
            (n for stop in stops for n in range(1, len(stop)) if text.endswith(stop[:n])), default=0
        )


@_breaks("EVT-EXTRA-KEYS")
class FinalizesOnSdkStopEvents(_Data):
    """Breaks EVT-EXTRA-KEYS: an event typed as the end of a block, message or response
    (``message_stop``, ``content_block_stop``, ``response.output_text.done``) finalizes."""

    def apply(self, event: Event) -> str | None:
        stops = ("message_stop", "content_block_stop", "response.output_text.done")
        if _extra(event).get("type") in stops:
            event = {**event, "final": True}
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class TakesTextOfDeltaEvents(_Data):
    """Breaks EVT-EXTRA-KEYS: a ``text_delta`` or ``content_block_delta`` event with no
    ``delta`` appends its ``text``, as for Anthropic's stream."""

    def apply(self, event: Event) -> str | None:
        extra = _extra(event)
        if extra.get("type") in ("text_delta", "content_block_delta") and "delta" not in event:
            text = extra.get("text")
            if isinstance(text, str):
                event = {**event, "delta": text}
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class TakesChoicesDeltaContent(_Data):
    """Breaks EVT-EXTRA-KEYS: a non-empty ``choices[0].delta.content`` is the delta, as for
    OpenAI's chunks, whatever ``delta`` says."""

    def apply(self, event: Event) -> str | None:
        choices = _extra(event).get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            inner = choices[0].get("delta")
            content = inner.get("content") if isinstance(inner, dict) else None
            if isinstance(content, str) and content:
                event = {**event, "delta": content}
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class ReopensOnMessageStartAfterFinal(_Data):
    """Breaks EVT-EXTRA-KEYS: a ``message_start`` event for a finalized id starts it again."""

    def apply(self, event: Event) -> str | None:
        key = self._key(event["id"])
        if key in self._done and _extra(event).get("type") == "message_start":
            del self._done[key]
        return super().apply(event)


@_breaks("GET-TEXT")
class OneDirtyFlagForAllReads(_Timing):
    """Breaks GET-TEXT: each open message's read is cached, and one flag for the whole
    assembler (set by any apply, cleared by any read) says whether the caches are stale."""

    def __init__(self) -> None:
        super().__init__()
        self._read: dict[str, str] = {}
        self._dirty = True

    def apply(self, event: Event) -> str | None:
        self._dirty = True
        return super().apply(event)

    def get(self, message_id: str) -> str | None:
        if message_id in self._done or message_id not in self._parts:
            return super().get(message_id)
        if self._dirty or message_id not in self._read:
            self._read[message_id] = "".join(self._parts[message_id])
            self._dirty = False
        return self._read[message_id]


@_breaks("GET-TEXT")
class EvictsFinalizedPastFourMebibytes(_Scale):
    """Breaks GET-TEXT: finalized texts past 4 MiB in all are evicted, oldest first, as a
    history budget would."""

    def __init__(self) -> None:
        super().__init__()
        self._kept = 0

    def apply(self, event: Event) -> str | None:
        fresh = self._key(event["id"]) not in self._done
        result = super().apply(event)
        if fresh and result is not None:
            self._kept += len(result)
            while self._kept > 4 << 20 and len(self._done) > 1:
                self._kept -= len(self._done.pop(next(iter(self._done))))
        return result


@_breaks("CREATE")
class ForgetsEmptyOpenMessages(_Scale):
    """Breaks CREATE: an open message still empty 2048 events after it was created is
    dropped, as a sweep of abandoned streams would, and reads as unknown."""

    def __init__(self) -> None:
        super().__init__()
        self._events = 0
        self._born: dict[str, int] = {}

    def apply(self, event: Event) -> str | None:
        self._events += 1
        key = self._key(event["id"])
        if key not in self._parts and key not in self._done:
            self._born[key] = self._events
        if self._events % 256 == 0:
            for old, born in list(self._born.items()):
                parts = self._parts.get(old)
                if parts is None or any(parts):
                    del self._born[old]
                elif self._events - born > 2048 and old != key:
                    del self._parts[old], self._born[old]
        return super().apply(event)


# --- incremental profile ---------------------------------------------------------------


class _Incremental(_Correct):
    """A correct assembler with ``read_since``; the mutants below each break it once."""

    PROFILE: ClassVar[str] = "incremental"

    def read_since(self, message_id: str, offset: int) -> str | None:
        text = self.get(message_id)
        return None if text is None else text[offset:]


@_breaks("INC-READ-SINCE")
class CompactsOnGetKeepingStaleStarts(_Incremental):
    """Breaks INC-READ-SINCE: ``read_since`` finds its part by an index of where each delta
    starts, and ``get`` compacts an open message's parts into one without rebuilding it."""

    def __init__(self) -> None:
        super().__init__()
        self._starts: dict[str, list[int]] = {}
        self._lengths: dict[str, int] = {}

    def apply(self, event: Event) -> str | None:
        key = self._key(event["id"])
        if key not in self._done and "delta" in event:
            self._starts.setdefault(key, []).append(self._lengths.get(key, 0))
            self._lengths[key] = self._lengths.get(key, 0) + len(event["delta"])
        return super().apply(event)

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        parts = self._parts.get(message_id)
        if parts is not None and text is not None:
            parts[:] = [text]  # compacted, but ``_starts`` still counts the old parts
        return text

    def read_since(self, message_id: str, offset: int) -> str | None:
        parts = self._parts.get(message_id)
        if message_id in self._done or parts is None:
            return super().read_since(message_id, offset)
        starts = self._starts.get(message_id, [])
        index = max((i for i, start in enumerate(starts) if start <= offset), default=0)
        if index >= len(parts):
            return ""
        return "".join(parts[index:])[offset - starts[index] if starts else offset :]


@_breaks("INC-READ-SINCE")
class ReadSinceCacheKeptThroughFinalDelta(_Incremental):
    """Breaks INC-READ-SINCE: reads are cached per offset and dropped when a delta arrives,
    except the delta a final event carries."""

    def __init__(self) -> None:
        super().__init__()
        self._reads: dict[str, dict[int, str | None]] = {}

    def apply(self, event: Event) -> str | None:
        if "delta" in event and not event.get("final", False):
            self._reads.pop(self._key(event["id"]), None)
        return super().apply(event)

    def read_since(self, message_id: str, offset: int) -> str | None:
        if self.get(message_id) is None:
            return None
        reads = self._reads.setdefault(message_id, {})
        if offset not in reads:
            reads[offset] = super().read_since(message_id, offset)
        return reads[offset]


@_breaks("ASM-STATE")
class SharesFinalizedReadsAcrossInstances(_Incremental):
    """Breaks ASM-STATE: reads of finalized messages are memoized in a class attribute, since
    a completed text never changes; but another instance's message of that id does."""

    _memo: ClassVar[dict[tuple[str, int], str]] = {}

    def read_since(self, message_id: str, offset: int) -> str | None:
        if message_id not in self._done:
            return super().read_since(message_id, offset)
        found = self._memo.get((message_id, offset))
        if found is None:
            found = self._memo[message_id, offset] = self._done[message_id][offset:]
        return found


@_breaks("INC-READ-SINCE")
class ReadSinceHoldsBackTrailingCr(_Incremental):
    """Breaks INC-READ-SINCE: while the message is open, a trailing CR is held back until
    the LF that may follow it arrives."""

    def read_since(self, message_id: str, offset: int) -> str | None:
        text = super().read_since(message_id, offset)
        if text is None or self._key(message_id) in self._done:
            return text
        return text.removesuffix("\r")


@_breaks("INC-OFFSET-END")
class OffsetsWrapAt32Bits(_Incremental):
    """Breaks INC-OFFSET-END: the offset goes through a C ``uint32_t``, as in a binding to a
    native library, so 2**32 reads from the start."""

    def read_since(self, message_id: str, offset: int) -> str | None:
        return super().read_since(message_id, offset % 2**32)


@_breaks("INC-READ-SINCE")
class ReadSinceHidesTrailingJoiner(_Incremental):
    """Breaks INC-READ-SINCE: while the message is open, what ``read_since`` returns leaves
    out a trailing zero-width joiner, so a UI never shows half an emoji sequence."""

    def read_since(self, message_id: str, offset: int) -> str | None:
        text = super().read_since(message_id, offset)
        if text is None or self._key(message_id) in self._done:
            return text
        return text.removesuffix("\u200d")


@_breaks("INC-READ-SINCE")
class ReadSinceUtf16(_Incremental):
    """Breaks INC-READ-SINCE: counts the offset in UTF-16 code units, as JavaScript strings do."""

    def read_since(self, message_id: str, offset: int) -> str | None:
        text = self.get(message_id)
        if text is None:
            return None
        units = text.encode("utf-16-le", "surrogatepass")[2 * offset :]
        return units.decode("utf-16-le", "replace")


@_breaks("INC-READ-SINCE")
class ReadSinceUtf8Bytes(_Incremental):
    """Breaks INC-READ-SINCE: counts the offset in UTF-8 bytes."""

    def read_since(self, message_id: str, offset: int) -> str | None:
        text = self.get(message_id)
        return None if text is None else text.encode()[offset:].decode("utf-8", "replace")


@_breaks("INC-READ-SINCE")
class ReadSinceCountsDeltas(_Incremental):
    """Breaks INC-READ-SINCE: the offset counts deltas (parts), not characters."""

    def read_since(self, message_id: str, offset: int) -> str | None:
        parts = self._parts.get(message_id)
        if parts is None:
            return super().read_since(message_id, offset)
        return "".join(parts[offset:])


@_breaks("INC-READ-SINCE")
class ReadSinceCursor(_Incremental):
    """Breaks INC-READ-SINCE: ignores the offset and returns what is new since the last read."""

    def __init__(self) -> None:
        super().__init__()
        self._cursor: dict[str, int] = {}

    def read_since(self, message_id: str, offset: int) -> str | None:
        text = self.get(message_id)
        if text is None:
            return None
        start = self._cursor.get(message_id, 0)
        self._cursor[message_id] = len(text)
        return text[start:]


@_breaks("INC-READ-SINCE")
class ReadSinceNoneAfterFinal(_Incremental):
    """Breaks INC-READ-SINCE: reads only open buffers, so a finalized message reads as None."""

    def read_since(self, message_id: str, offset: int) -> str | None:
        parts = self._parts.get(message_id)
        return None if parts is None else "".join(parts)[offset:]


@_breaks("INC-UNKNOWN")
class ReadSinceUnknownEmpty(_Incremental):
    """Breaks INC-UNKNOWN: ``read_since`` of an unknown id returns ``""``."""

    def read_since(self, message_id: str, offset: int) -> str | None:
        text = super().read_since(message_id, offset)
        return "" if text is None else text


@_breaks("INC-UNKNOWN")
class ReadSinceCreatesState(_Incremental):
    """Breaks INC-UNKNOWN: ``read_since`` of an unknown id returns None but creates the message."""

    def read_since(self, message_id: str, offset: int) -> str | None:
        text = super().read_since(message_id, offset)
        if text is None:
            self._parts[message_id] = []
        return text


@_breaks("INC-OFFSET-END")
class ReadSincePastEndRaises(_Incremental):
    """Breaks INC-OFFSET-END: an offset past the end raises IndexError, not ``""``."""

    def read_since(self, message_id: str, offset: int) -> str | None:
        text = self.get(message_id)
        if text is not None and offset > len(text):
            raise IndexError(f"offset {offset} beyond length {len(text)}")
        return super().read_since(message_id, offset)


@_breaks("INC-OFFSET-END")
class ReadSinceAtEndNone(_Incremental):
    """Breaks INC-OFFSET-END: nothing new to read returns None instead of ``""``."""

    def read_since(self, message_id: str, offset: int) -> str | None:
        return super().read_since(message_id, offset) or None


# --- surrogates profile ----------------------------------------------------------------


class _Surrogates(_Correct):
    """A correct assembler run on the lone-surrogate cases; the mutants below break them."""

    PROFILE: ClassVar[str] = "surrogates"


@_breaks("SURR-SPLIT-PAIR")
class JournalsDeltasAsJson(_Surrogates):
    """Breaks SURR-SPLIT-PAIR: each delta goes through a JSON journal (``json.dumps``, then
    ``json.loads``), whose escapes turn a high and low surrogate side by side into one
    astral character; lone ones come back as they were."""

    def _delta(self, delta: str) -> str:
        text: str = json.loads(json.dumps(delta))
        return text


@_breaks("SURR-SPLIT-PAIR")
class KeysIdsAsUtf16(_Surrogates):
    """Breaks SURR-SPLIT-PAIR: ids are keyed as UTF-16 (a wide-character key store), so a
    high and low surrogate side by side in an id are the astral character's id."""

    def _key(self, message_id: str) -> str:
        units = message_id.encode("utf-16-le", "surrogatepass")
        return units.decode("utf-16-le", "surrogatepass")


@_breaks("SURR-LONE")
class KeysIdsByBackslashEscapes(_Surrogates):
    """Breaks SURR-LONE: ids are stored as UTF-8 with ``backslashreplace``, the usual way to
    put a ``str`` with lone surrogates in a bytes key store, so ``"m\\ud800"`` (a lone
    surrogate) and ``"m\\\\ud800"`` (a backslash and text) are one key."""

    def _key(self, message_id: str) -> str:
        return message_id.encode("utf-8", "backslashreplace").decode("utf-8")


@_breaks("SURR-LONE")
class ReplacesLoneSurrogates(_Surrogates):
    """Breaks SURR-LONE: "sanitizes" deltas through UTF-8 with ``errors="replace"`` (lone -> ?)."""

    def _delta(self, delta: str) -> str:
        return delta.encode("utf-8", "replace").decode("utf-8")


@_breaks("SURR-SPLIT-PAIR")
class Utf16Storage(_Surrogates):
    """Breaks SURR-SPLIT-PAIR: text kept as UTF-16, so split halves join into one character."""

    def _finish(self, text: str) -> str:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        return None if text is None else self._finish(text)


@_breaks("MAP-ANY")
class IgnoresNonDictEvents(_Correct):
    """Breaks MAP-ANY: ignores an event that is not a dict, as defensive code does
    (``if not isinstance(event, dict): return None``); any mapping is an event."""

    PROFILE: ClassVar[str] = "mappings"

    def apply(self, event: Event) -> str | None:
        if not isinstance(event, dict):
            return None
        return super().apply(event)


@_breaks("MAP-ANY")
class JournalsEventsAsJson(_Correct):
    """Breaks MAP-ANY: keeps a JSON journal of the events it was sent, and
    ``json.dumps`` raises for a mapping that is not a dict."""

    PROFILE: ClassVar[str] = "mappings"

    def __init__(self) -> None:
        super().__init__()
        self._journal: list[str] = []

    def apply(self, event: Event) -> str | None:
        self._journal.append(json.dumps(event))
        return super().apply(event)


@_breaks("MAP-ANY")
class ExactStrIdsOnly(_Correct):
    """Breaks MAP-ANY: takes only an exact ``str`` as an id (``type(id) is str``),
    refusing a ``str`` subclass such as a ``StrEnum`` member."""

    PROFILE: ClassVar[str] = "mappings"

    def apply(self, event: Event) -> str | None:
        if type(event["id"]) is not str:
            raise TypeError(f"id must be a str, got {type(event['id']).__name__}")
        return super().apply(event)


# --- scale profile: limits past the required corpus's sizes ------------------------------


class _PastTheCorpus(_Correct):
    """A correct assembler but for a limit that only the ``scale`` profile's sizes reach."""

    PROFILE: ClassVar[str] = "scale"
    FAMILY: ClassVar[str] = "beyond"


@_breaks("APPEND-LONG")
class RingOf65536Parts(_PastTheCorpus):
    """Breaks APPEND-LONG: a message's parts live in a ring of 2**16 slots, as a 16-bit
    part counter would have it: the 65537th delta overwrites the first."""

    def _open(self, key: str) -> list[str]:
        parts = super()._open(key)
        if len(parts) == 2**16:
            parts.pop(0)
        return parts


@_breaks("INTERLEAVE")
class OpenMessagesCappedAt16384(_PastTheCorpus):
    """Breaks INTERLEAVE: at most 2**14 messages stay open; opening one more drops the one
    touched longest ago, as a bounded table of streams would."""

    def _open(self, key: str) -> list[str]:
        parts = self._parts.pop(key, [])
        if len(self._parts) == 2**14:
            del self._parts[next(iter(self._parts))]
        self._parts[key] = parts
        return parts


@_breaks("INTERLEAVE")
class DropsMessagesIdleFor32768Events(_PastTheCorpus):
    """Breaks INTERLEAVE: an open message that no event names during 2**15 events is taken
    for an abandoned stream and dropped."""

    def __init__(self) -> None:
        super().__init__()
        self._clock = 0
        self._touched: dict[str, int] = {}

    def apply(self, event: Event) -> str | None:
        self._clock += 1
        key = self._key(event["id"])
        if self._touched.get(key, self._clock) <= self._clock - 2**15:
            self._parts.pop(key, None)
        self._touched[key] = self._clock
        return super().apply(event)


@_breaks("GET-TEXT")
class ForgetsAllButTheNewest65536Finals(_PastTheCorpus):
    """Breaks GET-TEXT: only the newest 2**16 finalized messages are kept; an older one
    reads as unknown."""

    def apply(self, event: Event) -> str | None:
        text = super().apply(event)
        if text is not None and len(self._done) > 2**16:
            del self._done[next(iter(self._done))]
        return text


@_breaks("INTERLEAVE")
class BuffersAtMost8MiBInAll(_PastTheCorpus):
    """Breaks INTERLEAVE: open messages hold at most 8 MiB of text between them, so one
    message's text depends on the others'; a delta past that budget is dropped."""

    def __init__(self) -> None:
        super().__init__()
        self._held = 0

    def apply(self, event: Event) -> str | None:
        key = self._key(event["id"])
        if "delta" in event and key not in self._done:
            self._held += len(event["delta"])
            if self._held > 2**23:
                event = _without(event, "delta")
        if event.get("final") and key in self._parts:
            self._held -= sum(map(len, self._parts[key]))
        return super().apply(event)


# --- strict profile --------------------------------------------------------------------


class _Strict(StrictAssembler):
    """The strict wrapper over ``list-join``, with no arguments; mutants break its checks."""

    PROFILE: ClassVar[str] = "strict"

    def __init__(self) -> None:
        super().__init__(ListJoinAssembler())

    def apply(self, event: Event) -> str | None:
        return super().apply(self._prepare(event))

    def _prepare(self, event: object) -> Event:
        """Turn what arrived into the event that is validated (the identity when correct)."""
        return cast("Event", event)


@_breaks("MAP-ANY")
class StrictRequiresDict(_Strict):
    """Breaks MAP-ANY: its validator takes only a dict (``type(event) is dict``), refusing
    a valid event that is another mapping (STRICT-EVENT-TYPE refuses only non-mappings)."""

    def _prepare(self, event: object) -> Event:
        if type(event) is not dict:
            raise TypeError(f"event must be a dict, got {type(event).__name__}")
        return super()._prepare(event)


@_breaks("MAP-ANY")
class StrictExactStrOnly(_Strict):
    """Breaks MAP-ANY: its validator takes only exact ``str`` values (``type(value) is
    str``), refusing a valid id or delta of a ``str`` subclass (STRICT-ID-TYPE refuses only
    non-strings)."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, Mapping):
            for key in ("id", "delta"):
                if key in event and isinstance(event[key], str) and type(event[key]) is not str:
                    raise TypeError(f"{key} must be a str, got {type(event[key]).__name__}")
        return super()._prepare(event)


@_breaks("STRICT-EVENT-TYPE")
class StrictParsesJsonText(_Strict):
    """Breaks STRICT-EVENT-TYPE: a string event is parsed as JSON instead of refused."""

    def _prepare(self, event: object) -> Event:
        return (
            cast("Event", json.loads(event)) if isinstance(event, str) else super()._prepare(event)
        )


@_breaks("STRICT-EVENT-TYPE")
class StrictAcceptsPairs(_Strict):
    """Breaks STRICT-EVENT-TYPE: a list of key/value pairs is made a mapping by ``dict()``."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, list) and all(isinstance(p, list) and len(p) == 2 for p in event):
            return cast("Event", dict(event))
        return super()._prepare(event)


@_breaks("STRICT-EVENT-TYPE")
class StrictNonMappingValueError(_Strict):
    """Breaks STRICT-EVENT-TYPE: a non-mapping event raises ValueError, not TypeError."""

    def _prepare(self, event: object) -> Event:
        if not isinstance(event, Mapping):
            raise ValueError("event must be a mapping")
        return super()._prepare(event)


@_breaks("STRICT-ID-MISSING")
class StrictMissingIdKeyError(_Strict):
    """Breaks STRICT-ID-MISSING: a missing id raises KeyError (``event["id"]``), not ValueError."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, Mapping) and "id" not in event:
            raise KeyError("id")
        return super()._prepare(event)


@_breaks("STRICT-ID-MISSING")
class StrictMissingIdTypeError(_Strict):
    """Breaks STRICT-ID-MISSING: a missing id raises TypeError (id is None), not ValueError."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, Mapping) and "id" not in event:
            raise TypeError("event id must be str, got None")
        return super()._prepare(event)


@_breaks("STRICT-ID-TYPE")
class StrictCoercesId(_Strict):
    """Breaks STRICT-ID-TYPE: a non-string id is converted with ``str()`` instead of refused."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, Mapping) and "id" in event and not isinstance(event["id"], str):
            return cast("Event", {**event, "id": str(event["id"])})
        return super()._prepare(event)


@_breaks("STRICT-ID-TYPE")
class StrictNullIdIsMissing(_Strict):
    """Breaks STRICT-ID-TYPE: ``id: null`` counts as missing (ValueError), not TypeError."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, Mapping) and "id" in event and event["id"] is None:
            raise ValueError("event is missing the required field 'id'")
        return super()._prepare(event)


@_breaks("STRICT-DELTA-TYPE")
class StrictAcceptsNullDelta(_Strict):
    """Breaks STRICT-DELTA-TYPE: ``delta: null`` is treated as a missing delta."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, Mapping) and "delta" in event and event["delta"] is None:
            return _without(cast("Event", event), "delta")
        return super()._prepare(event)


@_breaks("STRICT-DELTA-TYPE")
class StrictStringifiesDelta(_Strict):
    """Breaks STRICT-DELTA-TYPE: a non-string, non-null delta is converted with ``str()``."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, Mapping) and event.get("delta") is not None:
            return cast("Event", {**event, "delta": str(event["delta"])})
        return super()._prepare(event)


@_breaks("STRICT-FINAL-TYPE")
class StrictAcceptsIntFinal(_Strict):
    """Breaks STRICT-FINAL-TYPE: ``isinstance(final, int)`` lets 0 and 1 through."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, Mapping) and type(event.get("final")) is int:
            return cast("Event", {**event, "final": bool(event["final"])})
        return super()._prepare(event)


@_breaks("STRICT-FINAL-TYPE")
class StrictAcceptsNullFinal(_Strict):
    """Breaks STRICT-FINAL-TYPE: ``final: null`` is treated as a missing final."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, Mapping) and "final" in event and event["final"] is None:
            return _without(cast("Event", event), "final")
        return super()._prepare(event)


@_breaks("STRICT-FINAL-TYPE")
class StrictTruthyFinal(_Strict):
    """Breaks STRICT-FINAL-TYPE: any final is converted with ``bool()`` (``"false"`` is true)."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, Mapping) and "final" in event:
            return cast("Event", {**event, "final": bool(event["final"])})
        return super()._prepare(event)


@_breaks("STRICT-STATE-UNCHANGED")
class StrictCreatesBeforeValidating(_Strict):
    """Breaks STRICT-STATE-UNCHANGED: creates the message from a string id, then validates."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, Mapping) and isinstance(event.get("id"), str):
            self._inner.apply({"id": event["id"]})
        return super()._prepare(event)


@_breaks("STRICT-STATE-UNCHANGED")
class StrictAppendsBeforeCheckingFinal(_Strict):
    """Breaks STRICT-STATE-UNCHANGED: appends a valid delta, then refuses the bad final."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, Mapping) and "final" in event and not isinstance(event["final"], bool):
            checked = validate_event(_without(cast("Event", event), "final"))
            self._inner.apply(checked)
        return super()._prepare(event)


@_breaks("STRICT-STATE-UNCHANGED")
class StrictRejectsEmptyId(_Strict):
    """Breaks STRICT-STATE-UNCHANGED: over-strict, it refuses the (valid) empty id."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, Mapping) and event.get("id") == "":
            raise ValueError("event id must not be empty")
        return super()._prepare(event)


@_breaks("STRICT-STATE-UNCHANGED")
class StrictRejectsEmptyDelta(_Strict):
    """Breaks STRICT-STATE-UNCHANGED: over-strict, it refuses the (valid) empty delta."""

    def _prepare(self, event: object) -> Event:
        if isinstance(event, Mapping) and event.get("delta") == "":
            raise ValueError("event delta must not be empty")
        return super()._prepare(event)


# Caller habits (EVENT-OWNED) ---------------------------------------------------------
# Ordinary Python callers reuse one dict and refill it, re-send the same object, edit
# it after ``apply`` returned and let it be freed. These assemblers are correct as long
# as every event is a fresh object that lives forever and that nobody looks at again.


@_breaks("EVENT-OWNED")
class KeepsEvents(_Correct):
    """Breaks EVENT-OWNED: keeps every event dict and joins their deltas when read."""

    def __init__(self) -> None:
        super().__init__()
        self._events: dict[str, list[Event]] = {}

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        if key in self._done:
            return self._done[key] if event.get("final", False) else None
        self._events.setdefault(key, []).append(event)
        if not event.get("final", False):
            return None
        text = self._done[key] = self._joined(key)
        return text

    def _joined(self, key: str) -> str:
        return "".join(e.get("delta", "") for e in self._events[key])

    def get(self, message_id: str) -> str | None:
        if message_id in self._done:
            return self._done[message_id]
        return self._joined(message_id) if message_id in self._events else None


@_breaks("EVENT-OWNED")
class KeepsPendingEvent(_Correct):
    """Breaks EVENT-OWNED: holds each message's latest event and appends its delta late."""

    def __init__(self) -> None:
        super().__init__()
        self._pending: dict[str, Event] = {}

    def _flush(self, key: str) -> None:
        pending = self._pending.pop(key, None)
        if pending is not None:
            super().apply({"id": key, "delta": pending.get("delta", "")})

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        self._flush(key)
        if event.get("final", False) or key in self._done:
            return super().apply(event)
        self._pending[key] = event
        return None

    def get(self, message_id: str) -> str | None:
        self._flush(message_id)
        return super().get(message_id)


class _EqualsAnything:
    """A value that says it equals anything: a check that trusts ``==`` calls it the delta."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


@_breaks("EVENT-OWNED")
class ReplacesDeltaWithALiar(_Correct):
    """Breaks EVENT-OWNED: after apply, puts in the caller's event, for its delta, an object
    that says it equals anything: sent again, the event holds no text."""

    def apply(self, event: Event) -> str | None:
        text = super().apply(event)
        if "delta" in event:
            cast("dict[str, Any]", event)["delta"] = _EqualsAnything()
        return text


class _LooksLikeDelta(str):
    """A key that says it is ``"delta"`` (equal, same hash) but reads as another word."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return other == "delta" or str.__eq__(self, other)

    def __hash__(self) -> int:
        return hash("delta")


@_breaks("EVENT-OWNED")
class ReplacesDeltaKeyWithALiar(_Correct):
    """Breaks EVENT-OWNED: after apply, files the caller's delta under a key that says it is
    ``"delta"`` but reads ``"text"``: sent again (as JSON, or key by key), it holds no delta."""

    def apply(self, event: Event) -> str | None:
        text = super().apply(event)
        fields = cast("dict[str, Any]", event)
        if "delta" in fields:
            fields[_LooksLikeDelta("text")] = fields.pop("delta")
        return text


@_breaks("EVENT-OWNED")
class PopsDelta(_Correct):
    """Breaks EVENT-OWNED: takes the delta out of the event with ``event.pop("delta")``."""

    def apply(self, event: Event) -> str | None:
        fields = cast("dict[str, Any]", event)
        if "delta" not in fields:
            return super().apply(event)
        delta = fields.pop("delta")
        return super().apply(cast("Event", {**fields, "delta": delta}))


@_breaks("STRICT-EVENT-UNTOUCHED", strictly=True)  # it keeps what each event says
class NormalizesEventInPlace(_Correct):
    """Breaks STRICT-EVENT-UNTOUCHED: fills in the defaults (``final``, ``delta``) in the caller's
    dict."""

    def apply(self, event: Event) -> str | None:
        fields = cast("dict[str, Any]", event)
        fields.setdefault("final", False)
        fields.setdefault("delta", "")
        return super().apply(event)


@_breaks("EVENT-OWNED")
class DedupesByObjectId(_Correct):
    """Breaks EVENT-OWNED: drops an event whose ``id(event)`` equals the previous one's,
    taking a reused (or freed and reallocated) dict for a duplicate delivery."""

    def __init__(self) -> None:
        super().__init__()
        self._previous: int | None = None

    def apply(self, event: Event) -> str | None:
        previous, self._previous = self._previous, id(event)
        if previous == id(event) and not event.get("final", False):
            return None
        return super().apply(event)


@_breaks("EVENT-OWNED")
class MemoizesByObjectId(_Correct):
    """Breaks EVENT-OWNED: caches each event's parsed fields by ``id(event)``."""

    def __init__(self) -> None:
        super().__init__()
        self._parsed: dict[int, Event] = {}

    def apply(self, event: Event) -> str | None:
        parsed = self._parsed.setdefault(id(event), cast("Event", dict(event)))
        return super().apply(parsed)


@_breaks("STRICT-EVENT-UNTOUCHED", strictly=True)  # it keeps what each event says
class TagsEventWithItself(_Correct):
    """Breaks STRICT-EVENT-UNTOUCHED: stores the event inside itself (``event["self"] = event``),
    as a careless back-reference would: a loop for whoever walks the event after apply."""

    def apply(self, event: Event) -> str | None:
        text = super().apply(event)
        cast("dict[str, Any]", event)["self"] = event
        return text


class _HashOnce:
    """A key whose hash works once, to be inserted, and raises after: anyone who re-inserts
    or looks up the event's keys meets it."""

    def __init__(self) -> None:
        self._hashed = False

    def __hash__(self) -> int:
        if self._hashed:
            raise RuntimeError("a key of the target's that cannot be hashed twice")
        self._hashed = True
        return 1


@_breaks("STRICT-EVENT-UNTOUCHED", strictly=True)  # it keeps what each event says
class AddsHostileKey(_Correct):
    """Breaks STRICT-EVENT-UNTOUCHED: adds a key to the event whose hash works once and raises
    after."""

    def apply(self, event: Event) -> str | None:
        text = super().apply(event)
        cast("dict[Any, Any]", event)[_HashOnce()] = "seen"
        return text


class _LooksLikeId:
    """A key with the hash of ``"id"`` that says it equals anything: a dict lookup of
    ``"id"`` finds it, so a check that looks keys up would call the event unchanged."""

    def __hash__(self) -> int:
        return hash("id")

    def __eq__(self, other: object) -> bool:
        return True


@_breaks("EVENT-OWNED")
class SwapsIdKeyForLookalike(_Correct):
    """Breaks EVENT-OWNED: after apply, moves the id under a key that only claims to be
    ``"id"`` (a lazy proxy, a wrapper with a permissive ``__eq__``)."""

    def apply(self, event: Event) -> str | None:
        text = super().apply(event)
        fields = cast("dict[Any, Any]", event)
        if type(fields) is dict:  # the caller's dict (a read-only mapping cannot be)
            fields[_LooksLikeId()] = fields.pop("id")
        return text


class _TrapWhenHashed(type):
    """A metaclass whose classes cannot be hashed: a check that looks a key's type up in a
    set runs this inside the kit (``SystemExit(0)`` made ``check`` exit 0, no verdict)."""

    def __hash__(cls) -> int:
        raise SystemExit(0)


class _KeyOfATrappedType(metaclass=_TrapWhenHashed):
    """An ordinary key; its type is the trap."""


@_breaks("EVENT-OWNED")
class SwapsIdKeyForOneOfATrappedType(_Correct):
    """Breaks EVENT-OWNED: after apply, moves the id under a key whose type's metaclass
    raises when the type is hashed (the event keeps its length)."""

    def apply(self, event: Event) -> str | None:
        text = super().apply(event)
        fields = cast("dict[Any, Any]", event)
        fields[_KeyOfATrappedType()] = fields.pop("id")
        return text


class _PosesAsStr(type):
    """A metaclass whose classes hash like ``str`` and say they equal anything: looked up
    in a set of types, the class passes for ``str``."""

    def __hash__(cls) -> int:
        return hash(str)

    def __eq__(cls, other: object) -> bool:
        return True


class _StrImpostor(metaclass=_PosesAsStr):
    """A key that hashes like ``"id"`` and equals anything, of a type posing as ``str``."""

    def __hash__(self) -> int:
        return hash("id")

    def __eq__(self, other: object) -> bool:
        return True


@_breaks("EVENT-OWNED")
class SwapsIdKeyForStrImpostor(_Correct):
    """Breaks EVENT-OWNED: after apply, moves the id under a key that passes for
    ``"id"``, of a type that passes for ``str`` wherever types are compared rather than
    identified."""

    def apply(self, event: Event) -> str | None:
        text = super().apply(event)
        fields = cast("dict[Any, Any]", event)
        if type(fields) is dict:  # the caller's dict (a read-only mapping cannot be)
            fields[_StrImpostor()] = fields.pop("id")
        return text


# Bugs corpus 1.6.0 passed (an adversarial pass wrote them; each case that catches one
# came after it) ----------------------------------------------------------------------


@_breaks("EVT-ID-ANY")
class KeysLongIdsByTheirEnds(_Data):
    """Breaks EVT-ID-ANY: an id over 256 characters is keyed by its first 128 and last 125
    characters around an ellipsis, so long ids that differ in the middle are one message."""

    def _key(self, message_id: str) -> str:
        if len(message_id) <= 256:
            return message_id
        return f"{message_id[:128]}...{message_id[-125:]}"


@_breaks("EVT-ID-ANY")
class KeysLongIdsByTheirTail(_Data):
    """Breaks EVT-ID-ANY: ids are keyed by their last 256 characters, so long ids that
    differ near the start (a user or tenant prefix) are one message."""

    def _key(self, message_id: str) -> str:
        return message_id[-256:]


@_breaks("EVT-ID-ANY")
class HashesLongIdsAsAscii(_Data):
    """Breaks EVT-ID-ANY: an id over 1024 characters is keyed by the MD5 of its ASCII
    encoding with errors ignored, so long ids that differ in an accent are one message."""

    def _key(self, message_id: str) -> str:
        if len(message_id) <= 1024:
            return message_id
        return hashlib.md5(message_id.encode("ascii", "ignore")).hexdigest()


@_breaks("EVT-ID-ANY")
class KeysDecimalIdsAsNumbers(_Data):
    """Breaks EVT-ID-ANY: an id of decimal digits (``str.isdecimal``) is keyed by its
    number, a choice index; but digits of other scripts are decimal too, so "1" and the
    fullwidth "\uff11" are one message ("01" stays a string, not canonical)."""

    def _key(self, message_id: str) -> str:
        if message_id.isdecimal() and not message_id.startswith("0"):
            return f"#{int(message_id)}"
        return message_id


@_breaks("APPEND-EXACT")
class SkipsSseCommentDeltas(_Data):
    """Breaks APPEND-EXACT: a delta that is exactly an SSE comment line (``:``, ``: ping``,
    with or without its newline) is taken for a keep-alive and skipped; ``:`` is also
    the commonest fragment of streamed JSON."""

    _COMMENT = re.compile(r":(?: ?ping)?\n?")

    def _delta(self, delta: str) -> str:
        return "" if self._COMMENT.fullmatch(delta) else delta


@_breaks("APPEND-EXACT")
class DropsChatTemplateTokens(_Data):
    """Breaks APPEND-EXACT: deltas that are exactly a chat template's control token
    (Gemma's ``<end_of_turn>``, Llama's ``<|end_of_text|>``, Mistral's ``[/INST]`` ...) are
    dropped as end markers."""

    _TOKENS: ClassVar[frozenset[str]] = frozenset(
        {
            "<end_of_turn>",
            "<start_of_turn>",
            "<|end_of_text|>",
            "<|return|>",
            "[/INST]",
            "<|im_sep|>",
            "<|END_OF_TURN_TOKEN|>",
        }
    )

    def _delta(self, delta: str) -> str:
        return "" if delta in self._TOKENS else delta


@_breaks("APPEND-EXACT")
class DropsReplacementCharDeltas(_Data):
    """Breaks APPEND-EXACT: a delta made only of U+FFFD is taken for the leftover of a
    UTF-8 sequence split across chunks, and skipped."""

    def _delta(self, delta: str) -> str:
        return "" if delta and not delta.strip("\ufffd") else delta


@_breaks("APPEND-LONG")
class ClipsDeltasAtOneMebibyte(_Scale):
    """Breaks APPEND-LONG: each delta is cut to 2**20 characters, a size no token chunk
    reaches; a client that forwards a whole tool result in one delta loses its end."""

    def _delta(self, delta: str) -> str:
        return delta[: 2**20]


@_breaks("APPEND-LONG")
class CapsMessagesAtTwoMebibytes(_Scale):
    """Breaks APPEND-LONG: a message stops growing at 2**21 characters, a guard against a
    runaway stream; later deltas are dropped."""

    def __init__(self) -> None:
        super().__init__()
        self._held: dict[str, int] = {}

    def apply(self, event: Event) -> str | None:
        key = self._key(event["id"])
        if "delta" in event and key not in self._done:
            room = 2**21 - self._held.get(key, 0)
            event = cast("Event", {**event, "delta": event["delta"][: max(0, room)]})
            self._held[key] = self._held.get(key, 0) + len(event["delta"])
        return super().apply(event)


class _ReadsExtraKeys(_Correct):
    """A correct assembler but for an extra key it gives a provider's meaning."""

    FAMILY: ClassVar[str] = "data"

    def _extra_key(self, event: Event, key: str) -> object:
        return _extra(event).get(key)


@_breaks("EVT-EXTRA-KEYS")
class IgnoresPingEvents(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: an event whose ``type`` is a keep-alive (``ping``,
    ``heartbeat``, ``keepalive``) is skipped, its delta and the message it creates lost."""

    def apply(self, event: Event) -> str | None:
        if self._extra_key(event, "type") in ("ping", "heartbeat", "keepalive"):
            return None
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class DropsReasoningDeltas(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: a delta whose event is typed as reasoning (``thinking_delta``,
    ``reasoning_delta``) or sent on the ``analysis`` channel is left out of the text, as a
    client showing only a reasoning model's answer does."""

    def apply(self, event: Event) -> str | None:
        reasoning = self._extra_key(event, "type") in ("thinking_delta", "reasoning_delta")
        if reasoning or self._extra_key(event, "channel") == "analysis":
            event = _without(event, "delta")
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class DropsDeltasBesideToolCalls(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: the delta of an event that carries ``tool_calls`` is left
    out, as code that reads such a chunk as a tool call, not text, does."""

    def apply(self, event: Event) -> str | None:
        if self._extra_key(event, "tool_calls"):
            event = _without(event, "delta")
        return super().apply(event)


class _FinalizesOnAKey(_ReadsExtraKeys):
    """A correct assembler but for the extra keys ``_ends`` says end a provider's stream."""

    def _ends(self, event: Event) -> bool:
        return False

    def apply(self, event: Event) -> str | None:
        return super().apply({**event, "final": True} if self._ends(event) else event)


@_breaks("EVT-EXTRA-KEYS")
class GeneratedTextFinalizes(_FinalizesOnAKey):
    """Breaks EVT-EXTRA-KEYS: an event with a ``generated_text`` finalizes, as the last
    token event of a text-generation-inference stream would."""

    def _ends(self, event: Event) -> bool:
        return self._extra_key(event, "generated_text") is not None


@_breaks("EVT-EXTRA-KEYS")
class CamelCaseStopReasonsFinalize(_FinalizesOnAKey):
    """Breaks EVT-EXTRA-KEYS: an event with a ``finishReason`` or ``stopReason`` finalizes,
    as Gemini's and Bedrock's last chunks would."""

    def _ends(self, event: Event) -> bool:
        reasons = (self._extra_key(event, "finishReason"), self._extra_key(event, "stopReason"))
        return reasons != (None, None)


@_breaks("EVT-EXTRA-KEYS")
class CohereStreamEndFinalizes(_FinalizesOnAKey):
    """Breaks EVT-EXTRA-KEYS: an event with ``is_finished: true`` or the ``event_type``
    ``stream-end`` finalizes, as Cohere's last event would."""

    def _ends(self, event: Event) -> bool:
        finished = self._extra_key(event, "is_finished") is True
        return finished or self._extra_key(event, "event_type") == "stream-end"


@_breaks("EVT-EXTRA-KEYS")
class DoneReasonFinalizes(_FinalizesOnAKey):
    """Breaks EVT-EXTRA-KEYS: an event with a ``done_reason`` finalizes, as Ollama's last
    chunk would."""

    def _ends(self, event: Event) -> bool:
        return self._extra_key(event, "done_reason") is not None


class _TakesAKeyAsDelta(_ReadsExtraKeys):
    """A correct assembler but for the text ``_text`` finds in an event without a delta."""

    def _text(self, event: Event) -> object:
        return None

    def apply(self, event: Event) -> str | None:
        text = self._text(event)
        if "delta" not in event and isinstance(text, str):
            event = {**event, "delta": text}
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class TakesResponseKeyAsDelta(_TakesAKeyAsDelta):
    """Breaks EVT-EXTRA-KEYS: an event's ``response`` is its delta when it has none, as for
    Ollama's generate stream."""

    def _text(self, event: Event) -> object:
        return self._extra_key(event, "response")


@_breaks("EVT-EXTRA-KEYS")
class TakesCompletionKeyAsDelta(_TakesAKeyAsDelta):
    """Breaks EVT-EXTRA-KEYS: an event's ``completion`` is its delta when it has none, as for
    the legacy Anthropic completions stream."""

    def _text(self, event: Event) -> object:
        return self._extra_key(event, "completion")


def _dig(value: object, *path: str | int) -> object:
    """``value[path[0]][path[1]]...``, or None where a step is missing."""
    for step in path:
        try:
            value = cast("Any", value)[step]
        except (KeyError, IndexError, TypeError):
            return None
    return value


@_breaks("EVT-EXTRA-KEYS")
class TakesTokenTextAsDelta(_TakesAKeyAsDelta):
    """Breaks EVT-EXTRA-KEYS: the ``text`` of an event's ``token`` is its delta when it has
    none, as for a text-generation-inference stream."""

    def _text(self, event: Event) -> object:
        return _dig(event, "token", "text")


@_breaks("EVT-EXTRA-KEYS")
class TakesTextDeltaKeyAsDelta(_TakesAKeyAsDelta):
    """Breaks EVT-EXTRA-KEYS: an event's ``textDelta`` is its delta when it has none, as for
    the Vercel AI SDK's stream parts."""

    def _text(self, event: Event) -> object:
        return self._extra_key(event, "textDelta")


@_breaks("EVT-EXTRA-KEYS")
class TakesSseDataAsDelta(_TakesAKeyAsDelta):
    """Breaks EVT-EXTRA-KEYS: an event's ``data`` is its delta when it has none, as for
    events straight from an SSE parser."""

    def _text(self, event: Event) -> object:
        return self._extra_key(event, "data")


@_breaks("EVT-EXTRA-KEYS")
class TakesNestedProviderText(_TakesAKeyAsDelta):
    """Breaks EVT-EXTRA-KEYS: the text nested in a Gemini ``candidates``, a vLLM ``outputs``
    or a Bedrock ``contentBlockDelta`` is the delta of an event that has none."""

    def _text(self, event: Event) -> object:
        for path in (("candidates", 0, "content", "parts", 0, "text"), ("outputs", 0, "text"),
                     ("contentBlockDelta", "delta", "text")):  # fmt: skip
            text = _dig(event, *path)
            if text is not None:
                return text
        return None


@_breaks("EVT-EXTRA-KEYS")
class FinalizesOnAFinishType(_FinalizesOnAKey):
    """Breaks EVT-EXTRA-KEYS: an event whose ``type`` is ``finish`` (or ``finish-step``,
    ``text-end``) finalizes, as the Vercel AI SDK's last stream part would."""

    def _ends(self, event: Event) -> bool:
        return self._extra_key(event, "type") in ("finish", "finish-step", "text-end")


@_breaks("EVT-EXTRA-KEYS")
class SnapshotKeyReplacesText(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: an event with ``snapshot: true`` or ``replace: true`` starts its
    open message over, as for providers that can resend the whole text."""

    def apply(self, event: Event) -> str | None:
        replaces = True in (self._extra_key(event, "snapshot"), self._extra_key(event, "replace"))
        if replaces and event["id"] in self._parts:
            self._parts[event["id"]].clear()
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class RoutesByItemId(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: an event's ``item_id`` names its message, as for the output
    items of OpenAI's Responses stream."""

    def apply(self, event: Event) -> str | None:
        item = self._extra_key(event, "item_id")
        return super().apply({**event, "id": item} if isinstance(item, str) else event)


@_breaks("EVT-EXTRA-KEYS")
class KeysByOutputIndex(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: a non-zero ``output_index`` or ``content_index`` picks a part
    of the message of its own, as for the parts of a Responses stream's output."""

    def apply(self, event: Event) -> str | None:
        index = self._extra_key(event, "output_index") or self._extra_key(event, "content_index")
        return super().apply({**event, "id": f"{event['id']}/{index}"} if index else event)


@_breaks("EVT-EXTRA-KEYS")
class DiscardsMessageOnError(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: an event with an ``error`` throws the open message away, as
    a handler of a provider failing mid-stream would."""

    def apply(self, event: Event) -> str | None:
        if self._extra_key(event, "error") is not None:
            self._parts.pop(self._key(event["id"]), None)
            return None
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class DropsOutOfOrderSequenceNumbers(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: an event whose ``sequence_number`` is not above the last one
    seen is dropped as a replay."""

    def __init__(self) -> None:
        super().__init__()
        self._last = -1

    def apply(self, event: Event) -> str | None:
        number = self._extra_key(event, "sequence_number")
        if isinstance(number, int):
            if number <= self._last:
                return None
            self._last = number
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class DropsDeltasBehindTheirOffset(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: a delta whose ``offset`` key is below the text's length is
    taken for a retransmission after a resume, and dropped."""

    def apply(self, event: Event) -> str | None:
        offset = self._extra_key(event, "offset")
        held = self._parts.get(self._key(event["id"]))
        if isinstance(offset, int) and held is not None and offset < len("".join(held)):
            event = _without(event, "delta")
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class RestartsOnANewAttempt(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: a higher ``attempt`` number starts the open message over, as
    retry logic would."""

    def __init__(self) -> None:
        super().__init__()
        self._attempts: dict[str, int] = {}

    def apply(self, event: Event) -> str | None:
        attempt, key = self._extra_key(event, "attempt"), self._key(event["id"])
        if isinstance(attempt, int) and attempt > self._attempts.get(key, 0):
            self._attempts[key] = attempt
            if key in self._parts:
                self._parts[key] = []
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class CutsAtAStopSequence(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: the completed text is cut at a stop sequence an event names
    in its ``stop`` key."""

    def __init__(self) -> None:
        super().__init__()
        self._stops: dict[str, str] = {}

    def apply(self, event: Event) -> str | None:
        stop = self._extra_key(event, "stop")
        if isinstance(stop, str) and stop:
            self._stops[self._key(event["id"])] = stop
        return super().apply(event)

    def _finish(self, text: str) -> str:
        for stop in self._stops.values():
            text = text.split(stop, 1)[0]
        return text


@_breaks("EVT-EXTRA-KEYS")
class RestartsWhenTheModelChanges(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: an event naming another ``model`` than the open message's
    starts its text over, as a client that takes a new model for a new response would."""

    def __init__(self) -> None:
        super().__init__()
        self._models: dict[str, object] = {}

    def apply(self, event: Event) -> str | None:
        model, key = self._extra_key(event, "model"), self._key(event["id"])
        if model is not None:
            if key in self._parts and self._models.get(key, model) != model:
                self._parts[key] = []
            self._models[key] = model
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class OrdersDeltasByTheirIndex(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: deltas are kept by their ``index`` key (a provider's content
    block or choice) and joined in index order, arrival order within one index."""

    def __init__(self) -> None:
        super().__init__()
        self._indexes: dict[str, list[int]] = {}

    def apply(self, event: Event) -> str | None:
        index, key = self._extra_key(event, "index"), self._key(event["id"])
        if "delta" in event and key not in self._done:
            indexes = self._indexes.setdefault(key, [])
            at = bisect_right(indexes, index if isinstance(index, int) else 0)
            indexes.insert(at, index if isinstance(index, int) else 0)
            self._open(key).insert(at, event["delta"])
            event = _without(event, "delta")
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class DropsDeltasOfAnotherResponse(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: once a message has seen a ``response_id`` (or ``model``), a
    delta naming another one is taken for a stale stream's and dropped."""

    def __init__(self) -> None:
        super().__init__()
        self._owners: dict[str, tuple[object, object]] = {}

    def apply(self, event: Event) -> str | None:
        key = self._key(event["id"])
        seen = (self._extra_key(event, "response_id"), self._extra_key(event, "model"))
        first = self._owners.setdefault(key, seen)
        clash = [a != b for a, b in zip(first, seen, strict=True) if None not in (a, b)]
        if any(clash):
            event = _without(event, "delta")
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class DropsARepeatedSequenceNumber(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: an event whose ``sequence_number`` (or ``event_id``) was seen
    before in its message is taken for a duplicate delivery and dropped."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[tuple[str, str, object]] = set()

    def apply(self, event: Event) -> str | None:
        key = self._key(event["id"])
        for name in ("sequence_number", "event_id"):
            value = self._extra_key(event, name)
            if value is not None:
                if (key, name, value) in self._seen:
                    return None
                self._seen.add((key, name, value))
        return super().apply(event)


@_breaks("EVT-EXTRA-KEYS")
class RestartsWhenCreatedJumpsAhead(_ReadsExtraKeys):
    """Breaks EVT-EXTRA-KEYS: an event whose ``created`` time is more than a minute after
    the open message's is taken for a new response, and the text starts over."""

    def __init__(self) -> None:
        super().__init__()
        self._created: dict[str, int] = {}

    def apply(self, event: Event) -> str | None:
        created, key = self._extra_key(event, "created"), self._key(event["id"])
        if isinstance(created, int):
            if key in self._parts and created > self._created.get(key, created) + 60:
                self._parts[key] = []
            self._created[key] = created
        return super().apply(event)


@_breaks("APPEND-EXACT")
class RepairsCp1252Mojibake(_Data):
    """Breaks APPEND-EXACT: the commonest mojibake, UTF-8 punctuation read as Windows-1252
    (``â€™``, ``â€œ``), is repaired wherever it stands, from a table."""

    _TABLE: ClassVar[dict[str, str]] = {
        "\u00e2\u20ac\u2122": "\u2019",
        "\u00e2\u20ac\u0153": "\u201c",
        "\u00e2\u20ac\x9d": "\u201d",
        "\u00e2\u20ac\u201d": "\u2014",
    }

    def _finish(self, text: str) -> str:
        for broken, fixed in self._TABLE.items():
            text = text.replace(broken, fixed)
        return text


@_breaks("APPEND-EXACT")
class UnescapesMarkupText(_Data):
    """Breaks APPEND-EXACT: a completed text that is only markup a renderer would clean
    (``&quot;``, ``&nbsp;``, ``<br>``) is turned into the text it stands for."""

    _MARKUP: ClassVar[dict[str, str]] = {
        "&quot;": '"',
        "&gt;": ">",
        "&lt;": "<",
        "&nbsp;": "\u00a0",
        "&apos;": "'",
        "<br>": "\n",
        "<br/>": "\n",
    }

    def _finish(self, text: str) -> str:
        return self._MARKUP.get(text, text)


@_breaks("APPEND-EXACT")
class RepairsMojibakeText(_Data):
    """Breaks APPEND-EXACT: a completed text that reads as UTF-8 decoded as Latin-1
    (``cafÃ©``) is repaired to ``café``, as ftfy-style clean-up would; only a text made
    wholly of Latin-1 characters can be re-decoded, so only a text alone in its message."""

    def _finish(self, text: str) -> str:
        try:
            return text.encode("latin-1").decode("utf-8")
        except UnicodeError:
            return text


@_breaks("APPEND-EXACT")
class UnescapesAnEntityText(_Data):
    """Breaks APPEND-EXACT: a completed text that is one HTML entity (``&amp;``,
    ``&#8217;``) is unescaped, as a renderer's clean-up would."""

    def _finish(self, text: str) -> str:
        return html.unescape(text) if re.fullmatch(r"&#?\w+;", text) else text


@_breaks("APPEND-EXACT")
class DecodesAnEscapedText(_Data):
    """Breaks APPEND-EXACT: a completed text made only of backslash escapes (``\\u00e9``,
    ``\\n``) is decoded, as a fix for double-escaped output would."""

    def _finish(self, text: str) -> str:
        if re.fullmatch(r"(\\(u[0-9a-fA-F]{4}|[ntr\"\\]))+", text):
            return text.encode("ascii").decode("unicode_escape")
        return text


@_breaks("APPEND-EXACT")
class DropsAReplacementCharacterText(_Data):
    """Breaks APPEND-EXACT: a completed text that is nothing but U+FFFD replacement
    characters is taken for a decoding failure and emptied."""

    def _finish(self, text: str) -> str:
        return "" if text and set(text) == {"\ufffd"} else text


@_breaks("APPEND-EXACT")
class PercentDecodesAnEncodedText(_Data):
    """Breaks APPEND-EXACT: a completed text that is wholly percent-encoded (``%C3%A9``) is
    URL-decoded."""

    def _finish(self, text: str) -> str:
        if re.fullmatch(r"(%[0-9A-Fa-f]{2})+", text):
            return bytes.fromhex(text.replace("%", "")).decode("utf-8", "replace")
        return text


@_breaks("EVT-ID-ANY")
class UnescapesHtmlInIds(_Data):
    """Breaks EVT-ID-ANY: ids go through ``html.unescape``, so ``a&amp;b`` is ``a&b``."""

    def _key(self, message_id: str) -> str:
        return html.unescape(message_id)


@_breaks("EVT-ID-ANY")
class ReadsPlusAsSpaceInIds(_Data):
    """Breaks EVT-ID-ANY: ids are read as form-encoded, ``+`` for a space, so ``a+b`` is
    ``a b``."""

    def _key(self, message_id: str) -> str:
        return message_id.replace("+", " ")


@_breaks("EVT-ID-ANY")
class StripsBidiMarksFromIds(_Data):
    """Breaks EVT-ID-ANY: bidirectional marks and embeddings (LRM, RLM, U+202A-U+202E,
    U+2066-U+2069) are stripped from ids."""

    _BIDI = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")

    def _key(self, message_id: str) -> str:
        return self._BIDI.sub("", message_id)


@_breaks("APPEND-EXACT")
class AppliesBackspaces(_Data):
    """Breaks APPEND-EXACT: a backspace in a delta erases the character before it, as a
    terminal would."""

    def _finish(self, text: str) -> str:
        if "\b" not in text:  # nothing to erase: quickly (reads of long open messages)
            return text
        kept: list[str] = []
        for char in text:
            if char == "\b":
                if kept:
                    kept.pop()
            else:
                kept.append(char)
        return "".join(kept)

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        return text if text is None or message_id in self._done else self._finish(text)


@_breaks("APPEND-EXACT")
class DropsLeadingBlankLines(_Data):
    """Breaks APPEND-EXACT: the completed text loses its leading newlines, the blank lines a
    model often writes before its answer."""

    def _finish(self, text: str) -> str:
        return text.lstrip("\n")


@_breaks("APPEND-EXACT")
class JoinsWordPieceContinuations(_Data):
    """Breaks APPEND-EXACT: a delta starting with ``##`` (a WordPiece continuation, as
    BERT-style tokenizers spell one) loses the marker, so ``play`` ``##ing`` is ``playing``."""

    def _delta(self, delta: str) -> str:
        return delta.removeprefix("##")


@_breaks("APPEND-EXACT")
class DecodesByteFallbackTokens(_Data):
    """Breaks APPEND-EXACT: byte-fallback tokens (SentencePiece's ``<0x0A>``) are decoded to
    their character, as a hand-written Llama detokenizer does, so the text ``<0x0A>`` is LF."""

    def _delta(self, delta: str) -> str:
        return re.sub(r"<0x([0-9A-F]{2})>", lambda byte: chr(int(byte[1], 16)), delta)


@_breaks("APPEND-EXACT")
class ExpandsEmojiShortcodes(_Data):
    """Breaks APPEND-EXACT: shortcodes such as ``:smile:`` become their emoji, as chat UIs
    render them."""

    _EMOJI: ClassVar[dict[str, str]] = {"smile": "\U0001f604", "+1": "\U0001f44d"}

    def _delta(self, delta: str) -> str:
        return re.sub(r":(smile|\+1):", lambda code: self._EMOJI[code[1]], delta)


@_breaks("APPEND-EXACT")
class ClosesAnOpenCodeFence(_Data):
    """Breaks APPEND-EXACT: a completed text with an odd number of code fences (three
    backticks) gets a closing one, as a Markdown renderer repairs an answer cut off inside a
    code block."""

    def _finish(self, text: str) -> str:
        return text + "\n```" if text.count("```") % 2 else text


@_breaks("APPEND-EXACT")
class CutsAtAHumanTurn(_Data):
    """Breaks APPEND-EXACT: the completed text is cut at ``\\n\\nHuman:``, the legacy
    Anthropic completions stop sequence, although no event asked for a stop."""

    def _finish(self, text: str) -> str:
        return text.partition("\n\nHuman:")[0]


@_breaks("APPEND-EXACT")
class DropsATrailingBackslashAtFinal(_Data):
    """Breaks APPEND-EXACT: a trailing backslash is taken for the start of an escape that
    the next delta completes; at final, with none to come, it is dropped."""

    def _finish(self, text: str) -> str:
        return text.removesuffix("\\")


@_breaks("APPEND-EXACT")
class UnwrapsACodeOnlyAnswer(_Data):
    """Breaks APPEND-EXACT: a completed text that is one fenced code block loses its fence
    lines, as code that extracts the code from an answer does."""

    def _finish(self, text: str) -> str:
        fenced = re.fullmatch(r"```[^\n]*\n(.*)\n```", text, re.S)
        return text if fenced is None or "```" in fenced[1] else fenced[1]


@_breaks("APPEND-EXACT")
class StripsMarkdownBold(_Data):
    """Breaks APPEND-EXACT: ``**bold**`` in the completed text loses its asterisks, as a
    plain-text (speech or SMS) rendering of an answer does."""

    def _finish(self, text: str) -> str:
        return re.sub(r"\*\*(.+?)\*\*", r"\1", text)


@_breaks("APPEND-EXACT")
class StripsMarkdownHeadings(_Data):
    """Breaks APPEND-EXACT: a completed text's Markdown headings lose their ``#`` marks, as a
    plain-text rendering of an answer does."""

    def _finish(self, text: str) -> str:
        return re.sub(r"(?m)^#{1,6} ", "", text)


@_breaks("APPEND-EXACT")
class StripsHtmlComments(_Data):
    """Breaks APPEND-EXACT: HTML comments (``<!-- ... -->``) are removed from the completed
    text, as a Markdown sanitizer does."""

    def _finish(self, text: str) -> str:
        return re.sub(r"<!--.*?-->", "", text, flags=re.S)


@_breaks("APPEND-EXACT")
class AsciiHyphensAndMinus(_Data):
    """Breaks APPEND-EXACT: hyphens and the minus sign (U+2010, U+2011, U+2212) become an
    ASCII hyphen-minus, as a search indexer's or a code-safe output filter does."""

    def _delta(self, delta: str) -> str:
        return delta.translate(dict.fromkeys((0x2010, 0x2011, 0x2212), "-"))


@_breaks("APPEND-EXACT")
class StripsSupplementaryVariationSelectors(_Data):
    """Breaks APPEND-EXACT: removes the variation selectors U+E0100 to U+E01EF, which can
    smuggle hidden data past a reader, as an input sanitizer does; they select glyphs of
    ideographs in real text."""

    def _delta(self, delta: str) -> str:
        return re.sub("[\U000e0100-\U000e01ef]", "", delta)


class _SpacesAJunction(_Data):
    """A correct assembler but for a space it puts between an open text and a delta when
    ``_spaced`` says the delta starts a new word, as a joiner of speech or sentence chunks
    does."""

    def _spaced(self, text: str, delta: str) -> bool:
        return False

    def apply(self, event: Event) -> str | None:
        delta, parts = event.get("delta"), self._parts.get(self._key(event["id"]))
        if delta and parts and self._spaced("".join(parts), delta):
            event = {**event, "delta": f" {delta}"}
        return super().apply(event)


@_breaks("APPEND-EXACT")
class SpacesSentencesApart(_SpacesAJunction):
    """Breaks APPEND-EXACT: a delta starting with a capital letter after a text ending in
    ``.``, ``!`` or ``?`` gets a space before it, so code such as ``System.Out`` is split."""

    def _spaced(self, text: str, delta: str) -> bool:
        return text.endswith((".", "!", "?")) and delta[0].isupper()


@_breaks("APPEND-EXACT")
class SpacesAfterCommas(_SpacesAJunction):
    """Breaks APPEND-EXACT: a delta starting with a letter after a text ending in a comma
    gets a space before it."""

    def _spaced(self, text: str, delta: str) -> bool:
        return text.endswith(",") and delta[0].isalpha()


@_breaks("GET-TEXT")
class HoldsBackOpenMarkdownMarkers(_HidesAnUnfinishedTail):
    """Breaks GET-TEXT: an open text ending in Markdown or TeX markers (``*``, ``_``, a backtick,
    ``~``, ``$``, ``[``) reads without them, as streaming Markdown renderers hold back an
    emphasis, code span, link or formula that may not be closed yet."""

    def _unfinished(self, text: str) -> int:
        return len(text) - len(text.rstrip("*_`~$["))


@_breaks("GET-TEXT")
class HoldsBackATableRowOrRule(_HidesAnUnfinishedTail):
    """Breaks GET-TEXT: while open, a last line that starts a table row (``|``) or is only
    ``-`` or ``=`` (a rule or a heading's underline) reads as not yet written, as streaming
    Markdown renderers wait for such a line to end."""

    def _unfinished(self, text: str) -> int:
        line = text.rpartition("\n")[2]
        return len(line) if line.startswith("|") or (line and not line.strip("-=")) else 0


@_breaks("GET-TEXT")
class HoldsBackABlockMarkerLine(_HidesAnUnfinishedTail):
    """Breaks GET-TEXT: while open, a last line that is only a heading, quote or list marker
    (``# ``, ``> ``, ``1. ``, ``- ``) reads as not yet written, as streaming Markdown
    renderers wait for the block's first word."""

    def _unfinished(self, text: str) -> int:
        line = text.rpartition("\n")[2]
        return len(line) if re.fullmatch(r"(#{1,6}|>|\d+\.|[-*+]) ?", line) else 0


@_breaks("GET-TEXT")
class HoldsBackAnEscapeOrEntityStart(_HidesAnUnfinishedTail):
    """Breaks GET-TEXT: an open text ending in a backslash or the start of an HTML entity
    (``&``, ``&am``, ``&#3``) reads without it, as a renderer waits for the rest."""

    def _unfinished(self, text: str) -> int:
        start = re.search(r"(\\|&#?[0-9A-Za-z]*)\Z", text)
        return 0 if start is None else len(start[0])


@_breaks("EVT-ID-ANY")
class LowercasesHexIds(_Data):
    """Breaks EVT-ID-ANY: an id made only of hex digits is lower-cased, as digests and
    request ids are compared, so ``BEEF42`` is ``beef42``."""

    def _key(self, message_id: str) -> str:
        hexadecimal = re.fullmatch(r"[0-9A-Fa-f]+", message_id)
        return message_id.lower() if hexadecimal else message_id


@_breaks("EVT-ID-ANY")
class DecodesEscapesInIds(_Data):
    """Breaks EVT-ID-ANY: ids go through ``unicode_escape`` decoding, as ids read from an
    escaped log or CSV file are, so ``a\\nb`` (a backslash and an n) is ``a`` LF ``b``."""

    def _key(self, message_id: str) -> str:
        try:
            return message_id.encode("latin-1", "backslashreplace").decode("unicode_escape")
        except UnicodeDecodeError:
            return message_id


@_breaks("EVT-ID-ANY")
class StripsAngleBracketsFromIds(_Data):
    """Breaks EVT-ID-ANY: angle brackets around an id are dropped, as a Message-ID header's
    are (``<m@host>`` is ``m@host``)."""

    def _key(self, message_id: str) -> str:
        return message_id.removeprefix("<").removesuffix(">")


@_breaks("EVT-ID-ANY")
class CanonicalUrlIds(_Data):
    """Breaks EVT-ID-ANY: an id that is a URL is keyed by its canonical form (scheme and
    host lower-cased, an empty path made ``/``), so ``HTTPS://Example.com`` is
    ``https://example.com/``."""

    def _key(self, message_id: str) -> str:
        url = urlsplit(message_id)
        if not (url.scheme and url.netloc):
            return message_id
        return urlunsplit(
            (url.scheme.lower(), url.netloc.lower(), url.path or "/", url.query, url.fragment)
        )


@_breaks("CREATE")
class SweepsEmptyFinalTexts(_Scale):
    """Breaks CREATE: every 1024 events a clean-up drops the finalized messages whose text
    is empty (``if not text``), so one finalized without a delta later reads as unknown."""

    def __init__(self) -> None:
        super().__init__()
        self._events = 0

    def apply(self, event: Event) -> str | None:
        self._events += 1
        if self._events % 1024 == 0:
            self._done = {key: text for key, text in self._done.items() if text}
        return super().apply(event)


# Found by the sensitivity pass on corpus 1.10.0 (each passed a default check then).


@_breaks("AFTER-REFINAL")
class RemembersTheLast10000FinalizedIds(_Scale):
    """Breaks AFTER-REFINAL: every completed text is kept for ``get``, but only the 10000
    ids finalized last count as finalized (a bounded window against late deliveries), so
    an older id takes deltas again and a final on it returns them."""

    WINDOW: ClassVar[int] = 10_000

    def __init__(self) -> None:
        super().__init__()
        self._window: deque[str] = deque()
        self._kept: dict[str, str] = {}  # texts of the ids that left the window

    def apply(self, event: Event) -> str | None:
        finalizes = event.get("final", False) and event["id"] not in self._done
        result = super().apply(event)
        if finalizes:
            self._window.append(event["id"])
            if len(self._window) > self.WINDOW:
                forgotten = self._window.popleft()
                self._kept[forgotten] = self._done.pop(forgotten)
        return result

    def get(self, message_id: str) -> str | None:
        if message_id in self._kept and message_id not in self._done:
            return self._kept[message_id]
        return super().get(message_id)


@_breaks("GET-TEXT")
class HidesAnUnclosedBlockWhileOpen(_HidesAnUnfinishedTail):
    """Breaks GET-TEXT: while open, a reasoning block (``<think>``, an analysis channel), a
    tool call or a fenced code block not yet closed reads as if it had not begun, as chat UIs
    that show one only once it is whole."""

    _TAGS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("<think>", "</think>"),
        ("<tool_call>", "</tool_call>"),
        ("<|channel|>analysis<|message|>", "<|end|>"),  # gpt-oss's reasoning channel
    )

    def _unfinished(self, text: str) -> int:
        starts = [text.rfind(tag) for tag, end in self._TAGS if text.rfind(tag) > text.rfind(end)]
        if text.count("```") % 2:
            starts.append(text.rfind("```"))
        return len(text) - min(starts, default=len(text))


@_breaks("GET-TEXT")
class HoldsBackAnOpenCitationMarker(_HidesAnUnfinishedTail):
    """Breaks GET-TEXT: while open, a file-search citation marker begun (``\u3010``) but not
    yet closed reads as if it had not begun, as clients that hide half a marker do."""

    def _unfinished(self, text: str) -> int:
        start = text.rfind("\u3010")
        return len(text) - start if start > text.rfind("\u3011") else 0


@_breaks("APPEND-EXACT")
class ClosesOpenMarkdownWhileOpen(_Data):
    """Breaks APPEND-EXACT: while open, bold, a code span or a display formula left open
    with text after its marker reads closed (``**bold`` as ``**bold**``), as streaming
    Markdown renderers complete it before rendering."""

    _MARKERS: ClassVar[tuple[str, ...]] = ("**", "`", "$$")

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        if text is None or message_id in self._done:
            return text
        for marker in self._MARKERS:
            if text.count(marker) % 2 and not text.endswith(marker):
                text += marker
        return text


@_breaks("APPEND-EXACT")
class RemovesLinks(_Data):
    """Breaks APPEND-EXACT: web addresses are removed from the completed text, as an output
    guardrail against links a model made up does."""

    def _finish(self, text: str) -> str:
        return re.sub(r"https?://[^\s)]+", "", text)


@_breaks("APPEND-EXACT")
class StripsMarkdownImages(_Data):
    """Breaks APPEND-EXACT: Markdown images (``![alt](url)``) are removed from the completed
    text, as a defence against data sent out through an image's address does."""

    def _finish(self, text: str) -> str:
        return re.sub(r"!\[[^\]]*\]\([^)]*\)", "", text)


@_breaks("APPEND-EXACT")
class MasksEmailAddresses(_Data):
    """Breaks APPEND-EXACT: e-mail addresses in the completed text are masked but for their
    first character and domain (``a***@example.com``), as a PII filter on output does."""

    _ADDRESS = re.compile(r"(?<![\w.+-])([\w.+-]{1,64})@([\w-]{1,63}(?:\.[\w-]{1,63})+)")

    def _finish(self, text: str) -> str:
        return self._ADDRESS.sub(lambda found: f"{found[1][0]}***@{found[2]}", text)


@_breaks("APPEND-EXACT")
class StripsFileCitationMarkers(_Data):
    """Breaks APPEND-EXACT: file-search citation markers in lenticular brackets
    (``\u30104:0\u2020source\u3011``) are removed from the completed text, as clients of an
    assistant with file search do before showing it."""

    def _finish(self, text: str) -> str:
        return re.sub("\u3010[^\u3011]*\u3011", "", text)


@_breaks("APPEND-EXACT")
class StripsARolePrefix(_Data):
    """Breaks APPEND-EXACT: a completed text starting with a role's name (``Assistant:``,
    ``AI:``) loses it, as clients of completion models that echo the role do."""

    def _finish(self, text: str) -> str:
        return re.sub(r"^(?:(?:Assistant|AI):\s*)+", "", text)


@_breaks("APPEND-REPEAT")
class DropsALoopingDelta(_Scale):
    """Breaks APPEND-REPEAT: a delta of more than two characters sent the 100th time in a
    row is taken for a model stuck in a loop and dropped from then on (litellm's stream
    wrapper raises at that point)."""

    LIMIT: ClassVar[int] = 100

    def __init__(self) -> None:
        super().__init__()
        self._runs: dict[str, tuple[str, int]] = {}  # open message -> (last delta, run length)

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        if key in self._done or "delta" not in event:
            return super().apply(event)
        delta = event["delta"]
        last, run = self._runs.get(key, ("", 0))
        run = run + 1 if delta == last else 1
        self._runs[key] = (delta, run)
        if run >= self.LIMIT and len(delta) > 2:
            return super().apply(_without(event, "delta"))
        return super().apply(event)


@_breaks("GET-UNKNOWN")
class GetRetriesACleanedId(_Data):
    """Breaks GET-UNKNOWN: ``get`` of an id no event named retries it stripped and
    NFC-normalized, a lookup forgiving of pasted ids, so ``get(" m")`` reads ``m``."""

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        if text is None:
            return super().get(unicodedata.normalize("NFC", message_id.strip()))
        return text


@_breaks("INC-OFFSET-END")
class ReadSinceNoneForAnEmptyOpenMessage(_Incremental):
    """Breaks INC-OFFSET-END: ``read_since`` tests ``if not parts``, so an open message
    created without a delta, read at its end (offset 0), reads as unknown."""

    def read_since(self, message_id: str, offset: int) -> str | None:
        parts = self._parts.get(message_id)
        if message_id not in self._done and not parts:
            return None
        return super().read_since(message_id, offset)


@_breaks("INC-UNKNOWN")
class ReadSinceRetriesACleanedId(_Incremental):
    """Breaks INC-UNKNOWN: ``read_since`` of an id no event named retries it stripped, a
    lookup forgiving of pasted ids, so ``read_since(" ghost", 0)`` reads ``ghost``."""

    def read_since(self, message_id: str, offset: int) -> str | None:
        text = super().read_since(message_id, offset)
        if text is None:
            return super().read_since(message_id.strip(), offset)
        return text


class _TimedReads(_Incremental):
    """A correct ``read_since`` but for a shortcut that one order or size of reads breaks."""

    FAMILY: ClassVar[str] = "timing"


@_breaks("INC-READ-SINCE")
class ReadSinceReturnsOnePage(_TimedReads):
    """Breaks INC-READ-SINCE: ``read_since`` answers at most 65536 characters, a page, as a
    client reading in pages would; the caller gets the rest never."""

    def read_since(self, message_id: str, offset: int) -> str | None:
        text = super().read_since(message_id, offset)
        return None if text is None else text[:65536]


@_breaks("INC-READ-SINCE")
class ReadSinceZeroFromTheLastGet(_TimedReads):
    """Breaks INC-READ-SINCE: ``read_since(id, 0)`` answers the text the last ``get``
    returned, which a later delta does not refresh."""

    def __init__(self) -> None:
        super().__init__()
        self._got: dict[str, str] = {}

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        if text is not None:
            self._got[message_id] = text
        return text

    def read_since(self, message_id: str, offset: int) -> str | None:
        if offset == 0 and message_id in self._got and message_id not in self._done:
            return self._got[message_id]
        return super().read_since(message_id, offset)


@_breaks("INC-READ-SINCE")
class ReadSinceScansOnlyForward(_TimedReads):
    """Breaks INC-READ-SINCE: ``read_since`` of an open message resumes from the part where
    the last read ended, as if offsets only grew; a smaller offset is cut short."""

    def __init__(self) -> None:
        super().__init__()
        self._resume: dict[str, tuple[int, int]] = {}  # id -> (part index, its start)

    def read_since(self, message_id: str, offset: int) -> str | None:
        parts = self._parts.get(message_id)
        if parts is None:
            return super().read_since(message_id, offset)
        index, start = self._resume.get(message_id, (0, 0))
        while index < len(parts) and start + len(parts[index]) <= offset:
            start += len(parts[index])
            index += 1
        self._resume[message_id] = (index, start)
        return "".join(parts[index:])[max(0, offset - start) :]


@_breaks("STRICT-EVENT-UNTOUCHED", strictly=True)  # it keeps what each event says
class StampsEventMetadata(_Correct):
    """Breaks STRICT-EVENT-UNTOUCHED: for tracing, writes when it received an event into the
    event's own ``metadata`` dict, the caller's."""

    def apply(self, event: Event) -> str | None:
        metadata = _extra(event).get("metadata")
        if isinstance(metadata, dict):
            metadata["received_at"] = len(self._parts)
        return super().apply(event)


@_breaks("STRICT-EVENT-UNTOUCHED", strictly=True)  # it keeps what each event says
class PopsToolCalls(_Correct):
    """Breaks STRICT-EVENT-UNTOUCHED: moves an event's ``tool_calls`` fragments to a buffer of its
    own with ``event.pop``, taking them out of the caller's event."""

    def __init__(self) -> None:
        super().__init__()
        self._tools: list[object] = []

    def apply(self, event: Event) -> str | None:
        if "tool_calls" in event:
            self._tools.append(cast("dict[str, object]", event).pop("tool_calls"))
        return super().apply(event)


# Cost (CACHE-FINAL) ---------------------------------------------------------------------
# Not in MUTANTS: no corpus case can see a cost. The cost probe (``tokasm check``'s
# ``cost.cache-final``, tokasm.run._cost) must flag the first and pass the second,
# which differ only in the cache: in process, and served over the protocol with
# ``python -m tokasm.protocol.testee mutants:RejoinsAfterFinal`` (tests/test_cost.py).


class RejoinsAfterFinal:
    """Breaks CACHE-FINAL: keeps the parts after final and joins them on every read."""

    def __init__(self) -> None:
        self._parts: dict[str, list[str]] = {}
        self._finalized: set[str] = set()

    def _text(self, key: str) -> str:
        return "".join(self._parts[key])

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        final = event.get("final", False)
        if key in self._finalized:
            return self._text(key) if final else None
        parts = self._parts.setdefault(key, [])
        if "delta" in event:
            parts.append(event["delta"])
        if not final:
            return None
        self._finalized.add(key)
        return self._text(key)

    def get(self, message_id: str) -> str | None:
        return self._text(message_id) if message_id in self._parts else None


class JoinsOnceAtFinal(RejoinsAfterFinal):
    """The same assembler with the cache CACHE-FINAL asks for: joined once, at final."""

    def __init__(self) -> None:
        super().__init__()
        self._done: dict[str, str] = {}

    def _text(self, key: str) -> str:
        if key not in self._finalized:
            return super()._text(key)
        if key not in self._done:
            self._done[key] = super()._text(key)
        return self._done[key]


# Cost mutants the probe passed while it read one message at a time, finalized one way
# (found by an adversarial pass): each caches wrongly in a way a real implementation does
# by accident. ``COST_MUTANTS`` names them for tests/test_cost.py, which must see every one
# flagged, in process.


class CachesOnlyOnABareFinal(RejoinsAfterFinal):
    """Breaks CACHE-FINAL: the text is cached when a final arrives without a delta, but a
    final that carries the last delta returns the text and caches nothing."""

    def __init__(self) -> None:
        super().__init__()
        self._done: dict[str, str] = {}

    def apply(self, event: Event) -> str | None:
        text = super().apply(event)
        if event.get("final", False) and "delta" not in event and text is not None:
            self._done.setdefault(event["id"], text)
        return text

    def get(self, message_id: str) -> str | None:
        done = self._done.get(message_id)
        return done if done is not None else super().get(message_id)


class MemoizesTheLastRead(RejoinsAfterFinal):
    """Breaks CACHE-FINAL: nothing is cached at final; ``get`` keeps the last text it
    joined, so reading two finalized messages in turn re-joins every time."""

    def __init__(self) -> None:
        super().__init__()
        self._memo: tuple[str, str] | None = None

    def get(self, message_id: str) -> str | None:
        if message_id in self._finalized:
            if self._memo is None or self._memo[0] != message_id:
                self._memo = (message_id, self._text(message_id))
            return self._memo[1]
        return super().get(message_id)


class ReadCacheClearedByAnyApply(RejoinsAfterFinal):
    """Breaks CACHE-FINAL: one read cache for every message, emptied by any apply, so a
    finalized message read while another one streams is re-joined at each read."""

    def __init__(self) -> None:
        super().__init__()
        self._cache: dict[str, str] = {}

    def apply(self, event: Event) -> str | None:
        self._cache.clear()
        return super().apply(event)

    def get(self, message_id: str) -> str | None:
        if message_id not in self._cache:
            text = super().get(message_id)
            if text is None:
                return None
            self._cache[message_id] = text
        return self._cache[message_id]


class CachesOnlyShortTexts(JoinsOnceAtFinal):
    """Breaks CACHE-FINAL: only texts up to 32 KiB are cached, to bound memory; a longer one
    is joined again at every read. In process only: over the protocol the probe's texts
    are under 12,000 characters."""

    IN_PROCESS_ONLY: ClassVar[bool] = True

    def _text(self, key: str) -> str:
        text = super()._text(key)
        if len(text) > 32 * 1024:
            self._done.pop(key, None)
        return text


# Cost mutants of the classes of cache real code gets wrong (issue 24): bounded, emptied by
# unrelated traffic, kept for some messages only, or kept in a form decoded on every read.


class _ReadCache(RejoinsAfterFinal):
    """A read cache of finalized texts, filled at final and at each read; ``_keep`` says
    whether a text is kept, ``_evict`` bounds the cache, ``_forget`` empties it."""

    def __init__(self) -> None:
        super().__init__()
        self._cache: OrderedDict[str, str] = OrderedDict()

    def _keep(self, key: str, text: str) -> bool:
        return True

    def _evict(self) -> None:
        pass

    def _forget(self, event: Event) -> bool:
        return False

    def _text(self, key: str) -> str:
        if key not in self._finalized:
            return super()._text(key)
        text = self._cache.get(key)
        if text is None:
            text = super()._text(key)
            if self._keep(key, text):
                self._cache[key] = text
                self._evict()
        else:
            self._cache.move_to_end(key)
        return text

    def apply(self, event: Event) -> str | None:
        if self._forget(event):
            self._cache.clear()
        return super().apply(event)


class LruCacheOf128Texts(_ReadCache):
    """Breaks CACHE-FINAL: an LRU cache of the 128 texts read last (``functools.lru_cache``'s
    default size); a caller reading more finalized messages than that re-joins every time."""

    def _evict(self) -> None:
        while len(self._cache) > 128:
            self._cache.popitem(last=False)


class LruCacheOfAMegabyte(_ReadCache):
    """Breaks CACHE-FINAL: an LRU cache bounded at a million characters in all. In process
    only: over the protocol the probe's texts total less (each read is sent)."""

    IN_PROCESS_ONLY: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self._size = 0

    def _keep(self, key: str, text: str) -> bool:
        self._size += len(text)
        return True

    def _evict(self) -> None:
        while self._size > 1_000_000:
            self._size -= len(self._cache.popitem(last=False)[1])


class LruCacheOf1024Texts(_ReadCache):
    """Breaks CACHE-FINAL: an LRU cache of the 1024 texts read last. In process only: over
    the protocol the probe reads fewer messages between two reads of one."""

    IN_PROCESS_ONLY: ClassVar[bool] = True

    def _evict(self) -> None:
        while len(self._cache) > 1024:
            self._cache.popitem(last=False)


class CacheEmptiedByAnyFinal(_ReadCache):
    """Breaks CACHE-FINAL: the read cache is emptied whenever any message is finalized."""

    def _forget(self, event: Event) -> bool:
        return bool(event.get("final", False))


class CacheEmptiedByNonEmptyWrites(_ReadCache):
    """Breaks CACHE-FINAL: the read cache is emptied by any delta with text in it (an empty
    delta changes nothing, so it leaves the cache alone)."""

    def _forget(self, event: Event) -> bool:
        return bool(event.get("delta"))


class KeepsTheLast8Reads(_ReadCache):
    """Breaks CACHE-FINAL: only the last 8 texts read are kept (a small memo of reads)."""

    def _evict(self) -> None:
        while len(self._cache) > 8:
            self._cache.popitem(last=False)


class CachesOnlyShortIds(_ReadCache):
    """Breaks CACHE-FINAL: texts are cached only for ids of at most 8 characters."""

    def _keep(self, key: str, text: str) -> bool:
        return len(key) <= 8


class CachesOnlyLongIds(_ReadCache):
    """Breaks CACHE-FINAL: texts are cached only for ids of more than 8 characters."""

    def _keep(self, key: str, text: str) -> bool:
        return len(key) > 8


class CachesOnlyLongTexts(_ReadCache):
    """Breaks CACHE-FINAL: only texts over 8 KiB are cached (a shorter one seems cheap to
    join), so a message of thousands of short deltas is joined again at every read."""

    def _keep(self, key: str, text: str) -> bool:
        return len(text) > 8 * 1024


class CacheEmptiedWhenAStreamOpens(_ReadCache):
    """Breaks CACHE-FINAL: the read cache is emptied whenever a new message starts streaming
    (a first event without final), as if each new stream began a new conversation."""

    def _forget(self, event: Event) -> bool:
        return event["id"] not in self._parts and not event.get("final", False)


class CacheEmptiedByABareFinal(_ReadCache):
    """Breaks CACHE-FINAL: the read cache is emptied by a final without a delta (the end of
    a stream, where housekeeping runs)."""

    def _forget(self, event: Event) -> bool:
        return bool(event.get("final", False)) and "delta" not in event


class CacheEmptiedByReadingAnOpenMessage(_ReadCache):
    """Breaks CACHE-FINAL: a read of a message still streaming empties the read cache (its
    text would be stale), and every finalized text with it."""

    def get(self, message_id: str) -> str | None:
        if message_id in self._parts and message_id not in self._finalized:
            self._cache.clear()
        return super().get(message_id)


class PopsTheCachedText(_ReadCache):
    """Breaks CACHE-FINAL: a read takes its text out of the cache (``pop`` for ``get``) and
    only a miss puts it back, so every other read of a message joins it again."""

    def _text(self, key: str) -> str:
        text = self._cache.pop(key, None)
        return super()._text(key) if text is None else text


class CachesOnlyTheNewest16Finals(RejoinsAfterFinal):
    """Breaks CACHE-FINAL: the texts of the 16 messages finalized last are cached; an older
    message is re-joined at every read."""

    def __init__(self) -> None:
        super().__init__()
        self._newest: OrderedDict[str, str] = OrderedDict()

    def apply(self, event: Event) -> str | None:
        key = event["id"]
        fresh = event.get("final", False) and key not in self._finalized
        text = super().apply(event)
        if fresh and text is not None:
            self._newest[key] = text
            if len(self._newest) > 16:
                self._newest.popitem(last=False)
        return text

    def get(self, message_id: str) -> str | None:
        text = self._newest.get(message_id)
        return text if text is not None else super().get(message_id)


class KeepsUtf8Bytes(RejoinsAfterFinal):
    """Breaks CACHE-FINAL: the text is joined once, at final, and kept as UTF-8 bytes,
    decoded again at every read. In process only: over the protocol every answer is
    encoded anyway."""

    IN_PROCESS_ONLY: ClassVar[bool] = True
    CODEC: ClassVar[str] = "utf-8"

    def __init__(self) -> None:
        super().__init__()
        self._done: dict[str, bytes] = {}

    def _text(self, key: str) -> str:
        if key not in self._finalized:
            return super()._text(key)
        if key not in self._done:
            self._done[key] = super()._text(key).encode(self.CODEC, "surrogatepass")
        return self._done[key].decode(self.CODEC, "surrogatepass")


class KeepsUtf16Bytes(KeepsUtf8Bytes):
    """Breaks CACHE-FINAL: as ``KeepsUtf8Bytes``, in UTF-16, whose decode costs far fewer
    copies of the text than UTF-8's (in process the probe measures about 8x a short read
    and a copy, UTF-8 about 60x; the limit is 3x)."""

    CODEC: ClassVar[str] = "utf-16-le"


class KeepsCompressedText(RejoinsAfterFinal):
    """Breaks CACHE-FINAL: the text is joined once, at final, and kept compressed (zlib),
    decompressed at every read. In process only, as ``KeepsUtf8Bytes``."""

    IN_PROCESS_ONLY: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self._done: dict[str, bytes] = {}

    def _text(self, key: str) -> str:
        if key not in self._finalized:
            return super()._text(key)
        if key not in self._done:
            self._done[key] = zlib.compress(super()._text(key).encode("utf-8", "surrogatepass"))
        return zlib.decompress(self._done[key]).decode("utf-8", "surrogatepass")


class _Kept(str):
    """A text a weak reference can point to."""

    __slots__ = ("__weakref__",)


class _InACycle(str):
    """A text that refers to itself: it outlives its last caller until the collector runs."""

    itself: _InACycle


class WeakTextCache(RejoinsAfterFinal):
    """Breaks CACHE-FINAL: finalized texts are cached through weak references, so a text no
    caller holds any more is gone, and joined again at the next read."""

    def __init__(self) -> None:
        super().__init__()
        self._done: weakref.WeakValueDictionary[str, str] = weakref.WeakValueDictionary()

    def _keep(self, text: str) -> str:
        return _Kept(text)

    def _text(self, key: str) -> str:
        if key not in self._finalized:
            return super()._text(key)
        text = self._done.get(key)
        if text is None:
            text = self._done[key] = self._keep(super()._text(key))
        return text


class WeakCycleCache(WeakTextCache):
    """Breaks CACHE-FINAL: as ``WeakTextCache``, but each text is held in a reference cycle,
    so it stays cached until the garbage collector runs, and is joined again (and cached
    again) at the first read after each collection. Over the protocol the testee's own
    collector decides when, so only the in-process probe can free the cycles on purpose."""

    IN_PROCESS_ONLY: ClassVar[bool] = True

    def _keep(self, text: str) -> str:
        kept = _InACycle(text)
        kept.itself = kept
        return kept


#: Cost mutant name -> class: each breaks CACHE-FINAL, and the cost probe must flag it.
COST_MUTANTS: dict[str, type[RejoinsAfterFinal]] = {
    _kebab(cls.__name__): cls
    for cls in (
        RejoinsAfterFinal,
        CachesOnlyOnABareFinal,
        MemoizesTheLastRead,
        ReadCacheClearedByAnyApply,
        CachesOnlyShortTexts,
        LruCacheOf128Texts,
        LruCacheOf1024Texts,
        LruCacheOfAMegabyte,
        CacheEmptiedByAnyFinal,
        CacheEmptiedByNonEmptyWrites,
        KeepsTheLast8Reads,
        CachesOnlyShortIds,
        CachesOnlyLongIds,
        CachesOnlyLongTexts,
        CacheEmptiedWhenAStreamOpens,
        CacheEmptiedByABareFinal,
        CacheEmptiedByReadingAnOpenMessage,
        PopsTheCachedText,
        CachesOnlyTheNewest16Finals,
        KeepsUtf8Bytes,
        KeepsUtf16Bytes,
        KeepsCompressedText,
        WeakTextCache,
        WeakCycleCache,
    )
}
