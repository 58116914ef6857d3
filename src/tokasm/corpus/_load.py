"""Load the YAML case corpus into small frozen objects, refusing anything malformed.

Each file is checked against ``case.schema.json`` with jsonschema, then its
compact forms (step and text ``repeat``, ``concat``, ``${i}``) are expanded
into plain steps. Every error names the file and, where it can, the case.

Input is bounded, because a case file may come from anywhere (``--cases``,
``TOKASM_SPEC_DIR``): a file may hold at most ``MAX_FILE_BYTES`` and
``MAX_YAML_NODES`` nodes with its aliases expanded, nesting is at most
``MAX_CASE_DEPTH`` deep, and a case may
expand to at most ``MAX_CASE_STEPS`` steps and ``MAX_CASE_CHARS`` characters,
checked before anything is multiplied out. Each refusal is a CorpusError.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import string
from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache, partial
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import yaml

from tokasm.corpus._document_cache import checked_before, note_checked, validation_key
from tokasm.corpus._paths import shipped, spec_dir
from tokasm.corpus.steps import OPS, Apply, Get, Raises, ReadSince, Returns
from tokasm.errors import CorpusError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Set
    from pathlib import Path

    import jsonschema

    from tokasm.corpus.steps import Expectation, Step

__all__ = [
    "MAX_CASE_CHARS",
    "MAX_CASE_DEPTH",
    "MAX_CASE_STEPS",
    "MAX_FILE_BYTES",
    "MAX_FILE_CHARS",
    "MAX_FILE_STEPS",
    "MAX_YAML_NODES",
    "PROFILES",
    "Case",
    "Corpus",
    "CorpusError",
    "expand",
    "load_corpus",
    "load_file",
    "parse_case",
    "profile_gap",
    "read_bounded",
    "requirement_ids",
]

Profile: TypeAlias = Literal["required", "strict", "incremental", "surrogates"]
PROFILES: tuple[Profile, ...] = ("required", "strict", "incremental", "surrogates")

#: Largest case file read (the biggest bundled one is ~12 KiB).
MAX_FILE_BYTES = 8 << 20
#: Deepest nesting of a case file's YAML (the bundled files need 10).
MAX_CASE_DEPTH = 64
#: Most nodes a case file's YAML may have, an alias counted each time it is used (the
#: bundled files have at most ~5,000).
MAX_YAML_NODES = 1_000_000
#: Most steps one case may expand to (the biggest bundled case has ~5,000).
MAX_CASE_STEPS = 100_000
#: Most characters one case may expand to, over every text it sends or expects
#: (the biggest bundled case has ~2.1 million).
MAX_CASE_CHARS = 16 << 20
#: Most steps and characters all the cases of one file may expand to together, so
#: many small cases that each expand a lot cannot add up (a bundled file: < 10,000
#: steps, < 3 million characters).
MAX_FILE_STEPS = 500_000
MAX_FILE_CHARS = 64 << 20


def read_bounded(path: Path, limit: int, what: str) -> bytes:
    """At most ``limit`` bytes of ``path``; OSError if unreadable, ValueError if larger.

    Reads ``limit + 1`` bytes at most, so a device (``/dev/zero``) or a
    growing file cannot exhaust memory.
    """
    with path.open("rb") as stream:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{what} is larger than {limit:,} bytes")
    return data


@dataclass(frozen=True)
class Case:
    """One conformance case; ``steps`` are its compact forms expanded."""

    id: str
    description: str
    requirements: tuple[str, ...]
    profile: Profile
    instances: tuple[str, ...]
    #: Makes the steps: at once for a case file from anywhere, so a bad one is refused on
    #: load; when first asked for in tokasm's own corpus (see ``_load_files``).
    expand: Callable[[], tuple[Step, ...]] = field(repr=False, compare=False)
    source: Path
    #: False for a case from a user folder (``--cases DIR``), not the spec folder's corpus.
    bundled: bool = True
    #: How an in-process runner lends the events (CASES.md): None, as the caller's own dict
    #: (``_caller``); ``other-mappings``: read-only mappings of ``str`` subclass strings.
    events_in_process: str | None = None
    #: The case as written in its file (plain JSON values): what a worker process rebuilds
    #: it from (``parse_case``).
    document: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def steps(self) -> tuple[Step, ...]:
        return self.expand()

    @cached_property
    def features(self) -> frozenset[str]:
        """The features its steps need (``READ_SINCE``), read off the steps as written, so
        that a process that only sends the case on need not expand it."""
        if not self.document:
            return frozenset(step.feature for step in self.steps if step.feature)
        return frozenset(
            step.feature
            for step in OPS.values()
            if step.feature is not None and _writes(self.document["steps"], step.op)
        )

    def __eq__(self, other: object) -> bool:
        """Equal fields and equal steps (so both cases are expanded)."""
        if type(other) is not Case:
            return NotImplemented
        return (
            all(getattr(self, name) == getattr(other, name) for name in _COMPARED)
            and self.steps == other.steps
        )

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, name) for name in _COMPARED))


def _writes(steps: object, op: str) -> bool:
    """Whether the steps as written (nested ``repeat``s included) hold an ``op`` step."""
    if isinstance(steps, list):
        return any(_writes(step, op) for step in steps)
    return isinstance(steps, dict) and (op in steps or _writes(steps.get("steps"), op))


#: What two cases' equality compares besides their steps: every field but ``expand``.
_COMPARED = tuple(case_field.name for case_field in dataclasses.fields(Case) if case_field.compare)


@dataclass(frozen=True)
class Corpus:
    """All cases of a spec folder, in file then file-order."""

    version: str
    root: Path
    cases: tuple[Case, ...]

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)

    def by_id(self) -> dict[str, Case]:
        return {case.id: case for case in self.cases}


try:  # libyaml's parser when PyYAML has it: several times faster on a large corpus
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]


def _refuse_shapes(root: yaml.Node) -> None:
    """ConstructorError for a document of more than ``MAX_YAML_NODES`` nodes, every alias
    (``*name``) counted each time it is used, or nested deeper than ``MAX_CASE_DEPTH``.

    Aliases reuse a text expression (stress.yaml), but a few lines of nested aliases can
    stand for exponentially many nodes ("billion laughs"); deep nesting (an
    ``apply_raw`` of a thousand lists) would overflow the stack of every recursive
    reader after the loader. The walk stops at the first excess, and is iterative.
    """
    pending = [(root, 1)]
    visited = 0
    while pending:
        node, depth = pending.pop()
        visited += 1
        why = (
            f"more than {MAX_YAML_NODES:,} nodes once its aliases are expanded (MAX_YAML_NODES)"
            if visited > MAX_YAML_NODES
            else f"nested deeper than {MAX_CASE_DEPTH} levels (MAX_CASE_DEPTH)"
            if depth > MAX_CASE_DEPTH
            else _not_json(node)
        )
        if why:
            raise yaml.constructor.ConstructorError(None, None, why, node.start_mark)
        if isinstance(node, yaml.SequenceNode):
            pending.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.tag != _JSON_TAG + "str":
                    raise yaml.constructor.ConstructorError(
                        None, None, "a mapping key must be a string (JSON)", key.start_mark
                    )
                pending.append((value, depth + 1))


#: What a case file may hold: JSON's values, so every route and language reads the same
#: events. A set, a date or bytes (YAML tags) would be sent as no JSON can say.
_JSON_TAG = "tag:yaml.org,2002:"
_JSON_TAGS = frozenset(_JSON_TAG + name for name in ("str", "int", "float", "bool", "null"))
_JSON_TAGS |= {_JSON_TAG + "seq", _JSON_TAG + "map"}
#: The largest integer every JSON reader keeps exact (a JavaScript number's 2^53 - 1).
MAX_SAFE_INTEGER = 2**53 - 1


def _not_json(node: yaml.Node) -> str | None:
    """Why ``node`` is no JSON value, or None."""
    if node.tag not in _JSON_TAGS:
        kind = node.tag.removeprefix(_JSON_TAG)
        return f"a YAML {kind} is not a JSON value; case files hold JSON values only"
    return None


def _refuse_numbers(document: object, path: Path) -> None:
    """CorpusError for a number JSON cannot carry alike on every route: not finite
    (``.inf``, ``.nan``, ``1e400``), or an integer past ``MAX_SAFE_INTEGER``."""
    pending = [document]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, float) and not math.isfinite(value):
            raise CorpusError(
                f"{path}: {value} is not a JSON number; case files hold JSON values only"
            )
        elif type(value) is int and abs(value) > MAX_SAFE_INTEGER:
            raise CorpusError(
                f"{path}: {value:.3e} is past the integers every JSON reader keeps exact "
                f"(MAX_SAFE_INTEGER, 2**53 - 1)"
            )


class _UniqueKeyLoader(_SafeLoader):
    """PyYAML's safe loader, but a repeated mapping key is an error, not an overwrite,
    and an oversized or deeply nested document is refused."""

    def construct_document(self, node: yaml.Node) -> Any:
        _refuse_shapes(node)
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                raise yaml.constructor.ConstructorError(
                    None, None, f"a mapping key must be a scalar, not {key!r}", key_node.start_mark
                )
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


# YAML 1.1 reads on/off/yes/no as booleans, which would turn the step key ``on``
# into True (and ``delta: no`` into False), and 2024-05-01 as a date. Resolve as
# YAML 1.2's core schema does: only true and false are booleans, and no plain
# text is a date.
_BOOL_TAG = "tag:yaml.org,2002:bool"
_UniqueKeyLoader.yaml_implicit_resolvers = {
    first: [
        (tag, pattern)
        for tag, pattern in resolvers
        if tag not in (_BOOL_TAG, "tag:yaml.org,2002:timestamp")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_UniqueKeyLoader.add_implicit_resolver(
    _BOOL_TAG, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


@cache
def _validator(schema_path: Path) -> jsonschema.protocols.Validator:
    import jsonschema  # only for a file not in the document cache: it costs 50 ms to import

    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


def _case_label(document: object, path: Iterable[object]) -> str:
    """``case 'x'`` (or ``case #3``) for a schema error path into ``cases``."""
    parts = list(path)
    if len(parts) < 2 or parts[0] != "cases" or not isinstance(parts[1], int):
        return "file level"
    index = parts[1]
    cases = document.get("cases") if isinstance(document, dict) else None
    case = cases[index] if isinstance(cases, list) and index < len(cases) else None
    case_id = case.get("id") if isinstance(case, dict) else None
    return f"case {case_id!r}" if isinstance(case_id, str) else f"case #{index + 1}"


def _validate(document: object, source: Path, schema_path: Path) -> None:
    errors = list(_validator(schema_path).iter_errors(document))  # type: ignore[arg-type]
    if not errors:
        return
    from jsonschema.exceptions import best_match

    error = best_match(errors)
    location = "/".join(str(p) for p in error.absolute_path) or "(top)"
    raise CorpusError(
        f"{source}: {_case_label(document, error.absolute_path)}: "
        f"schema violation at {location}: {error.message}"
    )


def _planned_steps(raws: list[Any]) -> int:
    """How many plain steps ``raws`` unrolls to, counted without unrolling anything."""
    return sum(
        raw["repeat"] * _planned_steps(raw["steps"]) if "repeat" in raw else 1 for raw in raws
    )


#: Builds a text as written, in a scope of ``as`` variables, charging what it builds.
_Text: TypeAlias = "Callable[[Mapping[str, int]], str]"
#: Appends what a step as written unrolls to, in a scope and numbered ``where``.
_Emit: TypeAlias = "Callable[[Mapping[str, int], str, list[Step]], None]"
_PLAIN_EVENT_KEYS = frozenset({"id", "delta", "final"})
_RETURNS_NULL = Returns(None)  # most steps' expectation, one object for all (it is frozen)
_VARIABLE = re.compile(r"\$\{([_a-zA-Z][_a-zA-Z0-9]*)\}")


@lru_cache(maxsize=4096)
def _format(raw: str) -> str | None:
    """``raw`` as a ``str.format_map`` form, ``${var}`` as ``{var}``, so one call fills
    in every variable; None if a '$' is left over (``$$``, ``$var``), for
    ``string.Template`` to read."""
    parts = _VARIABLE.split(raw)
    literals = parts[::2]
    if any("$" in literal for literal in literals):
        return None
    parts[::2] = [literal.replace("{", "{{").replace("}", "}}") for literal in literals]
    parts[1::2] = [f"{{{name}}}" for name in parts[1::2]]
    return "".join(parts)


class _Expander:
    """Expands one case's compact forms; ``env`` holds the ``as`` variables in scope.

    ``chars`` counts every character the expanded case holds so far, so no
    text grows past ``MAX_CASE_CHARS`` before the case is refused.

    A step as written is compiled on its first visit (as a step inside a repeat is
    reached, in order, so errors come as they would one step at a time) into an emitter
    that knows its instance and expectation and how to build its texts; every turn of a
    repeat then only runs it.
    """

    def __init__(
        self,
        source: Path,
        case_id: str,
        instances: tuple[str, ...],
        char_limit: tuple[int, str] = (MAX_CASE_CHARS, "MAX_CASE_CHARS"),
    ) -> None:
        self.source = source
        self.case_id = case_id
        self.instances = instances
        self._declared = frozenset(instances)  # a case may declare thousands
        self.chars = 0
        self.char_limit = char_limit  # the limit and its name, for the message
        self._emitters: dict[int, _Emit] = {}  # by id() of a step as written

    def fail(self, message: str) -> CorpusError:
        return CorpusError(f"{self.source}: case {self.case_id!r}: {message}")

    def charge(self, size: int) -> None:
        """Count ``size`` more characters toward the case's cap, before they are built."""
        self.chars += size
        limit, name = self.char_limit
        if self.chars > limit:
            raise self.fail(
                f"expands to more than {limit:,} characters ({name}); split it into smaller cases"
            )

    def check_steps(self, raws: list[Any]) -> None:
        planned = _planned_steps(raws)
        if planned > MAX_CASE_STEPS:
            raise self.fail(
                f"expands to {planned:,} steps, more than {MAX_CASE_STEPS:,} (MAX_CASE_STEPS); "
                "split it into smaller cases"
            )

    def string(self, raw: str, env: Mapping[str, int]) -> str:
        """``raw`` with its ``${var}`` replaced (outside any 'as' repeat, '$' is literal),
        charged as it stands then (``${i}`` may grow to many digits): its characters, or 1
        for an empty one, which still costs its visit."""
        text = self.substituted(raw, env) if env and "$" in raw else raw
        self.charge(len(text) or 1)
        return text

    def substituted(self, raw: str, env: Mapping[str, int]) -> str:
        form = _format(raw)
        if form is not None:  # the common case
            try:
                return form.format_map(env)
            except KeyError:
                pass  # Template says which variable is unknown
        try:
            return string.Template(raw).substitute(env)
        except (KeyError, ValueError) as error:
            raise self.fail(f"bad ${{...}} substitution in {raw!r}: {error}") from None

    def text_of(self, raw: object) -> _Text:
        """How to build the text expression ``raw`` (as ``text`` does), worked out once for
        all its visits: most are strings, either without '$' or with ``${var}`` only."""
        if type(raw) is not str:
            return partial(self.text, raw)
        if "$" in raw:
            form = _format(raw)
            return partial(self.string, raw) if form is None else self.template(raw, form)
        size = len(raw) or 1

        def literal(env: Mapping[str, int]) -> str:
            self.chars += size  # charge() inlined: this runs for most texts
            if self.chars > self.char_limit[0]:
                self.charge(0)
            return raw

        return literal

    def template(self, raw: str, form: str) -> _Text:
        """``string`` of ``raw``, its variables filled in by one call on its ``_format``."""

        def template(env: Mapping[str, int]) -> str:
            try:
                text = form.format_map(env) if env else raw  # outside any 'as' repeat
            except KeyError:
                return self.string(raw, env)  # refused, naming the unknown variable
            self.chars += len(text) or 1  # charge() inlined, as in ``literal``
            if self.chars > self.char_limit[0]:
                self.charge(0)
            return text

        return template

    def text(self, raw: object, env: Mapping[str, int]) -> str:
        if type(raw) is str:
            return self.string(raw, env)
        assert isinstance(raw, dict)  # the schema allows nothing else
        self.charge(1)  # every visit costs, so a repeat of what makes no text stays bounded
        if "concat" in raw:
            return "".join(self.text(part, env) for part in raw["concat"])
        if "code_point" in raw:
            return chr(raw["code_point"])  # a lone surrogate, which YAML cannot escape
        name = raw.get("as")
        if name is None:
            repeat: int = raw["repeat"]
            once = self.text(raw["text"], env) if repeat else ""
            self.charge(len(once) * (repeat - 1))  # the first copy was charged as it was built
            return once * repeat
        if name in env:
            raise self.fail(f"text repeat 'as: {name}' shadows an outer repeat")
        part, inner = self.text_of(raw["text"]), dict(env)
        built = []
        for i in range(raw["repeat"]):
            inner[name] = i  # one scope, refilled: part() keeps none of it
            built.append(part(inner))
        return "".join(built)

    def instance(self, raw: Mapping[str, Any]) -> str:
        name: str = raw.get("on", self.instances[0])
        if name not in self._declared:
            shown = list(self.instances[:10]) + (["..."] if len(self.instances) > 10 else [])
            raise self.fail(f"step uses instance {name!r}, not declared in {shown}")
        return name

    def steps(self, raws: list[Any], env: Mapping[str, int], prefix: str) -> list[Step]:
        """The plain steps of ``raws``, numbered after ``prefix``, repeats unrolled."""
        built: list[Step] = []
        self.unroll(raws, env, prefix, built)
        self._emitters.clear()  # they refer back to the expander
        return built

    def unroll(
        self, raws: list[Any], env: Mapping[str, int], prefix: str, built: list[Step]
    ) -> None:
        """Append the plain steps of ``raws`` to ``built``: one list, not a generator per
        repeat level, so a step costs the same however deeply it is nested."""
        emitters = self._emitters
        for number, raw in enumerate(raws, start=1):
            (emitters.get(id(raw)) or self.emitter(raw))(env, f"{prefix}{number}", built)

    def emitter(self, raw: Mapping[str, Any]) -> _Emit:
        """The emitter of the step ``raw`` as written, by its operation's key (the schema
        ensures one), kept for every other visit."""
        if "repeat" in raw:
            emit: _Emit = partial(self.repeat, raw)
        else:
            emit = next(_COMPILERS[key] for key in _COMPILERS if key in raw)(self, raw)
        self._emitters[id(raw)] = emit
        return emit

    def repeat(
        self, raw: Mapping[str, Any], env: Mapping[str, int], where: str, built: list[Step]
    ) -> None:
        """Append the steps of a step ``repeat``, each turn's numbered ``where[i].``."""
        name = raw.get("as")
        if name is not None and name in env:
            raise self.fail(f"step {where}: 'as: {name}' shadows an outer repeat")
        raws = raw["steps"]
        if not name:
            for i in range(raw["repeat"]):
                self.unroll(raws, env, f"{where}[{i}].", built)
            return
        inner = dict(env)
        for i in range(raw["repeat"]):
            inner[name] = i  # one scope, refilled: an emitter keeps none of it
            self.unroll(raws, inner, f"{where}[{i}].", built)

    def apply(self, raw: Mapping[str, Any]) -> _Emit:
        instance, expect, event = self.instance(raw), self.apply_expect(raw), self.event(raw)

        def apply(env: Mapping[str, int], where: str, built: list[Step]) -> None:
            built.append(Apply(instance, expect(env), event(env), where=where))

        return apply

    def get(self, raw: Mapping[str, Any]) -> _Emit:
        instance, expect, message = self.instance(raw), self.expect(raw), self.text_of(raw["get"])

        def get(env: Mapping[str, int], where: str, built: list[Step]) -> None:
            built.append(Get(instance, expect(env), message(env), where=where))

        return get

    def read_since(self, raw: Mapping[str, Any]) -> _Emit:
        instance, expect, query = self.instance(raw), self.expect(raw), raw["read_since"]
        message, offset = self.text_of(query["id"]), partial(self.offset, query["offset"])

        def read_since(env: Mapping[str, int], where: str, built: list[Step]) -> None:
            built.append(ReadSince(instance, expect(env), message(env), offset(env), where=where))

        return read_since

    def offset(self, raw: int | str, env: Mapping[str, int]) -> int:
        """An integer offset, or digits and ``${var}`` that expand to one (e.g. ``${t}${u}0``)."""
        if isinstance(raw, int):
            return raw
        expanded = self.string(raw, env)  # the schema allows only digits and ${var}
        if not expanded.isdecimal():
            raise self.fail(f"offset {raw!r} uses ${{...}} outside any 'as' repeat")
        return int(expanded)

    def expect(self, raw: Mapping[str, Any]) -> Callable[[Mapping[str, int]], Returns]:
        value = raw["returns"]
        if value is None:
            return lambda env: _RETURNS_NULL
        text = self.text_of(value)
        return lambda env: Returns(text(env))

    def apply_expect(self, raw: Mapping[str, Any]) -> Callable[[Mapping[str, int]], Expectation]:
        if "raises" in raw:
            raises = Raises(raw["raises"])  # frozen: one for every turn of a repeat
            return lambda env: raises
        return self.expect(raw)

    def event(self, raw: Mapping[str, Any]) -> Callable[[Mapping[str, int]], object]:
        """How to build the event of an ``apply``: a new dict each time, its ``id`` and
        ``delta`` built, any other key sent as written; an ``apply_raw`` value as written.
        What is sent as written is charged like a text, as its JSON."""
        if "apply_raw" in raw:
            value = raw["apply_raw"]
            return partial(self.sent_as_written, value, len(json.dumps(value, default=str)))
        written: dict[str, Any] = raw["apply"]
        extra = 0
        if not _PLAIN_EVENT_KEYS.issuperset(written):
            extras = {key: value for key, value in written.items() if key not in ("id", "delta")}
            extra = len(json.dumps(extras, default=str))
        message = self.text_of(written["id"])
        delta = self.text_of(written["delta"]) if "delta" in written else None

        def event(env: Mapping[str, int]) -> object:
            if extra:  # extra keys (EVT-EXTRA-KEYS) are sent, so counted, before the texts
                self.charge(extra)
            built = dict(written)
            built["id"] = message(env)
            if delta is not None:
                built["delta"] = delta(env)
            return built

        return event

    def sent_as_written(self, value: object, size: int, env: Mapping[str, int]) -> object:
        self.charge(size)
        return value


#: How each step form of CASES.md is compiled, by its key (``apply_raw``: an event sent
#: as written).
_COMPILERS: dict[str, Callable[[_Expander, Mapping[str, Any]], _Emit]] = {
    "apply": _Expander.apply,
    "apply_raw": _Expander.apply,
    "get": _Expander.get,
    "read_since": _Expander.read_since,
}


def parse_case(raw: Mapping[str, Any], source: Path) -> Case:
    """Build one case from its schema-valid mapping."""
    return _parse_case(raw, source, _expander(raw, source))


def _expander(raw: Mapping[str, Any], source: Path, chars_left: int = MAX_CASE_CHARS) -> _Expander:
    """The expander of one case, its character budget the smaller of the case's and
    what is left of its file's."""
    limit = (
        (MAX_CASE_CHARS, "MAX_CASE_CHARS")
        if chars_left >= MAX_CASE_CHARS
        else (chars_left, "MAX_FILE_CHARS, over the whole file")
    )
    return _Expander(source, raw["id"], tuple(raw.get("instances", ["a"])), limit)


def _parse_case(
    raw: Mapping[str, Any], source: Path, expander: _Expander, *, lazy: bool = False
) -> Case:
    """The case of ``raw``, its steps expanded now, or when first used if ``lazy``."""
    expander.check_steps(raw["steps"])
    if lazy:
        expand = partial(_expanded, raw, source)
    else:
        steps = _steps_of(raw, expander)
        expand = partial(_given, steps)
    return Case(
        id=raw["id"],
        description=raw["description"],
        requirements=tuple(raw["requirements"]),
        profile=raw.get("profile", "required"),
        instances=expander.instances,
        expand=expand,
        source=source,
        events_in_process=raw.get("events_in_process"),
        document=raw,
    )


def _given(steps: tuple[Step, ...]) -> tuple[Step, ...]:
    return steps


def _expanded(raw: Mapping[str, Any], source: Path) -> tuple[Step, ...]:
    return _steps_of(raw, _expander(raw, source))


def _steps_of(raw: Mapping[str, Any], expander: _Expander) -> tuple[Step, ...]:
    try:
        return tuple(expander.steps(raw["steps"], {}, ""))
    except (TypeError, ValueError) as error:  # the schema counts 2.0 as an integer
        raise expander.fail(
            f"cannot be expanded: {error} (a count, offset or code point must be a whole "
            "number written without a decimal point)"
        ) from None


def _parse_cases(raws: list[Mapping[str, Any]], source: Path, *, lazy: bool = False) -> list[Case]:
    """Every case of one file, within the file's total budget of steps and characters (of
    characters only if expanded now: a lazy file is one tokasm ships, and CI expands it)."""
    for raw in raws:  # a case's own limit is the more precise message
        _expander(raw, source).check_steps(raw["steps"])
    planned = sum(_planned_steps(raw["steps"]) for raw in raws)
    if planned > MAX_FILE_STEPS:
        raise CorpusError(
            f"{source}: its cases expand to {planned:,} steps together, more than "
            f"{MAX_FILE_STEPS:,} (MAX_FILE_STEPS); split it into several files"
        )
    cases = []
    chars_left = MAX_FILE_CHARS
    for raw in raws:
        expander = _expander(raw, source, chars_left)
        cases.append(_parse_case(raw, source, expander, lazy=lazy))
        chars_left -= expander.chars
    return cases


def load_file(path: Path, root: Path | None = None, *, lazy: bool = False) -> list[Case]:
    """Load, validate and expand one case file against the schema of ``root``'s spec;
    ``lazy``: expand each case when its steps are first used."""
    schema_path = (spec_dir() if root is None else root) / "case.schema.json"
    try:
        data = read_bounded(path, MAX_FILE_BYTES, "the case file")
    except (OSError, ValueError) as error:
        raise CorpusError(f"{path}: cannot read: {error}") from None
    document: Any = _parsed(data, path)
    key = validation_key(data, schema_path)
    if not checked_before(key):  # the schema check is most of what a load costs
        _validate(document, path, schema_path)
        note_checked(key)
    return _parse_cases(document["cases"], path, lazy=lazy)


def _parsed(data: bytes, path: Path) -> object:
    """The YAML document of a case file's bytes, or CorpusError naming the file."""
    try:
        document = yaml.load(data.decode("utf-8"), Loader=_UniqueKeyLoader)
    except ValueError as error:  # UnicodeDecodeError is a ValueError
        raise CorpusError(f"{path}: cannot read: {error}") from None
    except yaml.YAMLError as error:
        raise CorpusError(f"{path}: not valid YAML: {error}") from None
    except RecursionError:
        raise CorpusError(f"{path}: not valid YAML: nested too deeply") from None
    _refuse_numbers(document, path)
    return document


def load_corpus(root: Path | None = None, user_cases: Iterable[Path] = ()) -> Corpus:
    """Load every ``cases/*.yaml`` under ``root`` (default: the spec folder in use), then
    the case files in ``user_cases`` (folders of ``*.yaml``, or single files).

    User cases follow the same schema and rules: ids unique across both, requirement ids
    from ``root``'s SPEC.md. Loaded once per folder and process: the corpus is read-only
    while tokasm runs.
    """
    root = spec_dir() if root is None else root
    paths = tuple(user_cases)
    relative = not root.is_absolute() or not all(path.is_absolute() for path in paths)
    return _load_corpus(root, paths, os.getcwd() if relative else None)


@cache
def _load_corpus(root: Path, user_cases: tuple[Path, ...], folder: str | None) -> Corpus:
    """The corpus, loaded once per process for the same paths, read from ``folder`` (the
    current folder when a path is relative: a host that changes folder gets that folder's
    cases, not another's from the cache)."""
    if user_cases:
        bundled = _load_corpus(root, (), None if root.is_absolute() else folder)
        seen = {case.id: case.source for case in bundled}
        added = _load_files(_user_files(user_cases), root, seen, bundled=False)
        return dataclasses.replace(bundled, cases=bundled.cases + added)
    files = sorted((root / "cases").glob("*.yaml"))
    if not files:
        raise CorpusError(f"{root / 'cases'}: no *.yaml case files")
    try:
        version = (root / "VERSION").read_text(encoding="utf-8").strip()
    except (OSError, ValueError) as error:
        raise CorpusError(f"{root / 'VERSION'}: cannot read: {error}") from None
    cases = _load_files(files, root, {}, bundled=True, lazy=shipped(root))
    return Corpus(version=version, root=root, cases=cases)


def _user_files(paths: Iterable[Path]) -> list[Path]:
    """The case files named by ``--cases``: each folder's ``*.yaml`` (sorted), or a file."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.glob("*.yaml"))
            if not found:
                raise CorpusError(f"{path}: no *.yaml case files in this case folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise CorpusError(f"{path}: no such case folder or file")
    return files


def _load_files(
    files: Iterable[Path], root: Path, seen: dict[str, Path], *, bundled: bool, lazy: bool = False
) -> tuple[Case, ...]:
    """Load ``files`` in order, refusing an id already in ``seen`` or an unknown requirement.

    ``lazy`` for the corpus tokasm ships, which CI expands in full: a run of a few cases
    (``check -k``, a pytest selection) then expands only those, not all 68,000 steps.
    """
    known = requirement_ids(root)
    cases: list[Case] = []
    for path in files:
        for case in load_file(path, root, lazy=lazy):
            if case.id in seen:
                raise CorpusError(
                    f"{path}: case {case.id!r}: duplicate id, first defined in {seen[case.id]}"
                )
            unknown = sorted(set(case.requirements) - set(known))
            if unknown:
                raise CorpusError(
                    f"{path}: case {case.id!r}: requirement ids not in SPEC.md: {unknown}"
                )
            seen[case.id] = path
            cases.append(case if bundled else dataclasses.replace(case, bundled=False))
    return tuple(cases)


def requirement_ids(root: Path | None = None) -> dict[str, str]:
    """Requirement id -> kind (``behaviour`` or ``performance``), read from SPEC.md."""
    return dict(_requirements((spec_dir() if root is None else root).absolute()))


@cache
def _requirements(root: Path) -> tuple[tuple[str, str], ...]:
    """SPEC.md's requirement ids, read once per process, as the corpus is: the fuzzer names
    them after a target ran, which may have left no descriptor to read the file with."""
    try:
        text = (root / "SPEC.md").read_text(encoding="utf-8")
    except (OSError, ValueError) as error:
        raise CorpusError(f"{root / 'SPEC.md'}: cannot read: {error}") from None
    found: list[tuple[str, str]] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("- **") and "** (" in stripped:
            requirement, rest = stripped[4:].split("** (", 1)
            found.append((requirement, rest.split(")", 1)[0]))
    return tuple(found)


def expand(cases: Iterable[Case]) -> None:
    """Expand the steps of each of ``cases`` now, if they are not yet (they are kept)."""
    for case in cases:
        _ = case.steps


def profile_gap(
    requested: Iterable[str], cases: Iterable[Case], target: str, features: Set[str]
) -> str | None:
    """Why a profile the user asked for by name cannot run on ``target``, or None.

    Asking for a profile (``--profile incremental``) and having its cases
    skipped because the target lacks a feature would be a silent pass.
    """
    chosen = list(cases)
    for profile in dict.fromkeys(requested):
        needed = {f for c in chosen if c.profile == profile for f in c.features}
        missing = sorted(needed - features)
        if missing:
            return (
                f"profile {profile!r} was asked for, but target {target!r} has no "
                f"{', '.join(missing)}, so it cannot run those cases; leave the profile out "
                "to check the target without them"
            )
    return None
