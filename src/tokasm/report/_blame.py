"""Group a target's failures by the rule most likely broken, worst first.

Evidence per failing case: the failing step's situation, replayed on a model of the case and
refined by its ``Failure`` record (weight 1, ``WEAK`` ones 0.2), and each rule the case lists
(1 / the number listed). A rule scores its failing weight times the share of its weight over
every case that ran that failed; a case is blamed on its best-scoring candidate.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from tokasm.corpus.steps import Apply, Raises, ReadSince

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from tokasm.corpus._load import Case
    from tokasm.corpus.steps import Step
    from tokasm.run.results import CaseResult, Failure, TargetRun

#: The rule a failing step's situation points at, by situation.
SITUATIONS: dict[str, str] = {
    "raised on a well-formed event": "EVT-WELLFORMED",
    "raised on an id that names an attribute": "EVT-ID-ANY",
    "after a refused event": "STRICT-STATE-UNCHANGED",
    "the empty id": "EVT-ID-ANY",
    "an id like another but for case, spaces, normalization or a suffix": "EVT-ID-ANY",
    "event with extra keys": "EVT-EXTRA-KEYS",
    "message sent extra keys": "EVT-EXTRA-KEYS",
    "message of thousands of deltas or a long one": "APPEND-LONG",
    "one of hundreds of open messages": "INTERLEAVE",
    "text with the right characters in another order": "ORDER",
    "text missing its earlier deltas": "APPEND",
    "final answered without its own delta": "FINAL-RETURN",
    "final on a finalized id": "AFTER-REFINAL",
    "non-final apply on a finalized id": "AFTER-NONFINAL",
    "final on an unseen id": "FINAL-UNSEEN",
    "final on an open id answered None": "FINAL-RETURN",  # a forgotten return
    "final on an open id": "FINAL-RETURN",
    "non-final apply with 'final: false'": "EVT-SHAPE",
    "non-final apply": "NONFINAL-NONE",
    "get of an unknown id": "GET-UNKNOWN",
    "get after deltas sent past final": "AFTER-DELTA-IGNORED",
    "get of a message created without a delta, answered None": "CREATE",
    "get of a message of empty deltas only, answered None": "APPEND-EMPTY",
    "get of a message answered None": "GET-TEXT",
    "a read answered part of its text": "GET-TEXT",
    "a read answered what an earlier read got": "GET-TEXT",
    "text from outside the case": "ASM-STATE",
    "text holding another message's deltas": "EVT-ID-ANY",
    "text missing a delta that repeats an earlier one": "APPEND-REPEAT",
    "text with some deltas or characters changed": "APPEND-EXACT",
    "text with its lone surrogates replaced": "SURR-LONE",
    "get of a message": "GET-TEXT",
    "read_since of an unknown id": "INC-UNKNOWN",
    "read_since at or past the end": "INC-OFFSET-END",
    "read_since within the text": "INC-READ-SINCE",
}
#: Situations every case meets, where a wrong text shows whatever broke it: weak evidence.
WEAK = frozenset({"final on an open id", "get of a message"})
#: Situations where the answer itself (an exception, a reordered text) says more.
_ORDINARY = WEAK | {"final on an unseen id", "non-final apply", "get after deltas sent past final"}
_WEAK_WEIGHT = 0.2
#: What ``_Replay._get`` says with no answer known; the answer may tell these apart further.
_GETS = frozenset({"get of an unknown id", "get after deltas sent past final", "get of a message"})
#: Situations an answer refines: judging the failing step reads its failure record.
_ANSWERED = _ORDINARY | _GETS

_BROKEN = ("failed", "errored")
#: Failure kinds of a case its target's process ended or hung in, or that a circuit breaker
#: left unrun (no failure record): no evidence of any rule.
_FAULTS = frozenset({"testee-fault", "hung", "exited", "crashed"})
_RAN = ("passed", "failed", "errored", "xfailed")
_UNLISTED = "(no rule listed)"
_SHOWN = 5  # groups shown per target
_EVENT_KEYS = frozenset({"id", "delta", "final"})
_LONG_PARTS = 1000
_LONG_TEXT = 10_000
_MANY_OPEN = 100
_SURROGATES = re.compile("[\ud800-\udfff]")
_REPLACED = re.compile("[?\ufffd]")  # what a surrogate is replaced by
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SUFFIX = re.compile(r"[:#|/._\x00-](done|final|finished|end|parts|text)$")  # a marker key
#: Ids an implementation keeping texts as attributes or beside a dict's methods trips on.
_ATTRIBUTES = frozenset({*dir(dict), "apply", "get", "read_since", "__dict__"})
_OTHERS = 1000  # deltas of other messages a wrong text is searched for, at most


@lru_cache(maxsize=1 << 14)  # an id recurs with each of its deltas
def _id_keys(message_id: str) -> tuple[str, ...]:
    """Keys a careless implementation might merge distinct ids by (EVT-ID-ANY)."""
    folded = unicodedata.normalize("NFKC", message_id).casefold().strip()
    return ("folded:" + folded, "stem:" + _SUFFIX.sub("", message_id))


@dataclass
class _Message:
    """A message as the replay knows it."""

    length: int = 0
    final: bool = False
    extra_keys: bool = False
    touched_after_final: bool = False
    deltas: list[str] = field(default_factory=list)
    reads: list[int] = field(default_factory=list)  # the text's length at each read

    @property
    def long(self) -> bool:
        return len(self.deltas) >= _LONG_PARTS or self.length >= _LONG_TEXT


def _delta(step: Step) -> object:
    event = step.event if isinstance(step, Apply) else None
    return event.get("delta") if isinstance(event, dict) else None


def _weight(found: str) -> float:
    return _WEAK_WEIGHT if found in WEAK else 1.0


class _Replay:
    """A case replayed once, no answer known: each step's situation, and the last one's message."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = steps
        self.instances: dict[str, dict[str, _Message]] = {}
        self.refused: set[str] = set()
        self.keys: defaultdict[tuple[str, str], set[str]] = defaultdict(set)  # (instance, key): ids
        self.open_messages: Counter[str] = Counter()  # by instance: kept, not counted
        self.unknown_reads: set[tuple[str, str]] = set()  # (instance, id) read unknown
        self.found: list[str | None] = []
        self.chars: set[str] = set()  # every character the case's deltas hold
        self.rises: list[tuple[int, str, float]] = []  # (index, rule, weight met from there on)
        met: dict[str, float] = {}
        for index, step in enumerate(steps):
            situation = self.situation(step)
            self.found.append(situation)
            delta = _delta(step)
            if isinstance(delta, str):
                self.chars.update(delta)
            if situation is not None:
                rule, weight = SITUATIONS[situation], _weight(situation)
                if weight > met.get(rule, 0.0):
                    met[rule] = weight
                    self.rises.append((index, rule, weight))

    def message(self, step: Step) -> _Message | None:
        """The message of ``step`` as the replay left it (a failing last step is judged by it)."""
        return self.instances.get(step.instance, {}).get(str(step.message_id))

    def situation(self, step: Step) -> str | None:
        """A step's situation, with no answer known; the replay's state moved past it."""
        if isinstance(step.expect, Raises):
            self.refused.add(step.instance)
            return None
        if step.instance in self.refused:
            return "after a refused event"
        message_id = step.message_id
        if not isinstance(message_id, str):
            return None
        messages = self.instances.setdefault(step.instance, {})
        shared = self._shared(step.instance, message_id)
        if isinstance(step, Apply):
            assert isinstance(step.event, dict)
            found = self._apply(step.event, messages.get(message_id))
            self._record(step.instance, step.event, messages)
            return shared or found
        return shared or self._read(step, messages.get(message_id))

    def _read(self, step: Step, message: _Message | None) -> str:
        if message is not None and message.extra_keys:
            return "message sent extra keys"
        if message is not None and message.long:
            return "message of thousands of deltas or a long one"
        if self.open_messages[step.instance] >= _MANY_OPEN:
            return "one of hundreds of open messages"
        if isinstance(step, ReadSince):
            if message is None:
                return "read_since of an unknown id"
            at_end = step.offset >= message.length
            return "read_since at or past the end" if at_end else "read_since within the text"
        if message is None:
            self.unknown_reads.add((step.instance, str(step.message_id)))
        else:
            message.reads.append(message.length)  # the length it read
        return _get(message, answered_none=False)

    def _shared(self, instance: str, message_id: str) -> str | None:
        if message_id == "":
            return "the empty id"
        for key in _id_keys(message_id):  # loops, not generators: this runs for every step
            ids = self.keys.get((instance, key), ())
            if len(ids) > (message_id in ids):  # another id shares the key
                return "an id like another but for case, spaces, normalization or a suffix"
        return None

    @staticmethod
    def _apply(event: dict[str, object], message: _Message | None) -> str:
        final = event.get("final") is True
        if not event.keys() <= _EVENT_KEYS:
            return "event with extra keys"
        if message is not None and message.final:
            return "final on a finalized id" if final else "non-final apply on a finalized id"
        if final:
            if message is None:
                return "final on an unseen id"
            if message.long:
                return "message of thousands of deltas or a long one"
            return "final on an open id"
        return "non-final apply with 'final: false'" if "final" in event else "non-final apply"

    def _record(self, instance: str, event: dict[str, Any], messages: dict[str, _Message]) -> None:
        message_id = str(event["id"])
        message = messages.get(message_id)
        if message is None:
            for key in _id_keys(message_id):
                self.keys[(instance, key)].add(message_id)
            message = messages[message_id] = _Message()
            self.open_messages[instance] += 1
        delta = event.get("delta")
        message.extra_keys |= not event.keys() <= _EVENT_KEYS
        if message.final:
            message.touched_after_final |= "delta" in event
        elif isinstance(delta, str):
            message.deltas.append(delta)
            message.length += len(delta)
        if not message.final and event.get("final") is True:
            message.final = True
            self.open_messages[instance] -= 1


