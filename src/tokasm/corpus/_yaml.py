"""Case files read as YAML holding JSON values only, so every route and language reads the
same events; imported only where case files are read (a worker never reads one)."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import yaml

from tokasm.errors import CorpusError

if TYPE_CHECKING:
    from pathlib import Path

try:  # libyaml's parser when PyYAML has it: several times faster
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

_TAG = "tag:yaml.org,2002:"
#: The largest integer every JSON reader keeps exact (a JavaScript number's 2^53 - 1).
MAX_SAFE_INTEGER = 2**53 - 1
#: Largest case file read: the corpus's largest is 40 KB, and a repeat makes a long case short.
MAX_CASE_FILE_BYTES = 16 << 20
#: Nodes a file's aliases may stand for beyond the nodes written: a "billion laughs" of
#: nested aliases is a few lines that the schema check would walk for days.
MAX_ALIASED_NODES = 1_000_000


def _refuse(problem: str, node: yaml.Node) -> yaml.constructor.ConstructorError:
    return yaml.constructor.ConstructorError(None, None, problem, node.start_mark)


class _JsonLoader(_SafeLoader):
    """Refuses a repeated or non-string key, a YAML-only type and a number JSON cannot carry."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if key_node.tag != _TAG + "str":
                raise _refuse("a mapping key must be a string (JSON)", key_node)
            if key_node.value in seen:
                raise _refuse(f"duplicate key {key_node.value!r}", key_node)
            seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)

    def construct_document(self, node: yaml.Node) -> Any:
        """Built whole at once: a value inside itself (an alias in its own anchor) is refused."""
        sizes: dict[int, int] = {}
        if _size(node, sizes) - len(sizes) > MAX_ALIASED_NODES:
            raise _refuse(f"its aliases stand for more than {MAX_ALIASED_NODES} nodes", node)
        self.deep_construct = True
        return super().construct_document(node)

    def construct_json_int(self, node: yaml.ScalarNode) -> int:
        value: int = self.construct_yaml_int(node)
        if abs(value) > MAX_SAFE_INTEGER:
            raise _refuse(
                f"{value:.3e} is past the integers every JSON reader keeps exact "
                "(MAX_SAFE_INTEGER, 2**53 - 1)",
                node,
            )
        return value

    def construct_json_float(self, node: yaml.ScalarNode) -> float:
        value: float = self.construct_yaml_float(node)
        if not math.isfinite(value):
            raise _refuse(f"{value} is not a JSON number; case files hold JSON values only", node)
        return value

    def construct_not_json(self, node: yaml.Node) -> None:
        kind = node.tag.removeprefix(_TAG)
        raise _refuse(f"a YAML {kind} is not a JSON value; case files hold JSON values only", node)


def _size(node: yaml.Node, sizes: dict[int, int]) -> int:
    """The nodes under ``node`` with every alias expanded; ``sizes`` by node, each counted once
    (a node inside itself counts 0 there: its construction refuses it)."""
    if id(node) not in sizes:
        sizes[id(node)] = 0
        children = node.value if isinstance(node, yaml.SequenceNode) else []
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        sizes[id(node)] = 1 + sum(_size(child, sizes) for child in children)
    return sizes[id(node)]


_JsonLoader.add_constructor(_TAG + "int", _JsonLoader.construct_json_int)
_JsonLoader.add_constructor(_TAG + "float", _JsonLoader.construct_json_float)
for _kind in ("set", "binary", "omap", "pairs", "timestamp", None):
    _JsonLoader.add_constructor(_kind and _TAG + _kind, _JsonLoader.construct_not_json)
# YAML 1.1 reads on/off/yes/no as booleans (the step key ``on`` would become True) and
# 2024-05-01 as a date. As YAML 1.2's core schema: only true and false are booleans.
_JsonLoader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp) for tag, regexp in resolvers if tag[len(_TAG) :] not in ("bool", "timestamp")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_JsonLoader.add_implicit_resolver(
    _TAG + "bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def read_json_values(path: Path) -> Any:
    """The document in the YAML file ``path``; CorpusError naming it if it cannot be read."""
    try:
        if not path.is_file():  # a named pipe would wait for a writer for ever
            raise ValueError("not a regular file")
        with path.open("rb") as stream:
            data = stream.read(MAX_CASE_FILE_BYTES + 1)
        if len(data) > MAX_CASE_FILE_BYTES:
            raise ValueError(f"the file is larger than {MAX_CASE_FILE_BYTES:,} bytes")
        return yaml.load(data.decode("utf-8"), Loader=_JsonLoader)
    except (OSError, ValueError) as error:  # UnicodeDecodeError is a ValueError
        raise CorpusError(f"{path}: cannot read: {error}") from None
    except yaml.YAMLError as error:
        raise CorpusError(f"{path}: not valid YAML: {error}") from None
    except RecursionError:
        raise CorpusError(f"{path}: not valid YAML: nested too deeply") from None
