"""Helpers shared by the test modules: running the CLI as a user would, copying the spec."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tokasm.conformance._paths import spec_dir

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["BROKEN", "GOOD", "Ran", "copy_spec", "tokasm_cmd", "tokasm_started"]

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
