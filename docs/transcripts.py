"""Every console transcript and generated block in the docs, produced by one command.

``python docs/transcripts.py`` (or ``nox -s docs``) runs each transcript's
commands in a scratch project holding ``docs/examples/*`` and rewrites the
blocks between ``<!-- begin: NAME -->`` and ``<!-- end: NAME -->`` in the
README, ``docs/*.md`` and ``spec/REPORTS.md``. ``--check`` rewrites nothing
and exits 1 when a block differs from what the commands print now (timings
and, for benchmarks, every figure are masked first): the test suite runs it,
so a transcript cannot drift from the tool, as CommonMark checks its spec
examples.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "docs" / "examples"
DOCUMENTS = [
    REPO / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    REPO / "spec" / "REPORTS.md",
]
PROJECT = "~/myproject"  # what the scratch folder's path reads as in a transcript

BLOCK = re.compile(
    r"(<!-- begin: (?P<name>[\w.-]+) -->\n)(?P<body>.*?)(<!-- end: (?P=name) -->)", re.S
)


Varies = Literal["timings", "figures", "counterexample"]


@dataclass(frozen=True)
class Transcript:
    """Shell commands run one after another, each shown as ``$ command`` and its output."""

    commands: tuple[str, ...]
    #: What may differ between two runs, masked before comparing: "timings" (durations);
    #: "figures" (every number and verdict, for benchmarks); "counterexample" (all but the
    #: commands, the case file's first lines and exit statuses: shrinking is time-bounded,
    #: so a loaded machine may print a less shrunk case).
    varies: Varies = "timings"


TESTEE = "python -m tokasm.protocol.testee"
TRANSCRIPTS: dict[str, Transcript] = {
    "check-bundled": Transcript(("tokasm check",)),
    "check-myasm": Transcript(("tokasm check myasm:MyAssembler", "echo $?")),
    "check-bad-targets": Transcript(("tokasm check nosuch:Impl", "tokasm check mine")),
    "check-help": Transcript(("tokasm check --help",)),
    "pytest-myasm": Transcript(
        (
            "python -m pytest -q --tb=no -p no:cacheprovider --pyargs tokasm.conformance"
            " --tokasm-assembler myasm:MyAssembler",
        )
    ),
    "check-testee": Transcript(
        (f'tokasm check --cmd "{TESTEE} --strict list-join" --profile strict -k "strict.*"',)
    ),
    "check-testee-missing": Transcript(('tokasm check --cmd "./no-such-testee --fast"; echo $?',)),
    "fuzz-myasm": Transcript(
        ("tokasm fuzz myasm:MyAssembler --seed 1", "echo $?"), varies="counterexample"
    ),
    "ci-xfail": Transcript(
        (
            "tokasm check myasm:MyAssembler --write-xfail known-failures.txt --fuzz-examples 0"
            " > /dev/null; echo $?",
            "cat known-failures.txt",
            "tokasm check myasm:MyAssembler --xfail known-failures.txt --fuzz-examples 0"
            " --junit junit.xml --json report.json --markdown card.md",
            "head -7 card.md",
        )
    ),
    "reports-terminal": Transcript(
        ("tokasm check list-join mutants:ExpandsTabs --fuzz-examples 0",)
    ),
    "bench-tiny": Transcript(
        ("tokasm bench --scenario stream_then_finalize --sizes 2k,8k,32k --repeats 1 --quiet",),
        varies="figures",
    ),
}


def _generated_text() -> dict[str, str]:
    """Blocks that are not transcripts: example sources and the CLI's own texts."""
    from tokasm.cli import bench, check, fuzz

    blocks = {
        f"exit-codes-{command.__name__.rsplit('.', 1)[-1]}": f"```text\n{command.EXIT_CODES}```\n"
        for command in (check, fuzz, bench)
    }
    for example in sorted(EXAMPLES.glob("*.py")):
        blocks[example.name] = f"```python\n{example.read_text(encoding='utf-8')}```\n"
    return blocks


