"""Correct assemblers built in unusual ways, which the kit must keep passing.

A kit that fails a correct implementation because of how it is built (a
container type, closures, a storage encoding, a ``str`` subclass, copies of
every event) is as
wrong as one that passes a buggy one. ``UNUSUAL`` maps a short name to a
zero-argument factory; ``tests/test_unusual.py`` checks each one conforms
through ``tokasm check`` with its defaults, so every class here must be right
on every case, the stress cases included, at a reasonable cost.

Only the standard library is imported, so the file can be copied anywhere.
"""

from __future__ import annotations

import copy
import re
import sys
import unicodedata
from array import array
from collections.abc import Callable, Generator, Mapping
from types import SimpleNamespace
from typing import Any, cast
from urllib.parse import quote, unquote

__all__ = ["UNUSUAL"]

_Event = Mapping[str, Any]


class _Messages(dict[str, list[str]]):
    """Open message -> parts; a missing message is created on first write only."""

    def __missing__(self, message_id: str) -> list[str]:
        parts = self[message_id] = []
        return parts


class DictSubclassStore:
    """Open parts in a ``dict`` subclass with ``__missing__``, texts in another mapping."""

    def __init__(self) -> None:
        self._open = _Messages()
        self._done: dict[str, str] = {}

    def apply(self, event: _Event) -> str | None:
        message_id = event["id"]
        if message_id in self._done:
            return self._done[message_id] if event.get("final", False) else None
        parts = self._open[message_id]  # creates the message (CREATE)
        if "delta" in event:
            parts.append(event["delta"])
        if not event.get("final", False):
            return None
        text = self._done[message_id] = "".join(self._open.pop(message_id))
        return text

    def get(self, message_id: str) -> str | None:
        if message_id in self._done:
            return self._done[message_id]
        parts = self._open.get(message_id)  # .get, never [], so reading creates nothing
        return None if parts is None else "".join(parts)


def closure_assembler() -> SimpleNamespace:
    """No class at all: ``apply`` and ``get`` are closures over two local dicts."""
    parts: dict[str, list[str]] = {}
    done: dict[str, str] = {}

    def apply(event: _Event) -> str | None:
        message_id = event["id"]
        if message_id in done:
            return done[message_id] if event.get("final", False) else None
        pending = parts.setdefault(message_id, [])
        if "delta" in event:
            pending.append(event["delta"])
        if not event.get("final", False):
            return None
        done[message_id] = "".join(parts.pop(message_id))
        return done[message_id]

    def get(message_id: str) -> str | None:
        if message_id in done:
            return done[message_id]
        pending = parts.get(message_id)
        return None if pending is None else "".join(pending)

    return SimpleNamespace(apply=apply, get=get)


_UTF32 = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"


class Utf32ArrayStore:
    """Each open message is an ``array('I')`` of code points (UTF-32), decoded on read.

    ``surrogatepass`` keeps lone surrogates, so even the surrogates profile passes.
    """

    def __init__(self) -> None:
        self._open: dict[str, array[int]] = {}
        self._done: dict[str, str] = {}

    def apply(self, event: _Event) -> str | None:
        message_id = event["id"]
        if message_id in self._done:
            return self._done[message_id] if event.get("final", False) else None
        units = self._open.setdefault(message_id, array("I"))
        if "delta" in event:
            units.frombytes(event["delta"].encode(_UTF32, "surrogatepass"))
        if not event.get("final", False):
            return None
        text = self._done[message_id] = self._decode(self._open.pop(message_id))
        return text

    @staticmethod
    def _decode(units: array[int]) -> str:
        return units.tobytes().decode(_UTF32, "surrogatepass")

    def get(self, message_id: str) -> str | None:
        if message_id in self._done:
            return self._done[message_id]
        units = self._open.get(message_id)
        return None if units is None else self._decode(units)


def _message() -> Generator[str, str | None, None]:
    """One open message as a coroutine: send a delta to append, send None to read."""
    parts: list[str] = []
    text = ""
    while True:
        delta = yield text
        if delta is None:
            text = "".join(parts)
        else:
            parts.append(delta)


