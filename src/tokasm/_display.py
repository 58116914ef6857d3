"""Anything from a target, escaped and capped for a person: its texts may hold ANSI escapes or
lone surrogates or be 20 MB long, and its ``__repr__`` may raise."""

from __future__ import annotations

import itertools
import reprlib

#: Characters of ``repr`` shown of one value, of a target's message or name, and of a
#: multi-line message in a report, before each is abbreviated in the middle.
SHOW_LIMIT, TEXT_LIMIT, BLOCK_LIMIT = 120, 2000, 10_000
_CONTEXT = 24  # characters either side of the first difference


class _Repr(reprlib.Repr):
    """reprlib's bounded repr, but a dict keeps its key order (an event reads as it was sent)."""

    def repr_dict(self, x: dict[object, object], level: int) -> str:
        if not x or level <= 0:
            return "{...}" if x else "{}"
        pieces = [
            f"{self.repr1(key, level - 1)}: {self.repr1(value, level - 1)}"
            for key, value in itertools.islice(x.items(), self.maxdict)
        ]
        return "{" + ", ".join(pieces + ["..."] * (len(x) > self.maxdict)) + "}"


# A few items deep whatever the size; reprlib catches what an object's ``__repr__`` raises.
_REPR = _Repr()
_REPR.maxlevel = 3
_REPR.maxdict = _REPR.maxlist = _REPR.maxtuple = _REPR.maxset = 8
_REPR.maxstring = _REPR.maxother = SHOW_LIMIT


def _printable(text: str, keep: str = "") -> str:
    """Each non-printable character (ANSI escapes, lone surrogates...) but ``keep``'s escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else repr(c)[1:-1] for c in text)


def _base_text(value: str) -> str:
    """The characters of a ``str`` (or subclass) by ``str``'s own method, whatever it overrides."""
    return value if type(value) is str else str.__str__(value)


def _cut(text: str, limit: int, keep: str = "") -> str:
    """Escaped and abbreviated in the middle past ``limit`` (cut first: 20 MB cost two slices)."""
    if len(text) <= limit:
        return _printable(text, keep)
    half = limit // 2
    head, tail = _printable(text[:half], keep), _printable(text[-half:], keep)
    return f"{head}...[{len(text) - 2 * half} characters]...{tail}"


def _plain_str(value: object) -> str:
    """``str(value)``, or a stand-in naming the type when its ``__str__`` raises."""
    if issubclass(type(value), str):  # by its real type: ``__class__`` may lie
        return _base_text(value)  # type: ignore[arg-type]
    try:
        return _base_text(str(value))
    except BaseException as error:
        return f"<{type_name(value)}: str() raised {class_name(type(error))}>"


def safe_text(value: object, limit: int = TEXT_LIMIT) -> str:
    """A target's text (a name, an error message) on one line, escaped and capped, never raising."""
    return _cut(_plain_str(value), limit)


def safe_block(value: object, limit: int = BLOCK_LIMIT) -> str:
    """As ``safe_text``, but line breaks kept: a case's message or a problem in a report."""
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


def show(value: object) -> str:
    """``repr`` of a value, escaped, abbreviated in the middle when long (with a text's length)."""
    if not issubclass(type(value), str):
        try:
            shown = str(_REPR.repr(value))
        except BaseException as error:
            shown = f"<{type_name(value)}: repr() raised {class_name(type(error))}>"
        return _cut(shown, SHOW_LIMIT)
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


def first_difference(expected: str, actual: str) -> str:
    """Where two texts first differ, with context either side."""
    expected, actual = _base_text(expected), _base_text(actual)
    index, high = 0, min(len(expected), len(actual))
    while index < high:  # the common prefix by halving: fast on texts of megabytes
        middle = (index + high + 1) // 2
        if expected[index:middle] == actual[index:middle]:
            index = middle
        else:
            high = middle - 1
    start = max(0, index - _CONTEXT)
    return (
        f"\n  first difference at index {index} "
        f"(expected len {len(expected)}, actual len {len(actual)}):"
        f"\n    expected ...{expected[start : index + _CONTEXT]!r}"
        f"\n    actual   ...{actual[start : index + _CONTEXT]!r}"
    )
