"""Benchmarks shared by ``benchmarks/`` (pytest-benchmark) and ``tokasm bench``."""

from tokasm.bench._measure import *  # noqa: F403
from tokasm.bench._report import *  # noqa: F403
from tokasm.bench._sweep import *  # noqa: F403
from tokasm.bench.scenarios import *  # noqa: F403
