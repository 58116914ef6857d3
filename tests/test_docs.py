"""The documents cannot drift from the tool: transcripts, examples, links, tables, commands.

The transcripts themselves are regenerated and compared by ``docs/transcripts.py
--check``, run here as CI runs the suite (CommonMark checks its spec examples
the same way).
"""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from tokasm.conformance.corpus import requirement_ids

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "spec"
DOCUMENTS = [REPO / "README.md", REPO / "CHANGELOG.md", *sorted((REPO / "docs").glob("*.md"))]
DOCUMENTS += sorted(SPEC.glob("*.md"))

pytestmark = pytest.mark.skipif(
    not (REPO / "docs" / "transcripts.py").is_file(), reason="not running from a source checkout"
)


@pytest.mark.skipif(
    sys.version_info >= (3, 13),
    reason="argparse words --help differently from 3.13 on; the transcripts are made on 3.11-3.12",
)
def test_every_transcript_matches_what_the_commands_print_now() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "docs" / "transcripts.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


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
