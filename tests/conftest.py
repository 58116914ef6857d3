"""Shared test setup: Hypothesis profiles (CI is derandomized so it cannot flake), and one
bytecode cache for the session's subprocesses."""

from __future__ import annotations

import os
import shutil
import tempfile
from functools import partial

import pytest
from hypothesis import HealthCheck, settings

from tokasm.fuzz import HYPOTHESIS_STORAGE_ENV

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_configure(config: pytest.Config) -> None:
    """The session's processes share what they can: Hypothesis's folder, and bytecode."""
    _one_hypothesis_folder(config)
    _one_bytecode_cache(config)
    _work_stealing(config)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The ``slow`` tests (whole-corpus and whole-docs runs) first, each group in its own
    order: with ``-n 2`` the worker that runs them is the one the other steals from, so the
    session ends on short tests rather than one worker finishing a long one alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def _work_stealing(config: pytest.Config) -> None:
    """``-n``'s default schedule (``load``) becomes work stealing: a worker that runs out
    takes queued tests from the other, so neither idles at the end while the other works
    through a queue of slow ones. Set here, not in the ini's options, so that a run without
    xdist (``pytest benchmarks`` after ``pip install .[bench]``) still knows its options;
    xdist makes its scheduler only when the tests start."""
    if config.getoption("tx", None) and config.getoption("dist", None) == "load":
        config.option.dist = "worksteal"


def _one_hypothesis_folder(config: pytest.Config) -> None:
    """Every process of the session, xdist's workers and the tokasm runs in fresh folders
    included, uses the checkout's ``.hypothesis``: Hypothesis caches there its Unicode
    table and the constants it finds in local source (tokasm's own, in an editable
    install), about 1.5 s to build again in each process that fuzzes in a new folder."""
    if not hasattr(config, "workerinput"):
        os.environ.setdefault(HYPOTHESIS_STORAGE_ENV, str(config.rootpath / ".hypothesis"))


def _one_bytecode_cache(config: pytest.Config) -> None:
    """The suite's Python subprocesses (some 150 runs of tokasm, pytest and testees) share
    one bytecode cache in a folder of the session's own.

    Where ``PYTHONDONTWRITEBYTECODE`` keeps a machine's trees free of ``__pycache__``, each
    run would otherwise compile tokasm from its source again: 0.25 s of a 0.45 s
    ``check -k``. The session's folder keeps the trees just as clean, and goes at its end.
    xdist's workers are not pointed at it themselves: they read the bytecode installed
    with the standard library and the packages instead of compiling all that into an
    empty folder (1 s less of collection each), and hand the folder on to their own runs.
    """
    if hasattr(config, "workerinput"):
        folder = os.environ.pop(_FOR_THE_WORKERS, None)
        if folder is not None:
            _bytecode_for_subprocesses(folder)
        return
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or "PYTHONPYCACHEPREFIX" in os.environ:
        return
    folder = tempfile.mkdtemp(prefix="tokasm-tests-bytecode-")
    config.add_cleanup(partial(shutil.rmtree, folder, ignore_errors=True))
    if config.getoption("tx", None):  # xdist's workers (-n, --tx) start after this
        os.environ[_FOR_THE_WORKERS] = folder
    else:
        _bytecode_for_subprocesses(folder)


#: How the controller tells xdist's workers the folder, without pointing them at it.
_FOR_THE_WORKERS = "TOKASM_TESTS_BYTECODE"


def _bytecode_for_subprocesses(folder: str) -> None:
    os.environ["PYTHONPYCACHEPREFIX"] = folder
    del os.environ["PYTHONDONTWRITEBYTECODE"]
