"""How anything from a target is shown to a person: escaped and length-capped.

A target's texts may hold newlines, ANSI escapes or lone surrogates, or be 20 MB long,
and its ``__repr__`` may raise. Everything shown in the terminal or written to a report
goes through ``show`` (values, by ``repr``) or ``safe_text`` (names and messages), so one
target cannot garble the output, crash ``print`` or fill the disk.
"""

from __future__ import annotations

import itertools
import reprlib

__all__ = [
    "BLOCK_LIMIT",
    "SHOW_LIMIT",
    "TEXT_LIMIT",
    "abbreviated",
    "class_name",
    "error_text",
    "first_difference",
    "safe_block",
    "safe_text",
    "show",
    "type_name",
]

#: Characters of ``repr`` shown of one value before it is abbreviated in the middle.
SHOW_LIMIT = 120
#: Characters of a target's message (an error, a name) kept before it is abbreviated.
TEXT_LIMIT = 2000
#: Characters of a multi-line message (a case's explanation) kept in a report.
BLOCK_LIMIT = 10_000
_CONTEXT = 24  # characters either side of the first difference

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


class _Repr(reprlib.Repr):
    """reprlib's bounded repr, but a dict keeps its key order (an event reads as it was sent)."""

    def repr_dict(self, x: dict[object, object], level: int) -> str:
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        pieces = [
            f"{self.repr1(key, level - 1)}: {self.repr1(value, level - 1)}"
            for key, value in itertools.islice(x.items(), self.maxdict)
        ]
        return "{" + ", ".join(pieces + ["..."] * (len(x) > self.maxdict)) + "}"


# Containers are shown a few items deep, whatever their size, and any other object's
# ``repr`` is called inside reprlib's guard (it catches what ``__repr__`` raises).
_REPR = _Repr()
_REPR.maxlevel = 3
_REPR.maxdict = _REPR.maxlist = _REPR.maxtuple = _REPR.maxset = 8
_REPR.maxstring = _REPR.maxother = SHOW_LIMIT


def _escape(char: str) -> str:
    if char in _ESCAPES:
        return _ESCAPES[char]
    code = ord(char)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def _printable(text: str, keep: str = "") -> str:
    """``text`` with every non-printable character (controls, ANSI escapes, newlines, lone
    surrogates, bidi overrides) but those in ``keep`` written as its Python escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else _escape(c) for c in text)


def _base_text(value: str) -> str:
    """The characters of a ``str`` (or subclass) by ``str``'s own method, whatever it overrides."""
    return value if type(value) is str else str.__str__(value)


def _cut(text: str, limit: int, keep: str = "") -> str:
    """``text`` escaped and, when longer than ``limit``, abbreviated in the middle (cut
    before escaping, so a 20 MB text costs two slices, not a copy)."""
    if len(text) <= limit:
        return _printable(text, keep)
    half = limit // 2
    omitted = len(text) - 2 * half
    head, tail = _printable(text[:half], keep), _printable(text[-half:], keep)
    return f"{head}...[{omitted} characters]...{tail}"


def _plain_str(value: object) -> str:
    """``str(value)``, or a stand-in naming the type when its ``__str__`` raises."""
    if issubclass(type(value), str):  # by its real type: ``__class__`` may lie
        return _base_text(value)  # type: ignore[arg-type]
    try:
        return _base_text(str(value))
    except BaseException as error:
        return f"<{type_name(value)}: str() raised {class_name(type(error))}>"


def safe_text(value: object, limit: int = TEXT_LIMIT) -> str:
    """A target's text (a name, an error message) fit to print on one line of a report:
    escaped, at most about ``limit`` characters, never raising."""
    return _cut(_plain_str(value), limit)


def safe_block(value: object, limit: int = BLOCK_LIMIT) -> str:
    """A multi-line text (a case's message, a problem) fit for any report: as
    ``safe_text``, but its line breaks kept, at most about ``limit`` characters."""
    return _cut(_plain_str(value), limit, keep="\n")


def class_name(cls: type) -> str:
    """``cls``'s name, escaped (a class may be given any name)."""
    return _cut(str(cls.__name__), SHOW_LIMIT)


def type_name(value: object) -> str:
    """``module.Qualname`` of ``value``'s type, escaped (both are settable to anything)."""
    cls = type(value)
    module = str(cls.__module__)
    name = f"{module}.{cls.__qualname__}" if module != "builtins" else cls.__qualname__
    return _cut(str(name), SHOW_LIMIT)


def _repr(value: object) -> str:
    try:
        return str(_REPR.repr(value))
    except BaseException as error:
        return f"<{type_name(value)}: repr() raised {class_name(type(error))}>"


def show(value: object) -> str:
    """``repr`` of a value, escaped, abbreviated in the middle when long (with a text's length)."""
    if not issubclass(type(value), str):
        return _cut(_repr(value), SHOW_LIMIT)
    text = _base_text(value)  # type: ignore[arg-type]
    if not abbreviated(text):
        return repr(text)
    half = SHOW_LIMIT // 2
    head, tail = repr(text[:half])[:-1][:half], repr(text[-half:])[1:][-half:]
    return f"{head}...{tail} (len {len(text)})"


def abbreviated(*values: str) -> bool:
    """Whether ``show`` cut any of these texts, so the difference itself may be hidden."""
    return any(
        len(text) > SHOW_LIMIT or len(repr(text)) > SHOW_LIMIT for text in map(_base_text, values)
    )


def error_text(error: BaseException) -> str:
    """What a target's exception says, as ``Kind('message')``, escaped and capped."""
    shown = ", ".join(show(argument) for argument in error.args[:3])
    return _cut(f"{class_name(type(error))}({shown})", TEXT_LIMIT)


def _common_prefix(first: str, second: str) -> int:
    """Length of the common prefix, by halving (fast on texts of megabytes)."""
    low, high = 0, min(len(first), len(second))
    while low < high:
        middle = (low + high + 1) // 2
        if first[low:middle] == second[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def first_difference(expected: str, actual: str) -> str:
    """Where two texts first differ, with context either side."""
    expected, actual = _base_text(expected), _base_text(actual)
    index = _common_prefix(expected, actual)
    start = max(0, index - _CONTEXT)
    return (
        f"\n  first difference at index {index} "
        f"(expected len {len(expected)}, actual len {len(actual)}):"
        f"\n    expected ...{expected[start : index + _CONTEXT]!r}"
        f"\n    actual   ...{actual[start : index + _CONTEXT]!r}"
    )
