"""The cache of schema-checked case files changes how fast the corpus loads, never what it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import copy_spec
from tokasm.corpus import _load as corpus_module
from tokasm.corpus._load import CorpusError, load_file
from tokasm.corpus._paths import CACHE_DIR_ENV, cache_dir, spec_dir

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


#: A case as the cache once kept them: the file's id, with steps of its own.
FORGED = {"id": "cache.example", "description": "forged", "requirements": ["APPEND"]}


@pytest.fixture
def spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    return copy_spec(tmp_path)


def _write(spec: Path, text: str) -> Path:
    path = spec / "cases" / "example.yaml"
    path.write_text(CASE.replace("{text}", text), encoding="utf-8")
    return path


def _entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").glob("valid-*"))


def _schema_checks(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files checked against the schema from now on, in order."""
    checked: list[Path] = []
    validate = corpus_module._validate

    def counting(document: object, source: Path, schema_path: Path) -> None:
        checked.append(source)
        validate(document, source, schema_path)

    monkeypatch.setattr(corpus_module, "_validate", counting)
    return checked


def test_a_file_checked_once_is_not_checked_again_and_loads_the_same(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked = _schema_checks(monkeypatch)
    path = _write(spec, "x")
    first = load_file(path, spec)
    assert len(_entries(tmp_path)) == 1
    assert load_file(path, spec) == first
    assert checked == [path]


def test_an_edited_file_is_parsed_and_checked_again(spec: Path) -> None:
    path = _write(spec, "x")
    load_file(path, spec)
    path.write_text(CASE.replace("{text}", "y").replace("returns: null", "returns: 7"))
    with pytest.raises(CorpusError, match="schema violation"):
        load_file(path, spec)


@pytest.mark.parametrize(
    "entry",
    [
        json.dumps({"cases": [{**FORGED, "steps": [{"get": "m", "returns": "forged"}]}]}),
        "{not json",
        "[" * 100_000 + "]" * 100_000,
    ],
    ids=["a-forged-document", "not-json", "deep"],
)
@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_what_an_entry_holds_changes_no_case(
    spec: Path, tmp_path: Path, entry: str, lazy: bool
) -> None:
    """Cases are read from the file: another program that writes into the cache (a
    hostile testee, say) cannot change what the next run checks."""
    path = _write(spec, "x")
    expected = load_file(path, spec)
    for saved in _entries(tmp_path):
        saved.write_text(entry, encoding="utf-8")
    assert load_file(path, spec, lazy=lazy) == expected


def test_an_empty_cache_dir_variable_turns_it_off(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, "")
    checked = _schema_checks(monkeypatch)
    path = _write(spec, "x")
    load_file(path, spec)
    load_file(path, spec)
    assert not (tmp_path / "cache").exists()
    assert checked == [path, path]


def test_the_whole_corpus_reads_the_same_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    files = sorted((spec_dir() / "cases").glob("*.yaml"))
    fresh = [load_file(path) for path in files]
    cached = [load_file(path) for path in files]
    assert cached == fresh
    assert len(_entries(tmp_path)) == len(files)


def test_an_unwritable_cache_folder_changes_nothing(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv(CACHE_DIR_ENV, str(blocker / "cache"))
    assert load_file(_write(spec, "x"), spec)


def test_no_home_folder_means_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither HOME nor a password entry to find one: no cache, rather than a crash of
    every command (Python 3.12 raises, earlier ones answer ``~``)."""

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert cache_dir() is None
    monkeypatch.setattr(Path, "home", staticmethod(lambda: Path("~")))
    assert cache_dir() is None
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
    assert cache_dir() == Path("/somewhere/tokasm")
