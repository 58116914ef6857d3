"""The recommended backend beyond the corpus: compaction, in-place growth, snapshots, read_since.

``chunked`` keeps pending deltas in a list and compacts them into a string
grown in place (see its module docstring). These tests pin what that must
never change: every read equals the model's, across compaction boundaries,
and a string handed to a caller is never altered afterwards. The corpus runs
on this backend like on any other; these add the boundaries it cannot know.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokasm
from tokasm.corpus.model import ModelAssembler
from tokasm.implementations import BACKENDS, DEFAULT_BACKEND, Event, chunked
from tokasm.implementations.chunked import COMPACT_EVERY, ChunkedAssembler

__all__: list[str] = []

K = COMPACT_EVERY


def _deltas(count: int, start: int = 0) -> list[str]:
    """Distinct deltas that say where they belong, so a lost or moved one shows."""
    return [f"<{index}>" for index in range(start, start + count)]


def _stream(assembler: ChunkedAssembler, deltas: list[str], message_id: str = "m") -> None:
    for delta in deltas:
        assert assembler.apply({"id": message_id, "delta": delta}) is None


def test_it_is_the_default_backend() -> None:
    assert tokasm.TokenAssembler is ChunkedAssembler
    assert BACKENDS[DEFAULT_BACKEND] is ChunkedAssembler


@pytest.mark.parametrize("count", [1, K - 1, K, K + 1, 2 * K - 1, 2 * K, 3 * K + 5])
def test_text_is_exact_around_compaction_boundaries(count: int) -> None:
    assembler = ChunkedAssembler()
    deltas = _deltas(count)
    _stream(assembler, deltas)
    assert assembler.get("m") == "".join(deltas)  # GET-TEXT while open
    assert assembler.apply({"id": "m", "final": True}) == "".join(deltas)  # FINAL-RETURN
    assert assembler.get("m") == "".join(deltas)


@pytest.mark.parametrize("count", [1, K - 1, K, K + 1, 3 * K])
def test_reads_between_deltas_do_not_disturb_compaction(count: int) -> None:
    assembler = ChunkedAssembler()
    deltas = _deltas(count)
    for index, delta in enumerate(deltas, 1):
        assembler.apply({"id": "m", "delta": delta})
        if index % 7 == 0:
            assert assembler.get("m") == "".join(deltas[:index])
    assert assembler.apply({"id": "m", "final": True}) == "".join(deltas)


def test_a_snapshot_kept_by_the_caller_never_changes() -> None:
    """The next compaction must copy a string the caller holds, never grow it in place."""
    assembler = ChunkedAssembler()
    first = _deltas(K + 3)
    _stream(assembler, first)
    snapshot = assembler.get("m")
    snapshot_copy = "".join(first)
    more = _deltas(2 * K, start=K + 3)
    _stream(assembler, more)  # crosses two compactions while the snapshot is held
    assert snapshot == snapshot_copy
    assert assembler.get("m") == snapshot_copy + "".join(more)


def test_a_whole_text_from_read_since_zero_is_also_safe_to_keep() -> None:
    assembler = ChunkedAssembler()
    _stream(assembler, _deltas(5))
    whole = assembler.read_since("m", 0)  # may be the compacted string itself
    _stream(assembler, _deltas(2 * K, start=5))
    assert whole == "".join(_deltas(5))


def test_a_hashed_snapshot_stays_intact() -> None:
    """A hashed string cannot be resized in place; the append must still be right."""
    assembler = ChunkedAssembler()
    _stream(assembler, _deltas(K))
    text = assembler.get("m")
    assert text is not None
    seen = {text: True}
    del text
    _stream(assembler, _deltas(K, start=K))
    assert list(seen) == ["".join(_deltas(K))]
    assert assembler.get("m") == "".join(_deltas(2 * K))


def test_wider_characters_after_compaction_keep_the_text_exact() -> None:
    """ASCII, then Latin-1, BMP and astral characters: the string kind widens mid-stream."""
    assembler = ChunkedAssembler()
    deltas = ["a"] * K + ["é"] * K + ["—"] + ["🙂", "x"] * K
    _stream(assembler, deltas)
    assert assembler.read_since("m", K) == "".join(deltas)[K:]
    assert assembler.apply({"id": "m", "final": True}) == "".join(deltas)


def test_unchanged_rereads_return_the_same_string() -> None:
    """The joined text is cached until the next delta (what makes a re-read O(1))."""
    assembler = ChunkedAssembler()
    _stream(assembler, _deltas(K + 1))
    first = assembler.get("m")
    assert assembler.get("m") is first
    assembler.apply({"id": "m", "delta": "!"})
    assert assembler.get("m") == f"{first}!"


def test_the_completed_text_is_cached() -> None:  # CACHE-FINAL
    assembler = ChunkedAssembler()
    _stream(assembler, _deltas(K + 1))
    final = assembler.apply({"id": "m", "final": True})
    assert assembler.get("m") is final
    assert assembler.apply({"id": "m", "final": True}) is final  # AFTER-REFINAL


def test_interleaved_messages_compact_independently() -> None:  # INTERLEAVE
    assembler = ChunkedAssembler()
    expected = {"a": "", "b": "", "c": ""}
    for index in range(3 * K):
        message_id = "abc"[index % 3] if index % 5 else "a"
        delta = f"{message_id}{index};"
        assembler.apply({"id": message_id, "delta": delta})
        expected[message_id] += delta
    for message_id, text in expected.items():
        assert assembler.get(message_id) == text


def test_a_reader_that_advances_sees_every_character_once() -> None:  # INC-READ-SINCE
    assembler = ChunkedAssembler()
    deltas = _deltas(3 * K + 11)
    seen: list[str] = []
    offset = 0
    for index, delta in enumerate(deltas):
        assembler.apply({"id": "m", "delta": delta})
        if index % 3 == 0:
            new_text = assembler.read_since("m", offset)
            assert new_text is not None
            seen.append(new_text)
            offset += len(new_text)
    assembler.apply({"id": "m", "final": True})
    seen.append(assembler.read_since("m", offset) or "")
    assert "".join(seen) == "".join(deltas)
    assert assembler.read_since("m", offset + 10**6) == ""  # INC-OFFSET-END
    assert assembler.read_since("unseen", 0) is None  # INC-UNKNOWN
    assert assembler.get("unseen") is None


_OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("delta"), st.sampled_from("ab"), st.text(max_size=4)),
        st.tuples(st.just("read"), st.sampled_from("abz"), st.integers(0, 40)),
        st.tuples(st.just("final"), st.sampled_from("ab"), st.just(0)),
    ),
    max_size=60,
)


@given(operations=_OPERATIONS)
def test_small_compaction_threshold_matches_the_model(
    operations: list[tuple[str, str, object]],
) -> None:
    """With compaction every 3 deltas, any mix of deltas, reads and finals agrees with the model."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chunked, "COMPACT_EVERY", 3)
        assembler, model = ChunkedAssembler(), ModelAssembler()
        kept: list[tuple[str | None, str | None]] = []
        for kind, message_id, value in operations:
            if kind in ("delta", "final"):
                event: Event = {"id": message_id}
                if kind == "final":
                    event["final"] = True
                else:
                    assert isinstance(value, str)
                    event["delta"] = value
                assert assembler.apply(event) == model.apply(event)
            else:
                assert isinstance(value, int)
                assert assembler.read_since(message_id, value) == model.read_since(
                    message_id, value
                )
                snapshot = assembler.get(message_id)
                assert snapshot == model.get(message_id)
                kept.append((snapshot, model.get(message_id)))
        assert all(snapshot == expected for snapshot, expected in kept)
