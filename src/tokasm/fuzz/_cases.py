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

from tokasm.corpus._load import requirement_ids
from tokasm.corpus.model import ModelAssembler
from tokasm.corpus.steps import Apply, Get, ReadSince
from tokasm.fuzz._strategies import SENTINEL_DELTAS, SHAPED_IDS

if TYPE_CHECKING:
    from tokasm.corpus.steps import Step
    from tokasm.fuzz._strategies import Program

_LONG = 64  # texts at least this long are offered the compact form (and show APPEND-LONG)


def _compact(text: str | None) -> str | dict[str, Any] | None:
    """A long text that repeats a unit of up to 8 characters as a ``repeat`` expression."""
    if text is None or len(text) < _LONG or not (run := re.fullmatch(r"(.{1,8}?)\1+", text, re.S)):
        return text
    return {"repeat": len(text) // len(run[1]), "text": run[1]}


class _Flow(dict[str, Any]):
    """Written on one line, as the hand-written corpus writes events."""


class _CaseDumper(yaml.SafeDumper):
    """Double-quotes a string that plain or single-quoted YAML would not keep exact (line
    breaks, CR, NUL, edge whitespace)."""

    def represent_str(self, data: str) -> yaml.ScalarNode:
        exotic = data == "" or not data.isprintable() or data != data.strip()
        return self.represent_scalar("tag:yaml.org,2002:str", data, style='"' if exotic else None)


_CaseDumper.add_representer(str, _CaseDumper.represent_str)
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
    cases = []
    for case in document["cases"]:
        steps: list[dict[str, Any]] = []
        for step, run in itertools.groupby(map(_compact_step, case["steps"])):
            count = len(list(run))
            steps += [{"repeat": count, "steps": [step]}] if count >= 3 else [step] * count
        cases.append({**case, "steps": steps})
    return yaml.dump(
        {**document, "cases": cases},
        Dumper=_CaseDumper,
        allow_unicode=True,
        sort_keys=False,
        width=1_000_000,  # never fold a string across lines
        default_flow_style=False,
    )


class _Trace:
    """Runs a program on one model per instance: each step in corpus form with the model's
    answer as its ``returns``, and the requirement ids the steps show."""

    def __init__(self, instances: tuple[str, ...]) -> None:
        self.models = {name: ModelAssembler() for name in instances}
        self.default = instances[0]
        self.finalized: set[tuple[str, str]] = set()
        self.appended: dict[tuple[str, str], list[str]] = {}
        self.rules: set[str] = {"ASM-STATE"} if len(instances) > 1 else set()

    def step(self, step: Step) -> dict[str, Any]:
        model, rules = self.models[step.instance], self.rules
        if isinstance(step, ReadSince):  # an offset counted back from the end made absolute
            text = model.get(step.id)
            length = len(text or "")
            offset = max(0, length - step.offset) if step.from_end else step.offset
            rules.add("INC-UNKNOWN" if text is None else
                      "INC-OFFSET-END" if offset >= length else "INC-READ-SINCE")  # fmt: skip
            step = dataclasses.replace(step, offset=offset, from_end=False)
        elif isinstance(step, Get):
            rules.add("GET-UNKNOWN" if model.get(step.id) is None else "GET-TEXT")
        elif isinstance(step, Apply) and isinstance(step.event, dict):
            self._apply(step.instance, step.event, model.get(str(step.event["id"])) is None)
        on = {} if step.instance == self.default else {"on": step.instance}
        return {**step.document(), **on, "returns": step.perform(model)}

    def _apply(self, instance: str, event: dict[str, object], new: bool) -> None:
        key, rules = (instance, str(event["id"])), self.rules
        final, delta = event.get("final") is True, event.get("delta")
        if set(event) - {"id", "delta", "final"}:
            rules.add("EVT-EXTRA-KEYS")
        if key in self.finalized:
            rules.add("AFTER-REFINAL" if final else "AFTER-NONFINAL")
            rules.update(["AFTER-DELTA-IGNORED"] if delta is not None else [])
            return
        if final:
            self.finalized.add(key)
        rules.update(["FINAL-UNSEEN" if final else "CREATE"] if new else [])
        rules.add("FINAL-RETURN" if final else "NONFINAL-NONE")
        rules.update(["EVT-SHAPE"] if "final" not in event else [])
        if not isinstance(delta, str):
            return
        earlier = self.appended.setdefault(key, [])
        rules.add("APPEND" if delta else "APPEND-EMPTY")
        rules.update(["APPEND-REPEAT"] if delta in earlier else [])
        rules.update(["ORDER"] if earlier and delta else [])
        if not (delta.isascii() and delta.isprintable()) or delta in SENTINEL_DELTAS:
            rules.add("APPEND-EXACT")
        rules.update(["APPEND-LONG"] if len(delta) >= _LONG else [])
        earlier.append(delta)


def case_document(program: Program, description: str) -> dict[str, Any]:
    """A one-case corpus file whose ``returns`` are the model's answers to ``program``, then
    a ``get`` of every message it applied events to (so a wrong text shows); the case id is
    a digest of the steps, so a counterexample always gets the same id."""
    trace = _Trace(program.instances)
    applied = dict.fromkeys(
        (step.instance, str(step.message_id)) for step in program.steps if isinstance(step, Apply)
    )
    reads = (Get(instance, None, message_id) for instance, message_id in applied)
    steps = [trace.step(step) for step in (*program.steps, *reads)]
    if len(applied) > len({instance for instance, _ in applied}):
        trace.rules.add("INTERLEAVE")
    ids = {message_id for _, message_id in applied}
    # EVT-ID-ANY: ids a sloppy implementation might compare by a normal form, or special-case
    normal = {unicodedata.normalize("NFC", i).strip().casefold() for i in ids}
    if ids & SHAPED_IDS or "" in ids or len(normal) < len(ids):
        trace.rules.add("EVT-ID-ANY")
    incremental = any(isinstance(step, ReadSince) for step in program.steps)
    digest = hashlib.sha1(json.dumps(steps, sort_keys=True).encode()).hexdigest()[:10]
    case: dict[str, Any] = {
        "id": f"fuzz.{digest}",
        "description": "A shrunk counterexample found by tokasm fuzz",
        "requirements": sorted(trace.rules, key=list(requirement_ids()).index),  # SPEC order
        **({"profile": "incremental"} if incremental else {}),
        **({"instances": list(program.instances)} if len(program.instances) > 1 else {}),
        "steps": steps,
    }
    return {"description": " ".join(description.split()), "cases": [case]}
