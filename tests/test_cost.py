"""The cost probes (CACHE-FINAL, STREAM-LINEAR): their decision on injected timings, and
end to end.

No test here asserts a time. The decision logic is tested with made-up
timings; the end-to-end tests only assert verdicts, which the probes make
with ratios measured in one run, interleaved, min of several rounds, and
confirmed before they fail, so a loaded machine cannot flip them
(benchmarks/cost_under_load.py runs them under load on purpose).
"""

from __future__ import annotations

import hmac
import json
import shlex
import sys
import threading
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest

from helpers import tokasm_here
from mutants import COST_MUTANTS, JoinsOnceAtFinal, RejoinsAfterFinal
from tokasm.errors import TargetFault
from tokasm.implementations import BACKENDS
from tokasm.protocol._client import CommandTarget, python_testee_command
from tokasm.run._cost import (
    ATTEMPTS,
    CACHE_FINAL,
    PROBE_ID,
    STREAM_LINEAR,
    STREAM_PROBE_ID,
    Timing,
    judge,
    probe_cache_final,
    probe_stream_linear,
)
from tokasm.run.targets import PythonTarget

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from tokasm.corpus.steps import Step
    from tokasm.implementations import Event

TESTS = Path(__file__).resolve().parent
LIMIT = 1.4
CACHED = Timing(short=1e-6, long=1.05e-6)
UNCACHED = Timing(short=1e-6, long=50e-6)


def _measurements(timings: Iterable[Timing]) -> tuple[list[Timing], Callable[[], Timing]]:
    """A measure function handing out ``timings`` in turn, and the list of those it gave."""
    given: list[Timing] = []
    source = iter(timings)

    def measure() -> Timing:
        given.append(next(source))
        return given[-1]

    return given, measure


def test_a_cached_target_passes_at_the_first_measurement() -> None:
    given, measure = _measurements([CACHED, UNCACHED])
    verdict = judge(measure, LIMIT)
    assert not verdict.grows
    assert given == [CACHED]


def test_one_slow_measurement_is_confirmed_before_failing_and_a_pass_wins() -> None:
    given, measure = _measurements([UNCACHED, UNCACHED, CACHED])
    verdict = judge(measure, LIMIT)
    assert not verdict.grows
    assert len(given) == 3
    assert verdict.best == CACHED


def test_fails_only_when_every_attempt_exceeds_the_limit() -> None:
    given, measure = _measurements(repeat(UNCACHED))
    verdict = judge(measure, LIMIT)
    assert verdict.grows
    assert len(given) == ATTEMPTS


def test_the_limit_itself_passes_and_just_above_fails() -> None:
    at_limit = Timing(1.0, LIMIT)
    above = Timing(1.0, LIMIT * 1.01)
    assert not judge(lambda: at_limit, LIMIT).grows
    assert judge(lambda: above, LIMIT).grows


def test_the_verdict_reports_the_fastest_read_of_each_side_over_all_measurements() -> None:
    _, measure = _measurements([Timing(2.0, 40.0), Timing(1.0, 30.0), Timing(3.0, 20.0)])
    verdict = judge(measure, LIMIT)
    assert verdict.grows
    assert (verdict.best.short, verdict.best.long) == (1.0, 20.0)


def test_a_zero_short_time_is_an_infinite_ratio() -> None:
    assert Timing(0.0, 1e-6).ratio == float("inf")


class _Wrong:
    """Reads back another text: the probe cannot measure it, and says why."""

    def apply(self, event: Event) -> str | None:
        return "nope" if event.get("final") else None

    def get(self, message_id: str) -> str | None:
        return "nope"


class _Faulting(PythonTarget):
    """A subject whose testee dies after a few requests."""

    def __init__(self) -> None:
        super().__init__(JoinsOnceAtFinal, "faulting")
        self.left = 100

    def perform_raw(self, step: Step) -> object:
        self.left -= 1
        if self.left < 0:
            raise TargetFault("exited with code 1")
        return super().perform_raw(step)


@pytest.mark.parametrize("probe", [probe_cache_final, probe_stream_linear])
def test_a_target_reading_back_a_wrong_text_is_not_measured_saying_why(
    probe: Callable[[PythonTarget], object],
) -> None:
    """Skipped, not failed: the corpus cases say what is wrong, and no cost rule is blamed."""
    result = probe(PythonTarget(_Wrong, "wrong"))
    assert result.outcome == "skipped"  # type: ignore[attr-defined]
    assert result.message.startswith("not measured: ")  # type: ignore[attr-defined]
    assert "returned 'nope'" in result.message  # type: ignore[attr-defined]


def test_a_testee_fault_errors_the_probe() -> None:
    result = probe_cache_final(_Faulting())
    assert result.outcome == "errored"
    assert "exited with code 1" in result.message


