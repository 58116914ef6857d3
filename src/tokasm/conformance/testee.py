"""Deprecated path of ``python -m tokasm.protocol.testee``, kept so older commands work."""

from tokasm.protocol.testee import main

if __name__ == "__main__":
    raise SystemExit(main())
