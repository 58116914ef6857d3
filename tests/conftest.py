"""Shared test setup: Hypothesis profiles (CI is derandomized so it cannot flake), and one
bytecode cache for the session's processes."""

from __future__ import annotations

import gc
import os
import shutil
import sys
import tempfile
from functools import partial

import pytest

from tokasm.fuzz import HYPOTHESIS_STORAGE_ENV


def pytest_configure(config: pytest.Config) -> None:
    """The session's processes share what they can: Hypothesis's folder, and bytecode."""
    _one_hypothesis_folder(config)
    _one_bytecode_cache(config)
    _hypothesis_profiles()
    _work_stealing(config)
    _fewer_collections()
    # Imported before any inline pytester run, whose module snapshot would otherwise drop
    # yaml and re-import it afresh, beside a case loader built on the first copy.
    import tokasm.corpus._yaml  # noqa: F401


def _hypothesis_profiles() -> None:
    """CI's profile is derandomized, so it cannot flake. Loaded once the bytecode cache is
    set, so that importing hypothesis reads it."""
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "ci",
        derandomize=True,
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile("dev", deadline=None)
    profile = os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")
    settings.load_profile(profile)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The ``slow`` tests (whole-corpus and whole-docs runs) first, each group in its own
    order: with ``-n 2`` the worker that runs them is the one the other steals from, so the
    session ends on short tests rather than one worker finishing a long one alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def _fewer_collections() -> None:
    """Collect cycles less often in the session's own processes: in-process runs keep the
    corpus's expanded steps alive, and each full collection walks them all (a few percent of
    the suite's CPU time). Tokasm's own processes keep the defaults."""
    gc.set_threshold(50_000, 20, 20)


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
    """The session's Python processes (xdist's workers, and some 150 runs of tokasm, pytest
    and testees) share one bytecode cache, kept in pytest's cache folder between sessions.

    Where ``PYTHONDONTWRITEBYTECODE`` keeps a machine's trees free of ``__pycache__``, each
    process would otherwise compile tokasm from its source again (0.25 s of a 0.45 s
    ``check -k``), and pytest would rewrite the asserts of every plugin's package again
    (hypothesis's, tokasm's: 2 s of each worker's start). Set before xdist starts its
    workers, so that they and every process they start inherit it. Without pytest's cache
    (``-p no:cacheprovider``) the folder is the session's own, and goes at its end.
    """
    if hasattr(config, "workerinput"):
        return
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or "PYTHONPYCACHEPREFIX" in os.environ:
        return
    cache = getattr(config, "cache", None)
    if cache is not None:
        folder = str(cache.mkdir("bytecode"))
    else:
        folder = tempfile.mkdtemp(prefix="tokasm-tests-bytecode-")
        config.add_cleanup(partial(shutil.rmtree, folder, ignore_errors=True))
    os.environ["PYTHONPYCACHEPREFIX"] = folder
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    sys.pycache_prefix, sys.dont_write_bytecode = folder, False  # this process's imports too
