"""Deprecated path of ``tokasm.fuzz.stateful``, kept so older imports work."""

from tokasm.fuzz.stateful import *  # noqa: F403