class GeneratorPerMessage:
    """Every open message is a running generator; finalizing reads it and closes it."""

    def __init__(self) -> None:
        self._open: dict[str, Generator[str, str | None, None]] = {}
        self._done: dict[str, str] = {}

    def apply(self, event: _Event) -> str | None:
        message_id = event["id"]
        if message_id in self._done:
            return self._done[message_id] if event.get("final", False) else None
        message = self._open.get(message_id)
        if message is None:
            message = self._open[message_id] = _message()
            next(message)  # run to the first yield
        if "delta" in event:
            message.send(event["delta"])
        if not event.get("final", False):
            return None
        text = self._done[message_id] = message.send(None)
        self._open.pop(message_id).close()
        return text

    def get(self, message_id: str) -> str | None:
        if message_id in self._done:
            return self._done[message_id]
        message = self._open.get(message_id)
        return None if message is None else message.send(None)


class TupleSnapshots:
    """Keeps a log of every event as an immutable ``(id, delta, final)`` tuple; reads replay it."""

    def __init__(self) -> None:
        self._log: dict[str, list[tuple[str, str | None, bool]]] = {}
        self._done: dict[str, str] = {}

    def apply(self, event: _Event) -> str | None:
        snapshot = (event["id"], event.get("delta"), bool(event.get("final", False)))
        message_id, _, final = snapshot
        if message_id in self._done:
            return self._done[message_id] if final else None
        self._log.setdefault(message_id, []).append(snapshot)
        if not final:
            return None
        text = self._done[message_id] = self._replay(self._log.pop(message_id))
        return text

    @staticmethod
    def _replay(log: list[tuple[str, str | None, bool]]) -> str:
        return "".join(delta for _, delta, _ in log if delta is not None)

    def get(self, message_id: str) -> str | None:
        if message_id in self._done:
            return self._done[message_id]
        log = self._log.get(message_id)
        return None if log is None else self._replay(log)


class Text(str):
    """A ``str`` subclass, as a rich-text or tracing library might return."""

    __slots__ = ()


class ReturnsStrSubclass(DictSubclassStore):
    """Answers every text as a ``Text`` (a ``str`` subclass); None stays None."""

    def apply(self, event: _Event) -> str | None:
        text = super().apply(event)
        return None if text is None else Text(text)

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        return None if text is None else Text(text)


class CopiesEachEvent(DictSubclassStore):
    """Deep-copies each event, then merges it over its defaults, as a defensive caller of
    its own would: correct (EVENT-OWNED allows any copy), whatever mapping it was sent."""

    def apply(self, event: _Event) -> str | None:
        own: dict[str, Any] = {"final": False} | dict(copy.deepcopy(event))
        return super().apply(own)


class InternsIds(DictSubclassStore):
    """Interns every id (``sys.intern`` takes an exact ``str`` only), as a store keyed by
    many repeated ids may: correct for the seed's events, dicts of plain strings (the
    ``mappings`` profile, which lends ``str`` subclasses, is optional)."""

    def apply(self, event: _Event) -> str | None:
        return super().apply({**event, "id": sys.intern(event["id"])})


class HoldsARenderTail(DictSubclassStore):
    """Keeps an open message's trailing Markdown, TeX and escape markers (``*_`~$[\\&``)
    apart, as a renderer waiting for their other half would, and adds them back to every
    read and at final: correct, as holding back is for display and reads see everything."""

    _MARKERS = "*_`~$[\\&"

    def __init__(self) -> None:
        super().__init__()
        self._tails: dict[str, str] = {}

    def apply(self, event: _Event) -> str | None:
        message_id = event["id"]
        if message_id in self._done or "delta" not in event:
            if event.get("final", False) and message_id not in self._done:
                event = {**event, "delta": self._tails.pop(message_id, "")}
            return super().apply(event)
        text = self._tails.pop(message_id, "") + event["delta"]
        if not event.get("final", False):
            kept = text.rstrip(self._MARKERS)
            text, self._tails[message_id] = kept, text[len(kept) :]
        return super().apply({**event, "delta": text})

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        return None if text is None else text + self._tails.get(message_id, "")


class PercentEncodedParts(DictSubclassStore):
    """Stores every delta percent-encoded (UTF-8, lone surrogates passed through) and decodes
    the joined parts on each read: a storage encoding whose decoder sees text that looks
    encoded, tokenizer markers and escapes, and must give each back as it was sent."""

    def apply(self, event: _Event) -> str | None:
        message_id = event["id"]
        if message_id in self._done:
            return super().apply(event)
        if "delta" in event:
            event = {**event, "delta": quote(event["delta"], safe="", errors="surrogatepass")}
        text = super().apply(event)
        if text is not None:  # just finalized: its parts were joined still encoded
            text = self._done[message_id] = unquote(text, errors="surrogatepass")
        return text

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        if text is None or message_id in self._done:
            return text
        return unquote(text, errors="surrogatepass")


