"""The line protocol: its codec, the supervised client that runs every target out of
tokasm's process (foreign testees and tokasm's own Python worker), and the Python testee
(``python -m tokasm.protocol.testee``, which this package does not import)."""

from tokasm.protocol._client import *  # noqa: F403
