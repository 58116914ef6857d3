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

__all__ = ["Ran", "copy_spec", "tokasm_cmd"]


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


def copy_spec(folder: Path) -> Path:
    """A copy of the real spec folder (schema, SPEC.md, VERSION) with an empty cases folder."""
    root = folder / "spec"
    (root / "cases").mkdir(parents=True)
    for name in ("case.schema.json", "SPEC.md", "VERSION"):
        shutil.copy(spec_dir() / name, root / name)
    return root