class HexKeyedIds(DictSubclassStore):
    """Keys each message by the hex of its id's UTF-8 (lone surrogates passed through): a
    hex key store that keeps ids exact, letter case included."""

    @staticmethod
    def _hex(message_id: str) -> str:
        return message_id.encode("utf-8", "surrogatepass").hex()

    def apply(self, event: _Event) -> str | None:
        return super().apply({**event, "id": self._hex(event["id"])})

    def get(self, message_id: str) -> str | None:
        return super().get(self._hex(message_id))


class SweepsEmptyTextsToASet(DictSubclassStore):
    """Every 1024 events, moves the finalized messages whose text is empty out of the text
    table into a set of ids, to keep that table small: correct, as a message in the set is
    still finalized and still reads as ``""``."""

    def __init__(self) -> None:
        super().__init__()
        self._events = 0
        self._empty: set[str] = set()

    def apply(self, event: _Event) -> str | None:
        self._events += 1
        if self._events % 1024 == 0:
            self._empty |= {key for key, text in self._done.items() if not text}
            self._done = {key: text for key, text in self._done.items() if text}
        if event["id"] in self._empty:
            return "" if event.get("final", False) else None
        return super().apply(event)

    def get(self, message_id: str) -> str | None:
        return "" if message_id in self._empty else super().get(message_id)


class KeepsProviderMetadata(DictSubclassStore):
    """Keeps a deep copy of each message's extra keys (``finish_reason``, ``usage``, ``type``,
    ``tool_calls``...) for a ``metadata`` read of its own, as an SDK adapter does: correct,
    as extra keys may be read and kept while the text ignores them (EVT-EXTRA-KEYS), and a
    copy is not the caller's event (EVENT-OWNED)."""

    def __init__(self) -> None:
        super().__init__()
        self._metadata: dict[str, dict[str, Any]] = {}

    def apply(self, event: _Event) -> str | None:
        extra = {key: value for key, value in event.items() if key not in ("id", "delta", "final")}
        if extra:
            self._metadata.setdefault(event["id"], {}).update(copy.deepcopy(extra))
        return super().apply(event)

    def metadata(self, message_id: str) -> dict[str, Any]:
        return dict(self._metadata.get(message_id, {}))


class ArchivesFinishedTexts(DictSubclassStore):
    """Every 1024 finals, freezes the completed texts into a tuple, each id keeping where
    its text is, to keep the text table small: correct, as an archived message is still
    finalized (deltas ignored, a final answers its text) and reads back whole."""

    _BATCH = 1024

    def __init__(self) -> None:
        super().__init__()
        self._batches: list[tuple[str, ...]] = []
        self._where: dict[str, tuple[int, int]] = {}  # id -> (batch, index in it)

    def _archived(self, message_id: str) -> str | None:
        where = self._where.get(message_id)
        return None if where is None else self._batches[where[0]][where[1]]

    def apply(self, event: _Event) -> str | None:
        archived = self._archived(event["id"])
        if archived is not None:
            return archived if event.get("final", False) else None
        text = super().apply(event)
        if len(self._done) >= self._BATCH:
            batch = len(self._batches)
            self._where |= {message_id: (batch, i) for i, message_id in enumerate(self._done)}
            self._batches.append(tuple(self._done.values()))
            self._done = {}
        return text

    def get(self, message_id: str) -> str | None:
        archived = self._archived(message_id)
        return super().get(message_id) if archived is None else archived


