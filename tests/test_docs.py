"""The documents cannot drift from the tool: transcripts, examples, links, tables, commands.

The transcripts themselves are regenerated and compared as ``docs/transcripts.py
--check`` does, as CI runs the suite (CommonMark checks its spec examples the same
way): one test per transcript, so that pytest-xdist spreads them, and one for the
generated blocks and the names the documents use.
"""

from __future__ import annotations

import importlib.util
import re
import runpy
import sys
from pathlib import Path
from typing import Any

import pytest

from tokasm.corpus._load import requirement_ids

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "spec"
DOCUMENTS = [REPO / "README.md", REPO / "CHANGELOG.md", *sorted((REPO / "docs").glob("*.md"))]
DOCUMENTS += sorted(SPEC.glob("*.md"))
TRANSCRIPTS_PY = REPO / "docs" / "transcripts.py"

pytestmark = [
    pytest.mark.skipif(not TRANSCRIPTS_PY.is_file(), reason="not running from a source checkout"),
    pytest.mark.slow,
]


def _load_transcripts() -> Any:
    """``docs/transcripts.py`` as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("docs_transcripts", TRANSCRIPTS_PY)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


transcripts: Any = _load_transcripts() if TRANSCRIPTS_PY.is_file() else None
TRANSCRIPT_NAMES = sorted(transcripts.TRANSCRIPTS) if transcripts is not None else []

made_on_311_312 = pytest.mark.skipif(
    sys.version_info >= (3, 13),
    reason="argparse words --help differently from 3.13 on; the transcripts are made on 3.11-3.12",
)


def _transcript(name: str) -> Any:
    """The transcript ``name`` as a test parameter: one that prints ``--help`` is checked
    where the transcripts are made; every other one on every Python (``check-bundled``
    is the bundled backends' default check, fuzz phase and cost probe included)."""
    commands = transcripts.TRANSCRIPTS[name].commands
    helps = any("--help" in command for command in commands)
    return pytest.param(name, marks=made_on_311_312) if helps else name


@pytest.mark.parametrize("name", [_transcript(name) for name in TRANSCRIPT_NAMES])
def test_transcript_matches_what_its_commands_print_now(name: str) -> None:
    assert transcripts.stale_diff({name}) == ""


def test_a_benchmark_table_reads_the_same_whatever_its_figures_and_widths() -> None:
    """A verdict that flips (linear, superlinear) on a loaded machine widens the table and
    its rule, and a ratio near a thousand prints as x987 or x1.02e+03: all are figures,
    masked, or the bench transcript fails now and then."""
    wide = (
        "implementation   2k  exponent  long text  verdict       peak mem\n"
        "-----------------------------------------------------------------\n"
        "str-concat   1.44us      1.45  x1.02e+03  superlinear       2.0x\n"
    )
    narrow = (
        "implementation   2k  exponent  long text  verdict   peak mem\n"
        "-------------------------------------------------------------\n"
        "str-concat    1.8us      1.11       x987  linear        2.0x\n"
    )
    assert transcripts._mask(wide, "figures") == transcripts._mask(narrow, "figures")
    assert transcripts._mask(wide, "figures") != transcripts._mask(narrow + "more\n", "figures")


@made_on_311_312
def test_every_block_name_is_known_and_every_transcript_shown_and_generated_blocks_fresh() -> None:
    used = transcripts.block_names()
    generated = transcripts.generated_names()
    assert used - set(transcripts.TRANSCRIPTS) - generated == set()  # no unknown block
    assert set(transcripts.TRANSCRIPTS) - used == set()  # no transcript no document shows
    assert transcripts.stale_diff(used & generated) == ""


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(REPO)))
def test_relative_links_resolve(document: Path) -> None:
    text = document.read_text(encoding="utf-8")
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)  # transcripts hold no links
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", prose)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    missing = [t for t in local if not (document.parent / t).exists()]
    assert missing == []


def test_readme_test_command_is_the_one_ci_runs() -> None:
    """The quickstart is exactly two commands, and the second is .ci/run's line."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quickstart = readme.split("## Quickstart", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    install_and_check, test = quickstart.splitlines()
    assert install_and_check.startswith("pip install ")
    assert install_and_check.endswith("&& tokasm check")
    assert test == "pip install -e '.[test]' && pytest -n 2"
    assert test in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_readme_python_examples_run() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    runnable = [
        b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "import tokasm\n" in b
    ]
    assert runnable
    for block in runnable:
        exec(compile(block, "README.md", "exec"), {})


def test_incremental_reads_example_keeps_interleaved_messages_apart() -> None:
    stream_to_screen = runpy.run_path(str(REPO / "docs" / "examples" / "incremental.py"))[
        "stream_to_screen"
    ]
    events = [
        {"id": "a", "delta": "Hel"},
        {"id": "b", "delta": "Wo"},
        {"id": "a", "delta": "lo"},
        {"id": "b", "delta": "rld", "final": True},
        {"id": "a", "delta": "!", "final": True},
    ]
    shown: dict[str, str] = {}

    def render(message_id: str, new_text: str) -> None:
        shown[message_id] = shown.get(message_id, "") + new_text

    stream_to_screen(events, render)
    assert shown == {"a": "Hello!", "b": "World"}


RULE = re.M | re.S


def _strict_kinds_in_spec() -> dict[str, str]:
    text = (SPEC / "SPEC.md").read_text(encoding="utf-8")
    kinds = {}
    for rid in requirement_ids():
        if rid.startswith("STRICT-"):
            rule = re.search(
                rf"^- \*\*{rid}\*\* \(behaviour\):(.*?)(?=^- \*\*|^#|\Z)", text, re.M | re.S
            )
            assert rule is not None, rid
            if "In process only" in rule.group(1):  # no request of the protocol can see it
                continue
            raised = re.search(r"raises `(\w+)`", rule.group(1))
            kinds[rid] = raised.group(1) if raised else "(state untouched)"
    return kinds


def test_protocol_tables_the_error_kind_of_every_strict_rule() -> None:
    text = (SPEC / "PROTOCOL.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\s*\| (STRICT-[A-Z-]+) \| [^|]+ \| `?([^|`]+?)`? \|$", text, re.M)
    assert dict(rows) == _strict_kinds_in_spec()


def test_spec_is_a_standards_document() -> None:
    spec = (SPEC / "SPEC.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", spec, re.M)
    for section in ("Conventions", "Terminology", "Conformance", "Change control"):
        assert section in headings
    conventions = spec.split("## Conventions", 1)[1].split("\n## ", 1)[0]
    for word in ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY", "RFC 2119", "RFC 8174"):
        assert f'"{word}"' in conventions or word in conventions
    # Key words are upper case only: a lower-case "must" in prose is ambiguous (RFC 8174).
    for name in ("SPEC.md", "PROTOCOL.md"):
        prose = re.sub(
            r"```.*?```|`[^`]*`", "", (SPEC / name).read_text(encoding="utf-8"), flags=re.S
        )
        assert re.findall(r"\b(must|should|shall)\b", prose) == [], name


def test_every_example_states_the_corpus_version_in_use() -> None:
    """Hand-written examples of reports and exports name the corpus of today, so a reader
    never compares against an old one (one source: spec/VERSION)."""
    version = (REPO / "spec" / "VERSION").read_text(encoding="utf-8").strip()
    stated = {
        (path.name, found)
        for path in [REPO / "README.md", *REPO.glob("docs/*.md"), *REPO.glob("spec/*.md")]
        for found in re.findall(r'"corpus_version": "([^"]+)"', path.read_text(encoding="utf-8"))
    }
    assert {found for _, found in stated} == {version}, stated
