"""Deprecated path of ``tokasm.conformance.suite``, kept so older imports work."""

from tokasm.conformance.plugin import suite

__all__ = ["suite"]
