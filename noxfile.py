# /// script
# dependencies = ["nox>=2025.2.9"]
# ///
"""Sessions for tokasm: tests on every installed Python, lint, types, conformance, benchmarks."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import nox

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["tests", "lint", "typecheck", "conformance"]

PYPROJECT = nox.project.load_toml("pyproject.toml")
PYTHONS = nox.project.python_versions(PYPROJECT)
DEV = nox.project.dependency_groups(PYPROJECT, "dev")


def _expose_pyenv_pythons(versions: list[str]) -> None:
    """Put every pyenv-installed interpreter (python3.10 ...) first on PATH.

    pyenv's shims answer for every version but run only those named by
    ``pyenv global``; nox looks for ``pythonX.Y`` on PATH, so without this it
    would fail or skip installed versions.
    """
    pyenv = shutil.which("pyenv")
    if pyenv is None:
        return
    answer = subprocess.run([pyenv, "root"], check=False, capture_output=True, text=True)
    root = Path(answer.stdout.strip())
    for version in versions:
        found = sorted((root / "versions").glob(f"{version}.*/bin/python{version}"))
        if found:
            os.environ["PATH"] = f"{found[-1].parent}{os.pathsep}{os.environ['PATH']}"


_expose_pyenv_pythons(PYTHONS)


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """Run the test suite (Hypothesis derandomized, in parallel with xdist)."""
    session.install("-e", ".[test]")
    session.run("pytest", "-n", "2", *session.posargs, env={"HYPOTHESIS_PROFILE": "ci"})


@nox.session
def lint(session: nox.Session) -> None:
    """Lint with ruff."""
    session.install(*DEV)
    session.run("ruff", "check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """Type-check everything with mypy --strict."""
    session.install("-e", ".[test,plot]", *DEV)
    session.run("mypy")


@nox.session
def conformance(session: nox.Session) -> None:
    """Install tokasm as a wheel and check every bundled backend from outside the tree."""
    session.install(".")
    session.chdir(session.create_tmp())
    session.run("tokasm", "check")


@nox.session
def javascript(session: nox.Session) -> None:
    """Export the corpus, then check the reference JS assembler with node --test alone."""
    session.install(".")
    export = Path(session.create_tmp()) / "corpus"
    session.run("tokasm", "export", str(export))
    session.run(
        "node",
        "--test",
        "testees/node/conformance.test.js",
        external=True,
        env={"TOKASM_EXPORT": str(export), "TOKASM_PROFILES": "strict"},
    )


@nox.session(default=False)
def mutation(session: nox.Session) -> None:
    """Mutation-test the bundled backends with the corpus as the test (mutmut; slow, not in CI).

    Every surviving mutant is either equivalent or a gap in the corpus; the
    survivors are listed at the end (`mutmut show NAME` prints one).
    """
    session.install("-e", ".[test]", "mutmut>=3.8,<4")
    session.run("mutmut", "run", *session.posargs)
    session.run("mutmut", "results")


@nox.session(default=False)
def docs(session: nox.Session) -> None:
    """Regenerate every console transcript in README.md, docs/ and spec/ (`-- --check`: compare)."""
    session.install("-e", ".")
    session.run("python", "docs/transcripts.py", *session.posargs)


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Run the benchmark suite and save it for --benchmark-compare (slow; `-- --bench-smoke`)."""
    session.install("-e", ".[bench,plot]")
    session.run(
        "pytest", "benchmarks", "-p", "no:randomly", "--benchmark-autosave", *session.posargs
    )


@nox.session(default=False)
def peers(session: nox.Session) -> None:
    """The same stream through openai, anthropic and langchain-core, beside tokasm's backends."""
    session.install("-e", ".[peers]")
    session.run("python", "benchmarks/peers.py", *session.posargs)
