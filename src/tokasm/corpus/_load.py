"""Load YAML case files into cases whose compact forms expand into plain steps.

Trusted: the spec folder tokasm ships (its tests check it). Any other case file is checked
against the schema and expanded on load; an error names the file and, where it can, the case.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import operator
import os
import re
import string
from dataclasses import dataclass, field
from functools import cache, cached_property
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast, get_args

from tokasm.corpus._paths import shipped, spec_dir
from tokasm.corpus.steps import OPS, Apply, Get, Raises, ReadSince, Returns
from tokasm.errors import CorpusError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Set
    from pathlib import Path

    from tokasm.corpus.steps import Expectation, Step

__all__ = [
    "LARGE_PROFILES", "PROFILES", "Case", "Corpus", "expand", "load_corpus", "load_file",
    "parse_case", "profile_gap", "requirement_ids",
]  # fmt: skip

Profile: TypeAlias = Literal["required", "strict", "incremental", "surrogates", "mappings", "scale"]
PROFILES: tuple[Profile, ...] = get_args(Profile)
#: The optional profiles whose cases are large (SPEC.md: optional only for their cost): an
#: export leaves them out unless asked, and blame takes a passed one's listed rules.
LARGE_PROFILES: frozenset[Profile] = frozenset({"scale"})


@dataclass(frozen=True)
class Case:
    """A case as written (JSON values only), its file, and whether it is bundled (not --cases)."""

    document: dict[str, Any] = field(hash=False, repr=False)
    source: Path
    bundled: bool = True

    @property
    def id(self) -> str:
        return str(self.document["id"])

    @property
    def description(self) -> str:
        return str(self.document["description"])

    @property
    def requirements(self) -> tuple[str, ...]:
        return tuple(self.document["requirements"])

    @property
    def profile(self) -> Profile:
        return cast("Profile", self.document.get("profile", "required"))

    @property
    def large(self) -> bool:
        return self.profile in LARGE_PROFILES

    @cached_property
    def instances(self) -> tuple[str, ...]:
        return tuple(self.document.get("instances", ["a"]))

    @property
    def events_in_process(self) -> str | None:  # how an in-process runner lends them (CASES.md)
        return cast("str | None", self.document.get("events_in_process"))

    @cached_property
    def steps(self) -> tuple[Step, ...]:
        if (count := self.step_count) > MAX_CASE_STEPS:
            raise self._fail(
                f"expands to {count:.3g} steps, over the {MAX_CASE_STEPS:,} a case may"
            )
        collecting = gc.isenabled()
        gc.disable()  # every step is kept: a collection meanwhile walks them all in vain
        try:
            return tuple(self._unroll(self.document["steps"], {}, "", []))
        except (TypeError, ValueError) as error:  # the schema counts 2.0 as an integer
            raise self._fail(
                f"cannot be expanded: {error} (a count, offset or code point must be a whole "
                "number written without a decimal point)"
            ) from None
        finally:
            if collecting:
                gc.enable()

    @property
    def step_count(self) -> int:
        return _counted(self.document["steps"])

    def drop_steps(self) -> None:
        """Kept for a run, the expanded steps slow every full garbage collection."""
        self.__dict__.pop("steps", None)

    @cached_property
    def features(self) -> frozenset[str]:
        """Read off the steps as written: a process that only sends the case on never expands it."""
        return frozenset(
            step.feature
            for step in OPS.values()
            if step.feature is not None and _writes(self.document["steps"], step.op)
        )

    def _fail(self, message: str) -> CorpusError:
        return CorpusError(f"{self.source}: case {self.id!r}: {message}")

    def _unroll(
        self, raws: list[Any], env: Mapping[str, int], prefix: str, built: list[Step]
    ) -> list[Step]:
        for number, raw in enumerate(raws, start=1):
            where = f"{prefix}{number}"
            if "repeat" not in raw:
                built.append(self._step(raw, env, where))
                continue
            name = raw.get("as")
            if name in env:
                raise self._fail(f"step {where}: 'as: {name}' shadows an outer repeat")
            for i in range(raw["repeat"]):
                self._unroll(
                    raw["steps"], {**env, name: i} if name else env, f"{where}[{i}].", built
                )
        return built

    def _step(self, raw: Mapping[str, Any], env: Mapping[str, int], where: str) -> Step:
        instance: str = raw.get("on", self.instances[0])
        if instance not in self.instances:
            shown = list(self.instances[:10]) + (["..."] if len(self.instances) > 10 else [])
            raise self._fail(f"step uses instance {instance!r}, not declared in {shown}")
        expect: Expectation
        if "raises" in raw:
            expect = Raises(raw["raises"])
        else:
            value = raw["returns"]
            expect = _RETURNS_NULL if value is None else Returns(self._text(value, env))
        if "get" in raw:
            return Get(instance, expect, self._text(raw["get"], env), where=where)
        if "read_since" in raw:
            query = raw["read_since"]
            message, offset = self._text(query["id"], env), self._offset(query["offset"], env)
            return ReadSince(instance, expect, message, offset, where=where)
        if "apply_raw" in raw:  # an event sent as written
            return Apply(instance, expect, raw["apply_raw"], where=where)
        event = dict(raw["apply"])  # any key besides id and delta is sent as written
        event["id"] = self._text(event["id"], env)
        if "delta" in event:
            event["delta"] = self._text(event["delta"], env)
        return Apply(instance, expect, event, where=where, flat=event.keys() <= _FLAT)

    def _offset(self, raw: int | str, env: Mapping[str, int]) -> int:
        """An integer offset, or digits and ``${var}`` that expand to one (``${t}${u}0``)."""
        if not isinstance(raw, str):
            return operator.index(raw)  # TypeError for 1.0
        expanded = self._text(raw, env)  # the schema allows only digits and ${var}
        if not expanded.isdecimal():
            raise self._fail(f"offset {raw!r} uses ${{...}} outside any 'as' repeat")
        return int(expanded)

    def _text(self, raw: object, env: Mapping[str, int]) -> str:
        if type(raw) is str:
            if not env or "$" not in raw:
                return raw
            form = _format(raw)
            try:
                return (
                    string.Template(raw).substitute(env) if form is None else form.format_map(env)
                )
            except (KeyError, ValueError) as error:
                raise self._fail(f"bad ${{...}} substitution in {raw!r}: {error}") from None
        assert isinstance(raw, dict)  # the schema allows nothing else
        if "concat" in raw:
            return "".join(self._text(part, env) for part in raw["concat"])
        if "code_point" in raw:
            return chr(raw["code_point"])  # a lone surrogate, which YAML cannot escape
        name, repeat = raw.get("as"), operator.index(raw["repeat"])
        if name in env:
            raise self._fail(f"text repeat 'as: {name}' shadows an outer repeat")
        first = self._text(raw["text"], env if name is None else {**env, name: 0})
        if max(len(first), 1) * repeat > MAX_CASE_TEXT_CHARS:  # no part is shorter than the first
            raise self._fail(
                f"a text repeat makes over the {MAX_CASE_TEXT_CHARS:,} characters a text may have"
            )
        if name is None:
            return first * repeat
        return first + "".join(self._text(raw["text"], {**env, name: i}) for i in range(1, repeat))


#: The most steps a case may expand into (the largest bundled case has 131,076).
MAX_CASE_STEPS = 1_000_000
#: The most characters a text of a case may expand into (a response line carries 16 MiB).
MAX_CASE_TEXT_CHARS = 16 * 1024 * 1024
#: How another process rebuilds a case from its ``document``, unchecked.
parse_case = Case


def _counted(raws: list[Any]) -> int:
    return sum(raw["repeat"] * _counted(raw["steps"]) if "repeat" in raw else 1 for raw in raws)


def _writes(steps: object, op: str) -> bool:
    if isinstance(steps, list):
        return any(_writes(step, op) for step in steps)
    return isinstance(steps, dict) and (op in steps or _writes(steps.get("steps"), op))


@dataclass(frozen=True)
class Corpus:
    version: str
    root: Path
    cases: tuple[Case, ...]

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)

    def by_id(self) -> dict[str, Case]:
        return {case.id: case for case in self.cases}


_VARIABLE = re.compile(r"\$\{([_a-zA-Z][_a-zA-Z0-9]*)\}")


@cache
def _format(raw: str) -> str | None:
    """``raw`` as a faster ``str.format_map`` form; None if a '$' is left (``$$``, ``$var``)."""
    parts = _VARIABLE.split(raw)
    literals = parts[::2]
    if any("$" in literal for literal in literals):
        return None
    parts[::2] = [literal.replace("{", "{{").replace("}", "}}") for literal in literals]
    parts[1::2] = [f"{{{name}}}" for name in parts[1::2]]
    return "".join(parts)


#: An apply's keys whose values are texts or booleans (CASES.md); any other may hold anything.
_FLAT = frozenset({"id", "delta", "final"})
_RETURNS_NULL = Returns(None)  # most steps' expectation, one object for all (it is frozen)


def _validate(document: Any, source: Path, schema_path: Path) -> None:
    import jsonschema  # only for a user's file: it costs 50 ms to import

    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is None:
        return
    path = list(error.absolute_path)
    where = "file level"
    if len(path) > 1 and path[0] == "cases" and isinstance(path[1], int):
        case = document["cases"][path[1]]
        case_id = case.get("id") if isinstance(case, dict) else None
        where = f"case {case_id!r}" if isinstance(case_id, str) else f"case #{path[1] + 1}"
    location = "/".join(str(part) for part in path) or "(top)"
    message = _unknown_step_key(document, path, schema) or error.message
    if error.validator == "not":  # "should not be valid under ...": the schema says why
        message += f" ({error.schema.get('description')})"
    raise CorpusError(f"{source}: {where}: schema violation at {location}: {message}")


def _unknown_step_key(document: Any, path: list[Any], schema: Any) -> str | None:
    """An error "unknown step key 'repaet'" (the schema's names the key the typo left out)."""
    node, step = document, None
    for parent, part in pairwise([None, *path]):
        node = node[part]
        if parent == "steps" and isinstance(node, dict):  # an element of a list of steps
            step = node
    kinds = ("apply", "apply_raw", "get", "read_since", "repeat_steps")
    known = {key for kind in kinds for key in schema["$defs"][kind]["properties"]}
    unknown = sorted(set(step or ()) - known)
    if not unknown:
        return None
    return f"unknown step key {unknown[0]!r} (a step takes {', '.join(sorted(known))})"


def load_file(
    path: Path, root: Path | None = None, *, trusted: bool = False, bundled: bool = True
) -> list[Case]:
    """The cases of one file; unless ``trusted``, checked against ``root``'s schema and expanded."""
    from tokasm.corpus._yaml import read_json_values  # not imported by a worker

    document: Any = read_json_values(path)
    if not trusted:
        _validate(document, path, (spec_dir() if root is None else root) / "case.schema.json")
    cases = [Case(raw, path, bundled) for raw in document["cases"]]
    if not trusted:
        expand(cases)
    return cases


def load_corpus(root: Path | None = None, user_cases: Iterable[Path] = ()) -> Corpus:
    """Every ``cases/*.yaml`` under ``root`` (default: the spec in use), then ``user_cases``
    (folders of ``*.yaml``, or files): ids unique across both, requirements from its SPEC.md."""
    root = spec_dir() if root is None else root
    corpus = _bundled(root, None if root.is_absolute() else os.getcwd())
    files: list[Path] = []
    for path in user_cases:
        if path.is_dir():
            found = sorted(path.glob("*.yaml"))
            if not found:
                raise CorpusError(f"{path}: no *.yaml case files in this case folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise CorpusError(f"{path}: no such case folder or file")
    if not files:
        return corpus
    once: dict[Path, Path] = {}  # a file given twice (itself and its folder) is read once
    for path in files:
        once.setdefault(path.resolve(), path)
    seen = {case.id: case.source for case in corpus}
    added = _load_files(once.values(), root, seen, bundled=False)
    return dataclasses.replace(corpus, cases=corpus.cases + added)


@cache  # the corpus is read-only while tokasm runs; ``folder`` keys a relative ``root``
def _bundled(root: Path, folder: str | None) -> Corpus:
    files = sorted((root / "cases").glob("*.yaml"))
    if not files:
        raise CorpusError(f"{root / 'cases'}: no *.yaml case files")
    try:
        version = (root / "VERSION").read_text(encoding="utf-8").strip()
    except (OSError, ValueError) as error:
        raise CorpusError(f"{root / 'VERSION'}: cannot read: {error}") from None
    cases = _load_files(files, root, {}, bundled=True)
    return Corpus(version=version, root=root, cases=cases)


def _load_files(
    files: Iterable[Path], root: Path, seen: dict[str, Path], *, bundled: bool
) -> tuple[Case, ...]:
    known, trusted = requirement_ids(root), bundled and shipped(root)
    cases: list[Case] = []
    for path in files:
        for case in load_file(path, root, trusted=trusted, bundled=bundled):
            if case.id in seen:
                raise CorpusError(
                    f"{path}: case {case.id!r}: duplicate id, first defined in {seen[case.id]}"
                )
            if unknown := sorted(set(case.requirements) - set(known)):
                raise CorpusError(
                    f"{path}: case {case.id!r}: requirement ids not in SPEC.md: {unknown}"
                )
            seen[case.id] = path
            cases.append(case)
    return tuple(cases)


def requirement_ids(root: Path | None = None) -> dict[str, str]:
    """Requirement id -> kind (``behaviour`` or ``performance``), read from SPEC.md."""
    return dict(_requirements((spec_dir() if root is None else root).absolute()))


@cache
def _requirements(root: Path) -> tuple[tuple[str, str], ...]:
    try:
        text = (root / "SPEC.md").read_text(encoding="utf-8")
    except (OSError, ValueError) as error:
        raise CorpusError(f"{root / 'SPEC.md'}: cannot read: {error}") from None
    return tuple(re.findall(r"^\s*- \*\*(.+?)\*\* \(([^)]*)\)", text, re.MULTILINE))


def expand(cases: Iterable[Case]) -> None:
    for case in cases:
        _ = case.steps


def profile_gap(
    requested: Iterable[str], cases: Iterable[Case], target: str, features: Set[str]
) -> str | None:
    """Why a profile asked for cannot run on ``target`` (its skip: a silent pass), or None."""
    chosen = list(cases)
    for profile in dict.fromkeys(requested):
        needed = {f for c in chosen if c.profile == profile for f in c.features}
        if missing := sorted(needed - features):
            return (
                f"profile {profile!r} was asked for, but target {target!r} has no "
                f"{', '.join(missing)}, so it cannot run those cases; leave the profile out "
                "to check the target without them"
            )
    return None