def test_uncached_is_flagged_and_the_same_code_with_the_cache_passes_showing_its_figure() -> None:
    flagged = probe_cache_final(PythonTarget(RejoinsAfterFinal, "uncached"))
    assert (flagged.case_id, flagged.outcome) == (PROBE_ID, "failed")
    assert flagged.message.startswith("reads after final grow with the message: a read after ")
    assert flagged.requirements == (CACHE_FINAL,)
    cached = probe_cache_final(PythonTarget(JoinsOnceAtFinal, "cached"))
    assert (cached.outcome, cached.message) == ("passed", "")
    assert cached.note.startswith("a read after final of ")
    assert "x a short text's read and a copy of the text" in cached.note


@pytest.mark.parametrize("name", list(COST_MUTANTS))
def test_every_cost_mutant_is_flagged(name: str) -> None:
    result = probe_cache_final(PythonTarget(COST_MUTANTS[name], name))
    assert result.outcome == "failed", result.note
    assert result.message.startswith("reads after final grow with the message")


@pytest.mark.parametrize("backend", [name for name in BACKENDS if name != "naive-join"])
def test_every_cached_backend_passes(backend: str) -> None:
    assert probe_cache_final(PythonTarget(BACKENDS[backend], backend)).outcome == "passed"


class FastPathForTheLastFinalized(JoinsOnceAtFinal):
    """Correct (CACHE-FINAL: cached at finalization, never re-joined): the message finalized
    last is read without the lock that guards every other read. Its reads cost the same
    whatever a message's length; the probe once finalized the short message last, and
    blamed this fast path on the long one's parts (ratios 1.7 to 2.0)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._last: tuple[str | None, str | None] = (None, None)

    def apply(self, event: Event) -> str | None:
        with self._lock:
            result = super().apply(event)
        if event.get("final", False):
            self._last = (event["id"], result)
        return result

    def get(self, message_id: str) -> str | None:
        last_id, last_text = self._last
        if message_id == last_id:
            return last_text
        with self._lock:
            return super().get(message_id)


class CachedWithAFastPathForWholeMessages(JoinsOnceAtFinal):
    """Correct (CACHE-FINAL: every text cached at finalization): a message that arrives
    whole, its delta and final in one event, is kept in a dict read without the lock that
    guards every streamed one. The probe once sent its short message that way and its long
    one streamed, and blamed the lock on the long one's parts (ratios 1.6 to 1.9)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Condition()
        self._whole: dict[str, str] = {}

    def apply(self, event: Event) -> str | None:
        key, delta = event["id"], event.get("delta")
        if key in self._whole:
            return self._whole[key] if event.get("final", False) else None
        with self._lock:
            if delta is not None and event.get("final", False) and key not in self._parts:
                self._whole[key] = delta
                return delta
            return super().apply(event)

    def get(self, message_id: str) -> str | None:
        whole = self._whole.get(message_id)
        if whole is not None:
            return whole
        with self._lock:
            return super().get(message_id)


class _Held:
    """A text behind a Condition of its own: a reader waits for it until it is complete."""

    __slots__ = ("done", "text")

    def __init__(self, text: str) -> None:
        self.done = threading.Condition()
        self.text: str | None = text

    def read(self) -> str:
        with self.done:
            self.done.wait_for(lambda: self.text is not None)
            return cast("str", self.text)


class CachedWithALockForLongMessages(JoinsOnceAtFinal):
    """Correct (CACHE-FINAL: joined once, at final): a message of more than 8 parts is kept
    in a holder read under a lock of its own, so its reads cost a lock more than a short
    one's, whatever its length. In process, where a read costs the kit half a microsecond,
    the limit of 1.4 took that for growth (an adversarial pass: ratios 1.4 to 1.8)."""

    def __init__(self) -> None:
        super().__init__()
        self._held: dict[str, _Held] = {}

    def _text(self, key: str) -> str:
        held = self._held.get(key)
        if held is not None:
            return held.read()
        text = super()._text(key)
        if key in self._finalized and len(self._parts[key]) > 8:
            self._held[key] = _Held(text)
        return text


class _LongText(str):
    """A completed long text, with the number of parts it was made of."""

    __slots__ = ("parts",)
    parts: int


class ReturnsAStrSubclassForLongTexts(JoinsOnceAtFinal):
    """Correct: a message of more than 256 parts is finalized, once, into a ``str`` subclass
    that carries its part count, cached and returned as is. The kit made each timed answer
    a plain ``str``, copying the long texts' 100,000 characters and not the short ones'
    (an adversarial pass: ratios 4.0 to 4.8)."""

    def _text(self, key: str) -> str:
        text = super()._text(key)
        if key in self._finalized and type(text) is str and len(self._parts[key]) > 256:
            text = self._done[key] = _LongText(text)
            text.parts = len(self._parts[key])
        return text