def _get(message: _Message | None, *, answered_none: bool) -> str:
    if message is None:
        return "get of an unknown id"
    if message.touched_after_final and not answered_none:
        return "get after deltas sent past final"
    if answered_none:
        if not message.deltas:
            return "get of a message created without a delta, answered None"
        if not message.length:
            return "get of a message of empty deltas only, answered None"
        return "get of a message answered None"
    return "get of a message"


def _dropped(deltas: Sequence[str], text: str) -> list[int] | None:
    """Which ``deltas`` ``text`` leaves out if it is the rest joined in order, else None."""
    at, dropped = 0, []
    for index, delta in enumerate(deltas):
        if delta and text.startswith(delta, at):
            at += len(delta)
        else:
            dropped.append(index)
    return dropped if at == len(text) else None


def _foreign(expected: str, actual: str, chars: set[str]) -> bool:
    """Whether ``actual`` starts and ends unlike ``expected`` and is mostly characters no
    delta of the case holds: a text from another case, kept where no state should be."""
    if actual[0] == expected[:1] or actual[-1] == expected[-1:]:
        return False
    present = sum(map(actual.count, chars.intersection(actual)))
    return 2 * (len(actual) - present) > len(actual)


def _stale(step: Step, actual: str, seen: _Message, dropped: list[int] | None) -> bool:
    """Whether a read that answered the start of its text reads like a stale view: the text
    an earlier read got, or a read of an open message cut within a delta."""
    read = not isinstance(step, Apply)
    if dropped is None:  # a control character may have changed what came before it
        return read and not _CONTROL.search(seen.deltas[-1])
    return len(actual) in seen.reads[: len(seen.reads) - read]  # the reads before its own


