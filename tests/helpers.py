"""Helpers shared by the test modules: running the CLI as a user would, copying the spec."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tokasm.cli import main
from tokasm.corpus._paths import spec_dir

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    import pytest

__all__ = [
    "BROKEN",
    "GOOD",
    "QUICK",
    "USER_CASES",
    "Ran",
    "copy_spec",
    "example_session",
    "running_processes",
    "tokasm_cmd",
    "tokasm_main",
    "tokasm_program",
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


def tokasm_program(shortened: Mapping[str, float] | None = None) -> list[str]:
    """The command line of the ``tokasm`` program, ``python -m tokasm``.

    ``shortened`` sets tokasm's own waits first, by module and name (e.g.
    ``{"tokasm.cli._console.UNWIND_GRACE": 0.5}``), then runs the same program: a test
    that provokes a wait pays a short one, with the code path and verdict unchanged. A
    name that is not there fails the run, so a renamed constant cannot silently cost the
    full wait again.
    """
    if not shortened:
        return [sys.executable, "-m", "tokasm"]
    lines = ["import importlib"]
    for dotted, seconds in shortened.items():
        module, name = dotted.rsplit(".", 1)
        lines += [
            f"module = importlib.import_module({module!r})",
            f"assert hasattr(module, {name!r}), {dotted!r}",
            f"module.{name} = {seconds!r}",
        ]
    lines.append("from tokasm.cli import command; command()")
    return [sys.executable, "-c", "\n".join(lines)]


def tokasm_cmd(folder: Path, *args: str, shortened: Mapping[str, float] | None = None) -> Ran:
    """Run ``python -m tokasm ARGS`` in ``folder``, as a user would from their project
    (``shortened``: see ``tokasm_program``)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [*tokasm_program(shortened), *args],
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


def tokasm_started(
    folder: Path, *args: str, shortened: Mapping[str, float] | None = None
) -> subprocess.Popen[str]:
    """``python -m tokasm ARGS`` started in ``folder``, its stdout and stderr pipes (text)
    to read while it runs: for a closed pipe, a signal, a hang (``shortened``: see
    ``tokasm_program``)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.Popen(
        [*tokasm_program(shortened), *args],
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


class user_folder:  # a context manager named like the function it stands for
    """The current folder is ``folder`` and importable, as for ``python -m tokasm`` started
    there, for an in-process run. On leaving, the current folder, ``sys.path`` and the
    hooks for stray errors are as before and the modules imported from ``folder`` are
    forgotten; a same-named module imported from elsewhere (another test's ``good.py``)
    is hidden meanwhile."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __enter__(self) -> None:
        import importlib
        import threading

        self._here = os.getcwd()
        self._path = list(sys.path)
        # ``tokasm check`` quiets stray errors (quiet_stray_errors) for the rest of a run's
        # process: this process goes on after the run.
        self._hooks = sys.unraisablehook, threading.excepthook
        self._before = set(sys.modules)
        self._hidden = {
            name: module
            for name, module in sys.modules.items()
            if "." not in name
            and ((self.folder / f"{name}.py").is_file() or (self.folder / name).is_dir())
            and not _inside(module, self.folder)
        }
        for name in self._hidden:
            del sys.modules[name]
        importlib.invalidate_caches()
        os.chdir(self.folder)
        sys.path.insert(0, str(self.folder))

    def __exit__(self, *exc: object) -> None:
        import threading

        sys.unraisablehook, threading.excepthook = self._hooks
        os.chdir(self._here)
        sys.path[:] = self._path
        for name in set(sys.modules) - self._before:
            if _inside(sys.modules[name], self.folder):
                del sys.modules[name]
        sys.modules.update(self._hidden)


def _inside(module: object, folder: Path) -> bool:
    file = getattr(module, "__file__", None)
    return isinstance(file, str) and os.path.realpath(file).startswith(
        os.path.join(os.path.realpath(folder), "")
    )


def tokasm_here(folder: Path, *args: str) -> Ran:
    """``tokasm ARGS`` in this process in ``folder`` (``user_folder``), its streams captured
    without ``capsys``, which a module-scoped fixture cannot use."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with user_folder(folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return Ran(code, out.getvalue(), err.getvalue())


def running_processes() -> Iterator[tuple[str, str]]:
    """(working folder, command line) of every process running now (Linux ``/proc``), for
    tests that prove none outlived a run."""
    for proc in Path("/proc").iterdir():
        try:
            cwd = os.readlink(proc / "cwd")
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        yield cwd, cmdline
