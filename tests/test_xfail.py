"""Expected-failure lists: parsing, judging, staleness, and writing a list that reloads."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import pytest

from mutants import RefinalReturnsNone
from tokasm.corpus._load import load_corpus
from tokasm.implementations import ListJoinAssembler
from tokasm.report import XfailError, apply_xfail, load_xfail, render_xfail, write_text_atomically
from tokasm.run.results import TargetRun
from tokasm.run.runner import run_cases
from tokasm.run.targets import PythonTarget

if TYPE_CHECKING:
    from pathlib import Path

    from tokasm.corpus._load import Corpus
    from tokasm.implementations import AssemblerFactory
    from tokasm.run.results import CaseResult


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


@cache
def _results(factory: AssemblerFactory) -> tuple[CaseResult, ...]:
    """The factory's results on the bundled corpus, run once a process: results are data."""
    return tuple(run_cases(PythonTarget(factory, "target"), load_corpus()))


def _run(corpus: Corpus, factory: AssemblerFactory, name: str) -> TargetRun:
    return TargetRun(name, name, _results(factory), corpus.version)


def test_parse_comments_blank_lines_and_globs(tmp_path: Path) -> None:
    path = tmp_path / "known.txt"
    path.write_text(
        "# whole-line comment\n\nseed.example   # trailing reason\n  append.*\n#x\n",
        encoding="utf-8",
    )
    listed = load_xfail(path)
    assert [(e.pattern, e.line, e.reason) for e in listed.entries] == [
        ("seed.example", 3, "trailing reason"),
        ("append.*", 4, ""),
    ]
    assert listed.entry_for("append.basic") == listed.entries[1]
    assert listed.entry_for("ids.case-sensitive") is None


def test_unreadable_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(XfailError, match=r"missing\.txt"):
        load_xfail(tmp_path / "missing.txt")


def test_listed_failure_is_xfailed_and_run_conforms(corpus: Corpus, tmp_path: Path) -> None:
    broken = _run(corpus, RefinalReturnsNone, "forgets")
    failing = {r.case_id for r in broken.results if r.outcome == "failed"}
    assert "seed.example" in failing
    assert not broken.conforms

    path = tmp_path / "known.txt"
    path.write_text("".join(f"{case_id}  # known\n" for case_id in failing), encoding="utf-8")
    judged = apply_xfail(broken, load_xfail(path), corpus)
    assert judged.conforms
    assert {r.case_id for r in judged.results if r.outcome == "xfailed"} == failing
    xfailed = next(r for r in judged.results if r.case_id == "seed.example")
    assert "expected: 'hello'" in xfailed.message  # the original explanation is kept
    assert f"[listed in {path}:" in xfailed.message


def test_listed_pass_is_xpassed_and_fails(corpus: Corpus, tmp_path: Path) -> None:
    path = tmp_path / "known.txt"
    path.write_text("seed.example  # was broken once\n", encoding="utf-8")
    judged = apply_xfail(_run(corpus, ListJoinAssembler, "good"), load_xfail(path), corpus)
    (xpassed,) = [r for r in judged.results if r.outcome == "xpassed"]
    assert xpassed.case_id == "seed.example"
    assert "was broken once" in xpassed.message
    assert not judged.conforms


def test_line_matching_no_case_is_a_problem(corpus: Corpus, tmp_path: Path) -> None:
    path = tmp_path / "known.txt"
    path.write_text("seed.example\nrenamed.case-*  # gone\n", encoding="utf-8")
    judged = apply_xfail(_run(corpus, RefinalReturnsNone, "forgets"), load_xfail(path), corpus)
    assert judged.problems == (
        f"{path}:2: 'renamed.case-*' matches no case of corpus {corpus.version}; remove the line",
    )
    assert not judged.conforms


def test_written_list_reloads_and_covers_exactly_todays_failures(
    corpus: Corpus, tmp_path: Path
) -> None:
    broken = _run(corpus, RefinalReturnsNone, "forgets")
    path = tmp_path / "known.txt"
    write_text_atomically(path, render_xfail([broken]))
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line[:1] != "#"]
    assert lines == sorted(lines)
    assert any(line.startswith("seed.example  # failed: step 3 on 'a'") for line in lines)
    judged = apply_xfail(broken, load_xfail(path), corpus)
    assert judged.conforms
    assert judged.summary["xfailed"] == broken.summary["failed"] + broken.summary["errored"]


def test_written_list_of_several_targets_names_them(corpus: Corpus, tmp_path: Path) -> None:
    runs = [_run(corpus, RefinalReturnsNone, "one"), _run(corpus, RefinalReturnsNone, "two")]
    path = tmp_path / "known.txt"
    write_text_atomically(path, render_xfail(runs))
    (line,) = [ln for ln in path.read_text(encoding="utf-8").splitlines() if "seed.example" in ln]
    assert "# one: failed: " in line
    assert "; two: failed: " in line


def test_first_line_wins_between_ids_and_globs(tmp_path: Path) -> None:
    path = tmp_path / "known.txt"
    path.write_text("append.*  # glob first\nappend.basic  # id later\nseed.example\n")
    listed = load_xfail(path)
    assert listed.entry_for("append.basic") == listed.entries[0]
    path.write_text("append.basic  # id first\nappend.*  # glob later\n")
    listed = load_xfail(path)
    assert listed.entry_for("append.basic") == listed.entries[0]
    assert listed.entry_for("append.other") == listed.entries[1]
    assert listed.entry_for("seed.example") is None


@pytest.mark.parametrize("glob", ["*", "**", "?*", "*?", "*.*", "[!@]*"])
def test_a_glob_matching_every_case_is_refused(corpus: Corpus, tmp_path: Path, glob: str) -> None:
    path = tmp_path / "known.txt"
    path.write_text(f"seed.example\n{glob}  # all of it\n", encoding="utf-8")
    load_xfail(path)  # without the corpus, nothing to judge
    with pytest.raises(XfailError, match=r"known\.txt:2: .* matches every case"):
        load_xfail(path, corpus)


def test_written_list_keeps_reasons_and_never_writes_a_glob(corpus: Corpus, tmp_path: Path) -> None:
    broken = _run(corpus, RefinalReturnsNone, "evil\n*\n#\x1b[0m")
    failing = sorted(r.case_id for r in broken.results if r.outcome == "failed")
    path = tmp_path / "known.txt"
    path.write_text(f"{failing[0]}  # people wrote this\n", encoding="utf-8")
    write_text_atomically(path, render_xfail([broken], load_xfail(path)))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert f"{failing[0]}  # people wrote this" in lines
    entries = [line.partition("#")[0].strip() for line in lines]
    assert sorted(e for e in entries if e) == failing  # ids only, each exactly itself
    assert "\x1b" not in "".join(lines)