class KeepsTheNewestTextsAtHand(JoinsOnceAtFinal):
    """Correct: the three texts finalized last stay in a dict at hand; older ones move to an
    archive keyed by a keyed hash of their id, read the same way whatever their length.
    The probe finalized its long messages before its short ones, so only the long ones
    were archived (an adversarial pass with an archive thread: ratios 48 to 68)."""

    def __init__(self) -> None:
        super().__init__()
        self._at_hand: dict[str, str] = {}
        self._archive: dict[str, str] = {}

    def _key(self, message_id: str) -> str:
        return hmac.new(
            b"archive", message_id.encode("utf-8", "surrogatepass"), "sha256"
        ).hexdigest()

    def apply(self, event: Event) -> str | None:
        text = super().apply(event)
        key = event["id"]
        if text is not None and key not in self._at_hand and self._key(key) not in self._archive:
            self._at_hand[key] = text
            if len(self._at_hand) > 3:
                old = next(iter(self._at_hand))
                self._archive[self._key(old)] = self._at_hand.pop(old)
        return text

    def get(self, message_id: str) -> str | None:
        text = self._at_hand.get(message_id)
        if text is None:
            text = self._archive.get(self._key(message_id))
        return text if text is not None else super().get(message_id)


class _Copied(str):
    __slots__ = ()


class CopiesTheTextAtEachRead(JoinsOnceAtFinal):
    """Correct (CACHE-FINAL: joined once, at final): each read returns a new ``str`` subclass
    copy of the cached text, as a rich-text library might. A copy is not a re-join: the
    probe allows one per read, but not a decode (which costs many copies)."""

    def get(self, message_id: str) -> str | None:
        text = super().get(message_id)
        return None if text is None else _Copied(text)


@pytest.mark.parametrize(
    "cached",
    [
        FastPathForTheLastFinalized,
        CachedWithAFastPathForWholeMessages,
        CachedWithALockForLongMessages,
        ReturnsAStrSubclassForLongTexts,
        KeepsTheNewestTextsAtHand,
        CopiesTheTextAtEachRead,
    ],
)
def test_a_correct_fast_path_is_not_taken_for_growth(cached: type[JoinsOnceAtFinal]) -> None:
    result = probe_cache_final(PythonTarget(cached, cached.__name__))  # each failed every run
    assert result.outcome == "passed", result.message


def test_over_the_protocol_uncached_is_flagged_and_cached_passes(tmp_path: Path) -> None:
    """The kit in process, the targets in testee processes started in this folder."""

    def testee(target: str) -> str:
        return shlex.join([sys.executable, "-m", "tokasm.protocol.testee", target])

    report = tmp_path / "report.json"
    ran = tokasm_here(
        TESTS,
        "check",
        "-q",
        "-k",
        PROBE_ID,
        "--fuzz-examples",
        "0",
        "--json",
        str(report),
        "--cmd",
        testee("mutants:RejoinsAfterFinal"),
        "--cmd",
        testee("mutants:JoinsOnceAtFinal"),
        "--cmd",  # says it is naive-join: a name a testee gives itself lists no failure
        testee("naive-join"),
    )
    assert ran.code == 1, ran.out + ran.err
    runs = json.loads(report.read_text(encoding="utf-8"))["runs"]
    outcomes = {run["target"]: [case["outcome"] for case in run["cases"]] for run in runs}
    assert outcomes == {
        "mutants:RejoinsAfterFinal": ["failed"],
        "mutants:JoinsOnceAtFinal": ["passed"],
        "naive-join": ["failed"],
    }
    assert "FAILED mutants:RejoinsAfterFinal::cost.cache-final [CACHE-FINAL]" in ran.out


def test_stream_linear_finds_a_copy_per_delta_without_failing_unless_strict() -> None:
    found = probe_stream_linear(PythonTarget(BACKENDS["str-concat"], "str-concat"))
    assert (found.case_id, found.outcome, found.message) == (STREAM_PROBE_ID, "passed", "")
    assert found.requirements == (STREAM_LINEAR,)
    assert found.note.startswith("appends grow with the length of the message's text: ")
    strict = probe_stream_linear(PythonTarget(BACKENDS["str-concat"], "str-concat"), strict=True)
    assert strict.outcome == "failed"
    assert strict.message.startswith("appends grow with the length of the message's text: ")


@pytest.mark.parametrize("backend", ["chunked", "list-join", "stringio"])
def test_stream_linear_finds_nothing_in_linear_accumulators(backend: str) -> None:
    result = probe_stream_linear(PythonTarget(BACKENDS[backend], backend), strict=True)
    assert result.outcome == "passed", result.message
    assert result.note.startswith("an append to a text of ")


def test_stream_linear_over_the_protocol_finds_a_copy_per_delta_only() -> None:
    def probed(target: str) -> str:
        subject = CommandTarget(python_testee_command(target))
        try:
            return probe_stream_linear(subject, strict=True).outcome
        finally:
            subject.close()

    assert (probed("str-concat"), probed("chunked")) == ("failed", "passed")
