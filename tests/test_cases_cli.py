"""``tokasm list`` and ``show``, and check's --maxfail and failure summary, as a user runs them.

All in process (tokasm_main, tokasm_here): the targets are plain Python and only the
output and exit code are under test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import QUICK, tokasm_here, tokasm_main
from tokasm.corpus import load_corpus

# Breaks AFTER-REFINAL only: a second final appends its delta before answering.
REFINAL_APPENDS = """\
from tokasm.implementations import ListJoinAssembler

class Impl(ListJoinAssembler):
    def apply(self, event):
        done = self._completed(event["id"])
        if done is not None and event.get("final"):
            self._finalized[event["id"]] = done + event.get("delta", "")
        return super().apply(event)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "refinal.py").write_text(REFINAL_APPENDS, encoding="utf-8")
    return tmp_path


def test_list_prints_every_case_with_profile_steps_and_rules(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ran = tokasm_main(capsys, "list")
    assert ran.code == 0, ran.err
    corpus = load_corpus()
    lines = ran.out.splitlines()
    seed = next(line for line in lines if line.startswith("seed.example "))
    assert seed.split()[1:3] == ["required", "6"]
    assert "FINAL-RETURN" in seed
    probes = [line.split()[:4] for line in lines if line.startswith("cost.")]
    assert probes == [
        ["cost.cache-final", "required", "probe", "CACHE-FINAL"],
        ["cost.stream-linear", "required", "probe", "STREAM-LINEAR"],
    ]
    assert f"{len(corpus) + 2} of {len(corpus) + 2} checks" in lines[-1]


def test_list_selects_by_glob_and_refuses_a_glob_matching_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ran = tokasm_main(capsys, "list", "after.*")
    assert ran.code == 0
    ids = [line.split()[0] for line in ran.out.splitlines()[1:-1]]
    assert ids
    assert all(case_id.startswith("after.") for case_id in ids)
    missing = tokasm_main(capsys, "list", "no-such.*")
    assert missing.code == 2
    assert "no case id matches" in missing.err


@pytest.mark.parametrize("probe", ["--no-cost-probe", "--cost-probe"])
def test_check_refuses_a_selection_that_leaves_nothing_to_run(
    capsys: pytest.CaptureFixture[str], probe: str
) -> None:
    """-k choosing only the cost probe, which --no-cost-probe turns off, ran nothing and
    said every target conforms (exit 0); with the probe on it runs."""
    ran = tokasm_main(capsys, "check", "list-join", "-k", "cost.*", "--fuzz-examples", "0", probe)
    if probe == "--no-cost-probe":
        assert ran.code == 2
        assert "selects only cost.cache-final" in ran.err
        assert "CONFORMANCE" not in ran.out
    else:
        assert ran.code == 0, ran.out + ran.err
        assert "2 cases: 2 successes" in ran.out  # cost.cache-final and cost.stream-linear


def test_show_expands_a_case_with_rules_and_steps_as_the_runner_names_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ran = tokasm_main(capsys, "show", "seed.example")
    assert ran.code == 0, ran.err
    assert "requirements: NONFINAL-NONE, FINAL-RETURN" in ran.out
    assert (
        "step 3 on 'a': apply({'id': 'm', 'delta': 'ignored', 'final': True})  -> 'hello'"
        in ran.out
    )
    assert "step 6 on 'a': get('unseen')  -> None" in ran.out


def test_show_cuts_a_long_case_unless_asked(capsys: pytest.CaptureFixture[str]) -> None:
    # The longest a default check runs: the scale profile's, eight times as long, show alike.
    long_case = max((case for case in load_corpus() if not case.large), key=lambda c: len(c.steps))
    cut = tokasm_main(capsys, "show", long_case.id, "--steps", "3")
    assert cut.code == 0
    steps = [line for line in cut.out.splitlines() if line.startswith("  step ")]
    assert len(steps) == 3 + 5
    assert f"... {len(long_case.steps) - 8} more steps" in cut.out
    whole = tokasm_main(capsys, "show", long_case.id, "--steps", "0")
    assert sum(line.startswith("  step ") for line in whole.out.splitlines()) == len(
        long_case.steps
    )


def test_show_of_an_unknown_case_exits_2_suggesting_a_close_id(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ran = tokasm_main(capsys, "show", "seed.exampel")
    assert ran.code == 2
    assert "did you mean seed.example" in ran.err


def test_show_describes_the_cost_probe(capsys: pytest.CaptureFixture[str]) -> None:
    ran = tokasm_main(capsys, "show", "cost.cache-final")
    assert ran.code == 0
    assert "CACHE-FINAL" in ran.out
    assert "interleaved" in ran.out


def test_failures_name_their_rules_and_the_summary_names_the_broken_rule_first(
    project: Path,
) -> None:
    ran = tokasm_here(project, "check", "refinal:Impl", *QUICK)
    assert ran.code == 1
    assert "FAILED refinal:Impl::seed.example [NONFINAL-NONE, FINAL-RETURN" in ran.out
    summary = ran.out.split("likely broken rules of refinal:Impl, worst first:\n")[1]
    assert summary.splitlines()[0].startswith("  breaks AFTER-REFINAL: ")


def test_maxfail_stops_across_targets_and_says_what_did_not_run(project: Path) -> None:
    ran = tokasm_here(project, "check", "refinal:Impl", "chunked", "--maxfail", "2", *QUICK)
    assert ran.code == 1
    assert ran.out.count("\nFAILED refinal:Impl::") + ran.out.startswith("FAILED") == 2
    assert "stopped after 2 unexpected failures (--maxfail 2); not run: " in ran.out
    assert "checks of refinal:Impl and its fuzz phase; targets chunked" in ran.out
    assert "\nchunked " not in ran.out  # the card has no row for a target never run


def test_no_target_checks_every_backend_and_shows_naive_join_breaking_cache_final() -> None:
    """Read off the README's transcript of a plain ``tokasm check``, which test_docs keeps
    equal to what the command prints now (running the six backends again cost 2.6 s)."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- begin: check-bundled -->", 1)[1].split("<!-- end:", 1)[0]
    assert "\n$ tokasm check\n" in block
    assert "\nCONFORMANCE PASSED: 5 of 6 targets conform" in block
    xfail = next(line for line in block.splitlines() if line.startswith("XFAIL "))
    assert xfail.startswith(
        "XFAIL naive-join::cost.cache-final [CACHE-FINAL] - reads after final grow"
    )
    assert "(by design: " in xfail
    row = next(line for line in block.splitlines() if line.startswith("naive-join "))
    assert "conforms" not in row
    assert row.endswith("expected failures only")


def test_an_xfail_file_may_list_the_probe(project: Path) -> None:
    (project / "known.txt").write_text("cost.cache-final  # we re-join\n", encoding="utf-8")
    tests = Path(__file__).resolve().parent
    ran = tokasm_here(
        tests,
        *("check", "mutants:RejoinsAfterFinal", "-k", "cost.*", "--fuzz-examples", "0"),
        *("--xfail", str(project / "known.txt")),
    )
    assert ran.code == 0, ran.out
    assert "XFAIL mutants:RejoinsAfterFinal::cost.cache-final" in ran.out
