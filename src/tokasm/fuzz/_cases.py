"""Turn a fuzzer program into a corpus case file: the model's answers become ``returns``.

The fuzzer runs exactly the case built here, so the YAML it prints is the test that failed.
Text reads back exactly (double quotes and escapes for anything but plain printable text);
long repetitive texts and runs of steps take the schema's compact ``repeat`` forms.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import unicodedata
from functools import cache
from typing import TYPE_CHECKING, Any

import yaml

from tokasm.corpus._load import requirement_ids
from tokasm.corpus.model import ModelAssembler
from tokasm.corpus.steps import Apply, Get, ReadSince, Returns
from tokasm.fuzz._strategies import SENTINEL_DELTAS, SHAPED_IDS

if TYPE_CHECKING:
    from tokasm.corpus.steps import Step
    from tokasm.fuzz._strategies import Program

__all__ = ["case_document", "compact_text", "dump_case_file"]

_COMPACT_FROM = 64  # texts at least this long are offered the compact form
_MIN_RUN = 32  # characters a repeat must cover to be worth a ``repeat`` entry
_MAX_UNIT = 8  # longest repeated unit looked for
_FOLD_PERIODS = (1, 2)  # steps in a run that ``repeat`` folds
_MIN_FOLD = 3  # times a run must be said to be folded


def _best_run(text: str, start: int) -> tuple[str, int]:
    """The repeated unit at ``start`` covering the most characters, and its count."""
    best, best_count = text[start], 1
    for size in range(1, _MAX_UNIT + 1):
        unit = text[start : start + size]
        if len(unit) < size:
            break
        count = 1
        while text.startswith(unit, start + count * size):
            count += 1
        if count * size > len(best) * best_count:
            best, best_count = unit, count
    return best, best_count


def compact_text(text: str) -> str | dict[str, Any]:
    """``text`` itself, or an equivalent ``repeat``/``concat`` expression if shorter."""
    if len(text) < _COMPACT_FROM:
        return text
    parts: list[str | dict[str, Any]] = []
    literal_start = position = 0
    while position < len(text):
        unit, count = _best_run(text, position)
        if len(unit) * count < _MIN_RUN:
            position += 1
            continue
        if literal_start < position:
            parts.append(text[literal_start:position])
        parts.append({"repeat": count, "text": unit})
        position += len(unit) * count
        literal_start = position
    if literal_start < len(text):
        parts.append(text[literal_start:])
    if len(parts) == 1:
        return parts[0]
    return {"concat": parts}


class _Flow(dict[str, Any]):
    """A mapping written on one line, as the hand-written corpus writes events."""


class _CaseDumper(yaml.SafeDumper):
    """Safe dumper that keeps every string exact and events compact."""


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    # Plain or single-quoted YAML folds line breaks and loses CR, NUL and
    # edge whitespace; double quotes with escapes keep every code point.
    exotic = text == "" or not text.isprintable() or text != text.strip()
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style='"' if exotic else None)


def _represent_flow(dumper: yaml.SafeDumper, mapping: _Flow) -> yaml.MappingNode:
    return dumper.represent_mapping("tag:yaml.org,2002:map", mapping, flow_style=True)


_CaseDumper.add_representer(str, _represent_str)
_CaseDumper.add_representer(_Flow, _represent_flow)


def _compact_step(step: dict[str, Any]) -> dict[str, Any]:
    """The step with every text-expression field (ids, deltas, returns) in compact form."""
    compacted = dict(step)
    if "apply" in step:
        event = _Flow(step["apply"])
        for key in ("id", "delta"):
            if key in event:
                event[key] = compact_text(event[key])
        compacted["apply"] = event
    elif "get" in step:
        compacted["get"] = compact_text(step["get"])
    else:
        query = step["read_since"]
        compacted["read_since"] = _Flow(id=compact_text(query["id"]), offset=query["offset"])
    if step["returns"] is not None:
        compacted["returns"] = compact_text(step["returns"])
    return compacted


def _folded(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps with each run of one or two steps said again and again written as a
    ``repeat`` step, as a long stream from a macro is."""
    folded: list[dict[str, Any]] = []
    position = 0
    while position < len(steps):
        best_period, best_count = 1, 1
        for period in _FOLD_PERIODS:
            unit = steps[position : position + period]
            count = 1
            while steps[position + count * period : position + (count + 1) * period] == unit:
                count += 1
            if count >= _MIN_FOLD and count * period > best_count * best_period:
                best_period, best_count = period, count
        if best_count == 1:
            folded.append(steps[position])
        else:
            unit = steps[position : position + best_period]
            folded.append({"repeat": best_count, "steps": unit})
        position += best_count * best_period
    return folded


def dump_case_file(document: dict[str, Any]) -> str:
    """The YAML text of a case file from ``case_document``, ready to save under ``spec/cases``."""
    cases = [
        {**case, "steps": _folded([_compact_step(step) for step in case["steps"]])}
        for case in document["cases"]
    ]
    return yaml.dump(
        {**document, "cases": cases},
        Dumper=_CaseDumper,
        allow_unicode=True,
        sort_keys=False,
        width=1_000_000,  # never fold a string across lines
        default_flow_style=False,
    )


