"""The cache of validated case documents changes how fast the corpus loads, never what it is."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from helpers import copy_spec
from tokasm.conformance._document_cache import CACHE_DIR_ENV
from tokasm.conformance._paths import spec_dir
from tokasm.conformance.corpus import CorpusError, load_file

if TYPE_CHECKING:
    from pathlib import Path

CASE = """\
description: Cases for the cache test
cases:
  - id: cache.example
    description: A case for the cache test
    requirements: [APPEND]
    steps:
      - apply: {id: m, delta: "x"}
        returns: null
      - get: m
        returns: "{text}"
"""


@pytest.fixture
def spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    return copy_spec(tmp_path)


def _write(spec: Path, text: str) -> Path:
    path = spec / "cases" / "example.yaml"
    path.write_text(CASE.replace("{text}", text), encoding="utf-8")
    return path


def test_a_cached_file_loads_to_the_same_cases(spec: Path, tmp_path: Path) -> None:
    path = _write(spec, "x")
    first = load_file(path, spec)
    assert len(list((tmp_path / "cache").glob("cases-*.json"))) == 1
    assert load_file(path, spec) == first


def test_an_edited_file_is_parsed_and_checked_again(spec: Path) -> None:
    path = _write(spec, "x")
    load_file(path, spec)
    path.write_text(CASE.replace("{text}", "y").replace("returns: null", "returns: 7"))
    with pytest.raises(CorpusError, match="schema violation"):
        load_file(path, spec)


def test_a_corrupt_entry_is_ignored(spec: Path, tmp_path: Path) -> None:
    path = _write(spec, "x")
    expected = load_file(path, spec)
    for entry in (tmp_path / "cache").glob("cases-*.json"):
        entry.write_text("{not json", encoding="utf-8")
    assert load_file(path, spec) == expected


def test_a_changed_entry_is_read_from_the_file_again_when_a_lazy_case_expands(
    spec: Path, tmp_path: Path
) -> None:
    """tokasm's own corpus expands a case when it first runs, long after its cache entry
    was read: an entry changed so that the case no longer expands gives the file's case,
    and the file's document is saved over it."""
    path = _write(spec, "x")
    [expected] = load_file(path, spec)
    [saved] = (tmp_path / "cache").glob("cases-*.json")
    entry = json.loads(saved.read_text(encoding="utf-8"))
    entry["cases"][0]["steps"][0]["on"] = "undeclared"
    saved.write_text(json.dumps(entry), encoding="utf-8")
    [case] = load_file(path, spec, lazy=True)
    assert case == expected
    assert "on" not in json.loads(saved.read_text(encoding="utf-8"))["cases"][0]["steps"][0]


@pytest.mark.parametrize(
    "entry",
    [
        '{"cases": [{"id": "cache.example"}]}',
        "[1, 2]",
        "{}",
        "[" * 100_000 + "]" * 100_000,
    ],
    ids=["no-steps", "a-list", "no-cases", "deep"],
)
def test_an_entry_that_is_json_but_not_what_was_saved_is_ignored(
    spec: Path, tmp_path: Path, entry: str
) -> None:
    path = _write(spec, "x")
    expected = load_file(path, spec)
    for saved in (tmp_path / "cache").glob("cases-*.json"):
        saved.write_text(entry, encoding="utf-8")
    assert load_file(path, spec) == expected


def test_an_empty_cache_dir_variable_turns_it_off(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, "")
    load_file(_write(spec, "x"), spec)
    assert not (tmp_path / "cache").exists()


def test_the_whole_corpus_reads_the_same_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    files = sorted((spec_dir() / "cases").glob("*.yaml"))
    fresh = [load_file(path) for path in files]
    cached = [load_file(path) for path in files]
    assert cached == fresh
    assert len(list((tmp_path / "cache").glob("cases-*.json"))) == len(files)


def test_an_unwritable_cache_folder_changes_nothing(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv(CACHE_DIR_ENV, str(blocker / "cache"))
    assert load_file(_write(spec, "x"), spec)
