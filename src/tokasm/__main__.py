"""``python -m tokasm`` is the ``tokasm`` command."""

from __future__ import annotations

from tokasm.cli import command

command()