class _Trace:
    """Runs a program on one model per instance, recording expectations and rules touched."""

    def __init__(self, instances: tuple[str, ...]) -> None:
        self.models = {name: ModelAssembler() for name in instances}
        self.finalized: dict[str, set[str]] = {name: set() for name in instances}
        self.rules: set[str] = set()
        self.appended: dict[tuple[str, str], list[str]] = {}

    def apply(self, step: Apply) -> Step:
        model, event = self.models[step.instance], step.event
        assert isinstance(event, dict)  # the fuzzer sends well-formed events
        message_id = str(event["id"])
        final = event.get("final") is True
        delta = event.get("delta")
        if set(event) - {"id", "delta", "final"}:
            self.rules.add("EVT-EXTRA-KEYS")
        if message_id in self.finalized[step.instance]:
            self.rules.add("AFTER-REFINAL" if final else "AFTER-NONFINAL")
            if delta is not None:
                self.rules.add("AFTER-DELTA-IGNORED")
        else:
            self._open(step.instance, message_id, event, model.get(message_id) is None)
        if final:
            self.finalized[step.instance].add(message_id)
        return dataclasses.replace(step, expect=Returns(step.perform(model)))

    def _open(self, instance: str, message_id: str, event: dict[str, object], new: bool) -> None:
        final = event.get("final") is True
        delta = event.get("delta")
        if new:
            self.rules.add("FINAL-UNSEEN" if final else "CREATE")
        self.rules.add("FINAL-RETURN" if final else "NONFINAL-NONE")
        if "final" not in event:
            self.rules.add("EVT-SHAPE")
        if not isinstance(delta, str):
            return
        earlier = self.appended.setdefault((instance, message_id), [])
        self.rules.add("APPEND" if delta else "APPEND-EMPTY")
        if delta in earlier:
            self.rules.add("APPEND-REPEAT")
        if earlier and delta:
            self.rules.add("ORDER")
        if not (delta.isascii() and delta.isprintable()) or delta in SENTINEL_DELTAS:
            self.rules.add("APPEND-EXACT")
        if len(delta) >= _COMPACT_FROM:
            self.rules.add("APPEND-LONG")
        earlier.append(delta)

    def get(self, step: Get) -> Step:
        text = step.perform(self.models[step.instance])
        self.rules.add("GET-UNKNOWN" if text is None else "GET-TEXT")
        return dataclasses.replace(step, expect=Returns(text))

    def read_since(self, step: ReadSince) -> Step:
        """The step with an absolute offset (``from_end`` resolved) and the model's answer."""
        model = self.models[step.instance]
        text = model.get(step.id)
        length = 0 if text is None else len(text)
        offset = max(0, length - step.offset) if step.from_end else step.offset
        if text is None:
            self.rules.add("INC-UNKNOWN")
        else:
            self.rules.add("INC-OFFSET-END" if offset >= length else "INC-READ-SINCE")
        resolved = dataclasses.replace(step, offset=offset, from_end=False)
        return dataclasses.replace(resolved, expect=Returns(resolved.perform(model)))

    def program_rules(self, program: Program) -> None:
        """Rules shown by the program as a whole rather than by one step."""
        if len(program.instances) > 1:
            self.rules.add("ASM-STATE")
        applied = {
            (step.instance, str(step.message_id))
            for step in program.steps
            if isinstance(step, Apply)
        }
        if len(applied) > len({instance for instance, _ in applied}):
            self.rules.add("INTERLEAVE")
        ids = {message_id for _, message_id in applied}
        if ids & SHAPED_IDS or "" in ids or len({_id_key(i) for i in ids}) < len(ids):
            self.rules.add("EVT-ID-ANY")


def _id_key(message_id: str) -> str:
    """What a sloppy implementation might compare ids by (EVT-ID-ANY forbids it)."""
    return unicodedata.normalize("NFC", message_id).strip().casefold()


@cache
def _spec_order() -> list[str]:
    """Requirement ids in SPEC.md order, so generated cases list them as the spec does."""
    return list(requirement_ids())


def _step(trace: _Trace, step: Step, default_instance: str) -> dict[str, Any]:
    """The step in corpus form, with the model's answer as its ``returns``."""
    resolved: Step = getattr(trace, step.op)(step)
    document: dict[str, Any] = resolved.document()
    if step.instance != default_instance:
        document["on"] = step.instance
    assert isinstance(resolved.expect, Returns)
    document["returns"] = resolved.expect.value
    return document


def case_document(program: Program, description: str) -> dict[str, Any]:
    """A one-case corpus file whose ``returns`` are the model's answers to ``program``.

    After the program, every message it applied events to is read with
    ``get``, so a wrong text shows even if the program never read it.
    ``description`` (one line) describes the file; the case id is a digest of
    the steps, so the same counterexample always gets the same id.
    """
    trace = _Trace(program.instances)
    applied = [
        (step.instance, str(step.message_id)) for step in program.steps if isinstance(step, Apply)
    ]
    final_reads = [
        Get(instance, None, message_id) for instance, message_id in dict.fromkeys(applied)
    ]
    steps = [_step(trace, step, program.instances[0]) for step in (*program.steps, *final_reads)]
    trace.program_rules(program)
    order = _spec_order()
    digest = hashlib.sha1(json.dumps(steps, sort_keys=True).encode()).hexdigest()[:10]
    case: dict[str, Any] = {
        "id": f"fuzz.{digest}",
        "description": "A shrunk counterexample found by tokasm fuzz",
        "requirements": sorted(trace.rules, key=order.index),
    }
    if any(isinstance(step, ReadSince) for step in program.steps):
        case["profile"] = "incremental"
    if len(program.instances) > 1:
        case["instances"] = list(program.instances)
    case["steps"] = steps
    return {"description": " ".join(description.split()), "cases": [case]}