class BucketsLookalikeIds:
    """Files each message under its id stripped, case-folded and NFC-normalized, in a
    bucket (an assembler of its own) that keeps the exact ids apart, as a store grouping
    lookalike ids to report them would: correct, as reading (``get``, ``read_since``) still
    needs the exact id."""

    def __init__(self) -> None:
        self._buckets: dict[str, DictSubclassStore] = {}

    @staticmethod
    def _bucket_key(message_id: str) -> str:
        return unicodedata.normalize("NFC", message_id.strip().casefold())

    def apply(self, event: _Event) -> str | None:
        bucket = self._buckets.setdefault(self._bucket_key(event["id"]), DictSubclassStore())
        return bucket.apply(event)

    def get(self, message_id: str) -> str | None:
        bucket = self._buckets.get(self._bucket_key(message_id))
        return None if bucket is None else bucket.get(message_id)

    def read_since(self, message_id: str, offset: int) -> str | None:
        text = self.get(message_id)
        return None if text is None else text[offset:]


class RunLengthParts:
    """Keeps each open message as runs of one repeated delta, ``[delta, count]``, as a
    store that compresses a looping model's output: correct, as every repeat counts."""

    def __init__(self) -> None:
        self._runs: dict[str, list[list[Any]]] = {}
        self._done: dict[str, str] = {}

    def apply(self, event: _Event) -> str | None:
        message_id = event["id"]
        if message_id in self._done:
            return self._done[message_id] if event.get("final", False) else None
        runs = self._runs.setdefault(message_id, [])
        if "delta" in event:
            if runs and runs[-1][0] == event["delta"]:
                runs[-1][1] += 1
            else:
                runs.append([event["delta"], 1])
        if not event.get("final", False):
            return None
        text = self._done[message_id] = self._join(self._runs.pop(message_id))
        return text

    @staticmethod
    def _join(runs: list[list[Any]]) -> str:
        return "".join(delta * count for delta, count in runs)

    def get(self, message_id: str) -> str | None:
        if message_id in self._done:
            return self._done[message_id]
        runs = self._runs.get(message_id)
        return None if runs is None else self._join(runs)


class LineBufferedStore:
    """Keeps each open message as its complete lines and the pieces of the line still open,
    as a renderer that lays out code blocks and reasoning line by line would: correct, as
    ``get`` gives the open line too, whatever block it is in."""

    def __init__(self) -> None:
        self._open: dict[str, tuple[list[str], list[str]]] = {}  # id -> (lines, open line)
        self._done: dict[str, str] = {}

    def apply(self, event: _Event) -> str | None:
        message_id = event["id"]
        if message_id in self._done:
            return self._done[message_id] if event.get("final", False) else None
        lines, pieces = self._open.setdefault(message_id, ([], []))
        pieces.append(event.get("delta", ""))
        if "\n" in pieces[-1]:
            *complete, rest = "".join(pieces).split("\n")
            lines += [line + "\n" for line in complete]
            pieces[:] = [rest]
        if not event.get("final", False):
            return None
        text = self._done[message_id] = self._text(*self._open.pop(message_id))
        return text

    @staticmethod
    def _text(lines: list[str], pieces: list[str]) -> str:
        return "".join(lines) + "".join(pieces)

    def get(self, message_id: str) -> str | None:
        if message_id in self._done:
            return self._done[message_id]
        message = self._open.get(message_id)
        return None if message is None else self._text(*message)


class IndexesLinks(DictSubclassStore):
    """Finds the web addresses and file-search citation markers of each completed text and
    keeps them for a ``links`` read of its own, as a client that previews them would:
    correct, as the text keeps them as sent."""

    _LINK = re.compile("https?://[^\\s)\\]>]+|\u3010[^\u3011]*\u3011")

    def __init__(self) -> None:
        super().__init__()
        self._links: dict[str, list[str]] = {}

    def apply(self, event: _Event) -> str | None:
        text = super().apply(event)
        if text is not None and event["id"] not in self._links:
            self._links[event["id"]] = self._LINK.findall(text)
        return text

    def links(self, message_id: str) -> list[str]:
        return list(self._links.get(message_id, []))


class CachesAtFirstRead:
    """Joins a message's parts at final only to answer it, and caches the completed text at
    its first read: correct, as the seed asks to avoid *repeated* joins after finalization
    (CACHE-FINAL). It names its parameters its own way, as the seed's names are not part of
    the interface (``apply(event)``, ``get(message_id)``)."""

    def __init__(self) -> None:
        self._parts: dict[str, list[str]] = {}
        self._finalized: set[str] = set()
        self._cache: dict[str, str] = {}

    def apply(self, chunk: _Event) -> str | None:
        key = chunk["id"]
        if key in self._finalized:
            return self.get(key) if chunk.get("final", False) else None
        parts = self._parts.setdefault(key, [])
        if "delta" in chunk:
            parts.append(chunk["delta"])
        if not chunk.get("final", False):
            return None
        self._finalized.add(key)
        return "".join(parts)

    def get(self, key: str) -> str | None:
        if key in self._cache:
            return self._cache[key]
        parts = self._parts.get(key)
        if parts is None:
            return None
        text = "".join(parts)
        if key in self._finalized:
            self._cache[key] = text
            del self._parts[key]
        return text