def _run(transcript: Transcript, project: Path) -> str:
    """The transcript as a terminal shows it, paths of the scratch project made portable."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TOKASM_SPEC_DIR")}
    here = Path(sys.executable).parent  # this venv's tokasm first, as in an activated venv
    env.update(CI="1", COLUMNS="100", PATH=f"{here}{os.pathsep}{env['PATH']}")
    shown = []
    status = 0
    for command in transcript.commands:
        if command == "echo $?":  # the previous command's status, as one shell session shows it
            shown.append(f"$ {command}\n{status}\n")
            continue
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            timeout=300,
            check=False,
        )
        status = done.returncode
        shown.append(f"$ {command}\n{done.stdout}")
    text = "".join(shown).replace(str(project), PROJECT)
    return f"```text\n{text}```\n"


def _mask(text: str, varies: Varies) -> str:
    """The text with what may differ between two runs of the same commands masked."""
    if varies == "counterexample":
        kept = re.compile(r"\$ |description: |cases:$|\d+$|```")
        return "\n".join(line for line in text.splitlines() if kept.match(line))
    text = re.sub(r"\d+(\.\d+)?\s?(ns|us|µs|ms|s)\b", "<time>", text)
    # The cost probes' figures: their traffic is drawn anew at every run.
    text = re.sub(
        r"^.*( against |all above: ).*$",
        lambda line: re.sub(r"\d+(\.\d+)?", "<n>", line[0]),
        text,
        flags=re.M,
    )
    if varies == "figures":
        text = re.sub(r"-?\d+(\.\d+)?(e[+-]\d+)?x?", "<n>", text)  # x987 or x1.02e+03
        text = re.sub(
            r"(at least |worse than )?(constant|superlinear|linear|quadratic)|inconclusive|grows"
            r"|skip|max-time|stopped|@<n>k?",
            "<verdict>",
            text,
        )
        text = re.sub(r"-{3,}", "<rule>", text)  # a table's rule is as wide as its columns
        text = re.sub(r" +", " ", text)
    return text


def _fresh_blocks(names: set[str]) -> dict[str, tuple[str, Varies]]:
    """Name -> (new block body, what may vary in it), for the names the documents use."""
    unknown = names - set(TRANSCRIPTS) - set(_generated_text())
    if unknown:
        raise SystemExit(f"docs/transcripts.py: no transcript named {sorted(unknown)}")
    fresh: dict[str, tuple[str, Varies]] = {
        name: (text, "timings") for name, text in _generated_text().items() if name in names
    }
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(os.cpu_count()) as pool:

        def produce(name: str) -> tuple[str, tuple[str, Varies]]:
            project = Path(scratch) / name
            shutil.copytree(EXAMPLES, project)
            shutil.copy(REPO / "tests" / "mutants.py", project)
            transcript = TRANSCRIPTS[name]
            return name, (_run(transcript, project), transcript.varies)

        fresh.update(pool.map(produce, sorted(names & set(TRANSCRIPTS))))
    return fresh


def _refresh(
    match: re.Match[str],
    path: Path,
    fresh: dict[str, tuple[str, Varies]],
    stale: list[tuple[Path, str, str, str]],
) -> str:
    """The block with its fresh body if it differs beyond masking (then recorded as stale);
    a block not in ``fresh`` as it is."""
    if match["name"] not in fresh:
        return match.group(0)
    body, varies = fresh[match["name"]]
    if _mask(body, varies) == _mask(match["body"], varies):
        return match.group(0)  # only what may vary moved: keep the file as it is
    stale.append((path, match["name"], match["body"], body))
    return match.group(1) + body + match.group(4)


def block_names() -> set[str]:
    """The names of the blocks the documents hold."""
    return {
        match["name"]
        for path in DOCUMENTS
        for match in BLOCK.finditer(path.read_text(encoding="utf-8"))
    }


def generated_names() -> set[str]:
    """The names of the blocks that are not transcripts (examples, the CLI's own texts)."""
    return set(_generated_text())


def _compared(names: set[str]) -> tuple[dict[Path, str], list[tuple[Path, str, str, str]]]:
    """Each document with the blocks named ``names`` made anew, and the stale blocks:
    (document, name, old body, new body)."""
    fresh = _fresh_blocks(names)
    stale: list[tuple[Path, str, str, str]] = []
    updated = {}
    for path in DOCUMENTS:
        refresh = functools.partial(_refresh, path=path, fresh=fresh, stale=stale)
        updated[path] = BLOCK.sub(refresh, path.read_text(encoding="utf-8"))
    return updated, stale


def _diff(stale: list[tuple[Path, str, str, str]]) -> str:
    return "".join(
        line
        for path, name, old, new in stale
        for line in difflib.unified_diff(
            old.splitlines(True), new.splitlines(True), f"{path.relative_to(REPO)}: {name}", "now"
        )
    )


def stale_diff(names: set[str]) -> str:
    """How the blocks named ``names`` differ (beyond what may vary) from what the commands
    print now, as a unified diff; "" if they are fresh. ``tests/test_docs.py`` asks it."""
    return _diff(_compared(names)[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not rewrite")
    args = parser.parse_args(argv)
    used = block_names()
    unused = set(TRANSCRIPTS) - used
    if unused:
        print(f"transcripts no document shows: {sorted(unused)}", file=sys.stderr)
        return 1
    updated, stale = _compared(used)
    if not args.check:
        for path, text in updated.items():
            if text != path.read_text(encoding="utf-8"):
                path.write_text(text, encoding="utf-8")
    sys.stdout.write(_diff(stale))
    if args.check and stale:
        print(f"{len(stale)} stale block(s): run `nox -s docs` (python docs/transcripts.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