def _holds_others(step: Step, expected: str, actual: str, replay: _Replay) -> bool:
    """Whether ``actual`` holds another message's delta that ``expected`` lacks: ids merged."""
    messages = replay.instances.get(step.instance, {}).values()
    others = [d for message in messages for d in message.deltas[:9] if d][:_OTHERS]  # some
    return any(delta in actual and delta not in expected for delta in others)


def _wrong_text(
    step: Step, expected: str, actual: str, seen: _Message | None, replay: _Replay
) -> str | None:
    """What a wrong text says about the bug: its characters, then the deltas that made it."""
    delta, found = _delta(step), None
    if sorted(actual) == sorted(expected):
        found = "text with the right characters in another order"
    elif (
        _SURROGATES.search(expected) and _REPLACED.search(actual) and not _REPLACED.search(expected)
    ):
        found = "text with its lone surrogates replaced"
    elif isinstance(delta, str) and delta and expected == actual + delta:
        found = "final answered without its own delta"
    elif seen is not None:
        deltas = seen.deltas
        dropped = _dropped(deltas, actual)
        if expected.startswith(actual) and _stale(step, actual, seen, dropped):
            found = "a read answered part of its text"
        elif dropped and all(deltas[index] in deltas[:index] for index in dropped):
            found = "text missing a delta that repeats an earlier one"
        elif deltas and actual == deltas[-1] and len(actual) < len(expected):
            found = "text missing its earlier deltas"
        elif dropped is not None or set(actual) <= set(expected):
            found = "text with some deltas or characters changed"
        elif _holds_others(step, expected, actual, replay):
            found = "text holding another message's deltas"
    return found