class ScansOneLog:
    """Every delta of the instance in one log of ``(id, delta)``, never released; a read of
    an open message scans all of it, and every event looks its id up in a list of the
    finalized ids: correct and slow, as the seed sets no cost but caching completed texts
    (reads during streaming "can still make total work quadratic")."""

    def __init__(self) -> None:
        self._log: list[tuple[str, str]] = []
        self._known: set[str] = set()
        self._finalized: list[str] = []
        self._done: dict[str, str] = {}

    def _scan(self, message_id: str) -> str:
        return "".join(delta for key, delta in self._log if key == message_id)

    def apply(self, event: _Event) -> str | None:
        message_id = event["id"]
        if message_id in self._finalized:
            return self._done[message_id] if event.get("final", False) else None
        self._known.add(message_id)
        if "delta" in event:
            self._log.append((message_id, event["delta"]))
        if not event.get("final", False):
            return None
        self._finalized.append(message_id)
        text = self._done[message_id] = self._scan(message_id)
        return text

    def get(self, message_id: str) -> str | None:
        if message_id in self._done:
            return self._done[message_id]
        return self._scan(message_id) if message_id in self._known else None


class FillsInEventDefaults(DictSubclassStore):
    """Fills in the caller's event (``final: False``, ``delta: ""``) before reading it: the
    seed forbids no change that keeps what an event says (EVENT-OWNED; the strict profile's
    STRICT-EVENT-UNTOUCHED asks for none at all)."""

    def apply(self, event: _Event) -> str | None:
        fields = cast("dict[str, Any]", event)
        fields.setdefault("final", False)
        fields.setdefault("delta", "")
        return super().apply(event)


class ReplaysDeltasSince(DictSubclassStore):
    """Offers ``read_since(message_id, count)``: the deltas after the first ``count``, as a
    list, for a client that reconnects mid-stream. The seed never names ``read_since``;
    this one is no claim of the incremental profile (INC-*), whose ``read_since`` returns
    text, so a default check must call it never."""

    def __init__(self) -> None:
        super().__init__()
        self._log: dict[str, list[str]] = {}

    def apply(self, event: _Event) -> str | None:
        if "delta" in event and event["id"] not in self._done:
            self._log.setdefault(event["id"], []).append(event["delta"])
        return super().apply(event)

    def read_since(self, message_id: str, count: int) -> list[str]:
        return self._log.get(message_id, [])[count:]


#: Name -> zero-argument factory of a correct, unusually built assembler.
UNUSUAL: dict[str, Callable[[], object]] = {
    "DictSubclassStore": DictSubclassStore,
    "closure_assembler": closure_assembler,
    "Utf32ArrayStore": Utf32ArrayStore,
    "GeneratorPerMessage": GeneratorPerMessage,
    "TupleSnapshots": TupleSnapshots,
    "ReturnsStrSubclass": ReturnsStrSubclass,
    "CopiesEachEvent": CopiesEachEvent,
    "InternsIds": InternsIds,
    "HoldsARenderTail": HoldsARenderTail,
    "PercentEncodedParts": PercentEncodedParts,
    "HexKeyedIds": HexKeyedIds,
    "SweepsEmptyTextsToASet": SweepsEmptyTextsToASet,
    "KeepsProviderMetadata": KeepsProviderMetadata,
    "ArchivesFinishedTexts": ArchivesFinishedTexts,
    "BucketsLookalikeIds": BucketsLookalikeIds,
    "RunLengthParts": RunLengthParts,
    "LineBufferedStore": LineBufferedStore,
    "IndexesLinks": IndexesLinks,
    "CachesAtFirstRead": CachesAtFirstRead,
    "ScansOneLog": ScansOneLog,
    "FillsInEventDefaults": FillsInEventDefaults,
    "ReplaysDeltasSince": ReplaysDeltasSince,
}
