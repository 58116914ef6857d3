"""Helpers shared by the test modules: running the CLI as a user would, copying the spec."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tokasm.cli import main
from tokasm.conformance._paths import spec_dir

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

__all__ = [
    "BROKEN",
    "GOOD",
    "QUICK",
    "USER_CASES",
    "Ran",
    "copy_spec",
    "example_session",
    "tokasm_cmd",
    "tokasm_main",
    "tokasm_started",
    "user_case_folder",
]

#: A user's module holding a correct implementation, ``good:Impl``.
GOOD = "from tokasm.implementations import ListJoinAssembler as Impl\n"

#: A user's module breaking AFTER-REFINAL only (``broken:Impl``): a second final
#: answers None instead of the text.
BROKEN = """\
from tokasm.implementations import ListJoinAssembler

class Impl(ListJoinAssembler):
    def apply(self, event):
        if event.get("final") and self._completed(event["id"]) is not None:
            return None
        return super().apply(event)
"""


#: ``tokasm check`` options that leave out the parts a test does not test: the fuzzer's
#: examples and the cost probe (about half a second a run between them).
QUICK = ("--fuzz-examples", "0", "--no-cost-probe")


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str


def tokasm_cmd(folder: Path, *args: str) -> Ran:
    """Run ``python -m tokasm ARGS`` in ``folder``, as a user would from their project."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-m", "tokasm", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def tokasm_main(capsys: pytest.CaptureFixture[str], *args: str) -> Ran:
    """``tokasm ARGS`` in this process, for a subcommand whose output is the point and whose
    process is not: no start-up to pay, the same exit code and streams."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return Ran(code, out, err)


def tokasm_started(folder: Path, *args: str) -> subprocess.Popen[str]:
    """``python -m tokasm ARGS`` started in ``folder``, its stdout and stderr pipes (text)
    to read while it runs: for a closed pipe, a signal, a hang."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.Popen(
        [sys.executable, "-m", "tokasm", *args],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def copy_spec(folder: Path) -> Path:
    """A copy of the real spec folder (schema, SPEC.md, VERSION) with an empty cases folder."""
    root = folder / "spec"
    (root / "cases").mkdir(parents=True)
    for name in ("case.schema.json", "SPEC.md", "VERSION"):
        shutil.copy(spec_dir() / name, root / name)
    return root


def example_session() -> list[tuple[str, str]]:
    """(request, response) pairs of the ``text`` block under "Example session"."""
    text = (spec_dir() / "PROTOCOL.md").read_text(encoding="utf-8")
    block = text.split("## Example session", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    lines = block.splitlines()
    assert all(line[:2] in ("> ", "< ") for line in lines), "every line is a request or response"
    requests, responses = lines[0::2], lines[1::2]
    assert all(r.startswith("> ") for r in requests)
    assert all(r.startswith("< ") for r in responses)
    return [(q[2:], r[2:]) for q, r in zip(requests, responses, strict=True)]


#: A user's case file (``--cases DIR``): ``mine.spaces`` fails an assembler that trims,
#: ``mine.greeting`` does not.
USER_CASES = """\
description: Regressions of my assembler
cases:
  - id: mine.greeting
    description: A greeting in two deltas
    requirements: [APPEND, GET-TEXT]
    steps:
      - apply: {id: m, delta: "Hello, "}
        returns: null
      - apply: {id: m, delta: "world", final: true}
        returns: "Hello, world"
  - id: mine.spaces
    description: Trailing spaces are kept
    requirements: [APPEND-EXACT]
    steps:
      - apply: {id: s, delta: "x  ", final: true}
        returns: "x  "
"""


def user_case_folder(parent: Path) -> Path:
    """``parent/my-cases`` holding ``USER_CASES`` as ``regressions.yaml``."""
    folder = parent / "my-cases"
    folder.mkdir()
    (folder / "regressions.yaml").write_text(USER_CASES, encoding="utf-8")
    return folder


def tokasm_in(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> Ran:
    """``tokasm ARGS`` in this process, as if started in ``folder``: for a run whose targets
    are plain Python (nothing that exits, hangs, signals, spawns, leaves threads or changes
    the process: those need ``tokasm_cmd``). What the run changes around it is put back
    afterwards: the current folder, ``sys.path``, the error hooks it installs, and the
    modules it imported from ``folder`` (so the next test imports its own copies)."""
    import threading

    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    before = set(sys.modules)
    try:
        return tokasm_main(capsys, *args)
    finally:
        root = os.path.realpath(folder)
        for name in set(sys.modules) - before:
            file = getattr(sys.modules[name], "__file__", None)
            if file is not None and os.path.realpath(file).startswith(root + os.sep):
                del sys.modules[name]