#: The rule a failure of these kinds breaks, whatever its step: a caller's habits alone, or
#: another caller's events alone, fail the case ("": the rule the runner put first, EVENT-OWNED
#: or, on the strict profile's cases, STRICT-EVENT-UNTOUCHED).
_RULE_OF_KIND = {"event-owned": "", "event-shape": "MAP-ANY", "not-text": "RETURN-TYPE"}


@lru_cache(maxsize=1024)  # a mutant sweep fails a case thousands of times
def _replay(case: Case, stop: int | None) -> _Replay:
    """The case replayed up to step ``stop``: what came after cannot explain a failure."""
    return _Replay(case.steps if stop is None else case.steps[: stop + 1])


def _judged(replay: _Replay, index: int, failure: Failure) -> str | None:
    """The failing step's situation, told apart further by the answer it got."""
    found = replay.found[index]
    if found is None or failure.actual is None:
        return found
    step = replay.steps[index]
    returned = failure.actual.get("returns")
    actual = returned if isinstance(returned, str) else None
    expected = None if failure.expected is None else failure.expected.get("returns")
    if actual and actual != expected:  # a wrong text that is not the message's at all
        if expected and "extra keys" not in found and _foreign(expected, actual, replay.chars):
            found = "text from outside the case"
        elif found == "get of an unknown id" and _holds_others(step, "", actual, replay):
            found = "text holding another message's deltas"
    if found not in _ANSWERED:  # nor those two
        return found
    seen = replay.message(step)
    answered_none = failure.actual == {"returns": None}
    read_unknown = (step.instance, str(step.message_id)) in replay.unknown_reads  # before known
    if answered_none and expected is not None and seen is not None and read_unknown:
        return "a read answered what an earlier read got"
    if found == "final on an open id" and answered_none:
        found = "final on an open id answered None"
    elif found in _GETS:
        found = _get(seen, answered_none=answered_none)
    if "raises" in failure.actual and found in _ORDINARY:
        named = step.message_id in _ATTRIBUTES
        return (
            "raised on an id that names an attribute" if named else "raised on a well-formed event"
        )
    if found not in _ORDINARY or not actual or expected is None:
        return found
    return _wrong_text(step, expected, actual, seen, replay) or found


