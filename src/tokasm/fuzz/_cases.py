"""A fuzzer program as a corpus case file, the model's answers as its ``returns``: the fuzzer
runs exactly this case, so the YAML it prints is the test that failed."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import re
import unicodedata
from typing import TYPE_CHECKING, Any

import yaml

from tokasm.corpus import requirement_ids
from tokasm.corpus.model import ModelAssembler
from tokasm.corpus.steps import Apply, Get, ReadSince
from tokasm.fuzz import INSTANCE_NAMES
from tokasm.fuzz._strategies import SENTINEL_DELTAS, SHAPED_IDS

if TYPE_CHECKING:
    from tokasm.corpus.steps import Step

_LONG = 64  # texts at least this long are offered the compact form (and show APPEND-LONG)


def _compact(text: str | None) -> str | dict[str, Any] | None:
    """A long text that repeats a unit of up to 8 characters as a ``repeat`` expression."""
    if text is None or len(text) < _LONG or not (run := re.fullmatch(r"(.{1,8}?)\1+", text, re.S)):
        return text
    return {"repeat": len(text) // len(run[1]), "text": run[1]}


class _Flow(dict[str, Any]):
    """Written on one line, as the hand-written corpus writes events."""


class _CaseDumper(yaml.SafeDumper):
    """Double-quotes a string plain YAML would not keep exact (CR, NUL, edge whitespace), and
    writes a step said twice in full: an anchor would clash with another pasted case's."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


_CaseDumper.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text,
    style='"' if text == "" or not text.isprintable() or text != text.strip() else None,
))  # fmt: skip
_CaseDumper.add_representer(
    _Flow, lambda dumper, flow: dumper.represent_mapping("tag:yaml.org,2002:map", flow, True)
)


def _compact_step(step: dict[str, Any]) -> dict[str, Any]:
    step = {**step, "returns": _compact(step["returns"])}
    for op in ("apply", "read_since"):
        if op in step:
            step[op] = _Flow({k: _compact(v) if k == "delta" else v for k, v in step[op].items()})
    return step


def dump_case_file(document: dict[str, Any]) -> str:
    """The YAML of a ``case_document``; a step said three times or more in a row is written
    once, as a ``repeat`` step."""
    (case,) = document["cases"]
    steps: list[dict[str, Any]] = []
    for step, run in itertools.groupby(map(_compact_step, case["steps"])):
        count = len(list(run))
        steps += [{"repeat": count, "steps": [step]}] if count >= 3 else [step] * count
    return yaml.dump(
        {**document, "cases": [{**case, "steps": steps}]},
        Dumper=_CaseDumper,
        allow_unicode=True,
        sort_keys=False,
        width=1_000_000,  # never fold a string across lines
        default_flow_style=False,
    )


def _rules(step: Step, text: str | None, finalized: bool) -> set[str]:
    """The requirement ids a step shows, given its message's text and state before it."""
    if isinstance(step, ReadSince):
        return {"INC-UNKNOWN" if text is None else
                "INC-OFFSET-END" if step.offset >= len(text) else "INC-READ-SINCE"}  # fmt: skip
    if not isinstance(step, Apply) or not isinstance(step.event, dict):
        return {"GET-UNKNOWN" if text is None else "GET-TEXT"}
    event = step.event
    final, delta = event.get("final") is True, event.get("delta")
    rules = {"EVT-EXTRA-KEYS"} if set(event) - {"id", "delta", "final"} else set()
    if finalized:
        rules.add("AFTER-REFINAL" if final else "AFTER-NONFINAL")
        return rules | ({"AFTER-DELTA-IGNORED"} if delta is not None else set())
    rules.add("FINAL-RETURN" if final else "NONFINAL-NONE")
    rules |= {"FINAL-UNSEEN" if final else "CREATE"} if text is None else set()
    rules |= {"EVT-SHAPE"} if "final" not in event else set()
    if isinstance(delta, str):
        rules.add("APPEND" if delta else "APPEND-EMPTY")
        rules |= {"APPEND-REPEAT"} if delta and delta in (text or "") else set()
        rules |= {"ORDER"} if text and delta else set()
        exotic = not (delta.isascii() and delta.isprintable()) or delta in SENTINEL_DELTAS
        rules |= {"APPEND-EXACT"} if exotic else set()
        rules |= {"APPEND-LONG"} if len(delta) >= _LONG else set()
    return rules


def _absolute(step: Step, text: str | None) -> Step:
    """A ``read_since`` whose offset counts back from the end, counting from the start."""
    if not isinstance(step, ReadSince) or not step.from_end:
        return step
    return dataclasses.replace(step, offset=max(0, len(text or "") - step.offset), from_end=False)


def case_document(program: tuple[Step, ...], description: str) -> dict[str, Any]:
    """A one-case corpus file whose ``returns`` are the model's answers to ``program``, then
    a ``get`` of every message it applied events to (so a wrong text shows); the case id is
    a digest of the steps, so a counterexample always gets the same id."""
    instances = tuple(name for name in INSTANCE_NAMES if any(s.instance == name for s in program))
    models = {name: ModelAssembler() for name in instances}
    finalized: set[tuple[str, str]] = set()
    rules = {"ASM-STATE"} if len(instances) > 1 else set()
    applied = dict.fromkeys(
        (s.instance, str(s.message_id)) for s in program if isinstance(s, Apply)
    )
    steps, reads = [], [Get(instance, None, message_id) for instance, message_id in applied]
    for planned in (*program, *reads):
        key = (planned.instance, str(planned.message_id))
        text = models[planned.instance].get(key[1])
        step = _absolute(planned, text)
        rules |= _rules(step, text, key in finalized)
        if isinstance(step, Apply) and isinstance(step.event, dict) and step.event.get("final"):
            finalized.add(key)
        on = {} if step.instance == instances[0] else {"on": step.instance}
        steps.append({**step.document(), **on, "returns": step.perform(models[step.instance])})
    if len(applied) > len({instance for instance, _ in applied}):
        rules.add("INTERLEAVE")
    ids = {message_id for _, message_id in applied}
    # EVT-ID-ANY: ids a sloppy implementation might compare by a normal form, or special-case
    normal = {unicodedata.normalize("NFC", i).strip().casefold() for i in ids}
    if ids & SHAPED_IDS or "" in ids or len(normal) < len(ids):
        rules.add("EVT-ID-ANY")
    digest = hashlib.sha1(json.dumps(steps, sort_keys=True).encode()).hexdigest()[:10]
    case: dict[str, Any] = {
        "id": f"fuzz.{digest}",
        "description": "A shrunk counterexample found by tokasm fuzz",
        "requirements": sorted(rules, key=list(requirement_ids()).index),  # SPEC order
        **({"profile": "incremental"} if any(isinstance(s, ReadSince) for s in program) else {}),
        **({"instances": list(instances)} if len(instances) > 1 else {}),
        "steps": steps,
    }
    return {"description": " ".join(description.split()), "cases": [case]}