def _evidence(result: CaseResult, case: Case | None) -> tuple[dict[str, float], dict[str, float]]:
    """(failing, ran) weight per rule: those listed, and the situations of the steps run."""
    broken = result.outcome in _BROKEN
    listed = dict.fromkeys(result.requirements, 1.0 / max(1, len(result.requirements)))
    failing: dict[str, float] = dict(listed) if broken else {}
    ran = dict(listed)
    if case is None or (case.large and not broken):  # its replay would cost more than the run
        return failing, ran
    failure = result.failure if broken else None
    if failure is not None and failure.kind in _RULE_OF_KIND:
        rule = _RULE_OF_KIND[failure.kind] or result.requirements[0]
        failing[rule] = ran[rule] = 1.0
        failure = None
    index = None  # the failing step's, the first so numbered (as a replay stops)
    if failure is not None:
        index = next((at for at, s in enumerate(case.steps) if s.where == failure.where), None)
    replay = _replay(case, index)
    end = len(replay.found) if index is None else index
    for at, rule, weight in replay.rises:  # rises only grow
        if at < end:
            ran[rule] = max(ran.get(rule, 0.0), weight)
    found = None if index is None or failure is None else _judged(replay, index, failure)
    if found is not None:
        rule, weight = SITUATIONS[found], _weight(found)
        for weights in (failing, ran):
            weights[rule] = max(weights.get(rule, 0.0), weight)
    return failing, ran


@dataclass(frozen=True)
class Blame:
    """The failing cases blamed on one rule, and how strongly the evidence points at it."""

    requirement: str
    score: float
    results: tuple[CaseResult, ...]


def blame(results: Sequence[CaseResult], cases: Mapping[str, Case]) -> list[Blame]:
    """The failed and errored cases grouped by their likeliest rule, strongest evidence first;
    a result whose case ``cases`` lacks (a probe) is judged by its listed rules only, and a
    fault (a crash, a hang, a case left unrun) by none."""
    if not any(result.outcome in _BROKEN for result in results):
        return []
    failing_weight: Counter[str] = Counter()
    ran_weight: Counter[str] = Counter()
    candidates: list[tuple[CaseResult, dict[str, float]]] = []
    for result in results:
        failure = result.failure
        faulted = result.outcome == "errored" and (failure is None or failure.kind in _FAULTS)
        if result.outcome not in _RAN or faulted:
            continue
        failing, ran = _evidence(result, cases.get(result.case_id))
        ran_weight.update(ran)
        failing_weight.update(failing)
        if result.outcome in _BROKEN:
            candidates.append((result, failing))
    scores = {rule: weight * weight / ran_weight[rule] for rule, weight in failing_weight.items()}
    groups: dict[str, list[CaseResult]] = defaultdict(list)
    for result, failing in candidates:
        rule = max(failing, key=lambda rid: scores[rid], default=_UNLISTED)
        groups[rule].append(result)
    ranked = [Blame(rid, scores.get(rid, 0.0), tuple(found)) for rid, found in groups.items()]
    return sorted(ranked, key=lambda group: (-group.score, -len(group.results)))


def render_blame(run: TargetRun, cases: Mapping[str, Case]) -> str:
    """``breaks AFTER-REFINAL: 10 cases, first: after.refinal-... - ...``, worst first."""
    groups = blame(run.results, cases)
    if not groups:
        return ""
    lines = [f"likely broken rules of {run.target}, worst first:"]
    for group in groups[:_SHOWN]:
        count = len(group.results)
        first = group.results[0]
        lines.append(
            f"  breaks {group.requirement}: {count} case{'' if count == 1 else 's'}, "
            f"first: {first.case_id} - {first.description}"
        )
    hidden = groups[_SHOWN:]
    if hidden:
        rest = sum(len(group.results) for group in hidden)
        lines.append(f"  and {rest} more cases under {len(hidden)} other rules")
    return "\n".join(lines)
