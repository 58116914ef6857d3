"""Which case files passed the schema, kept between runs, so a repeat run skips that check.

Checking a case file against ``case.schema.json`` costs five times what parsing
it does (0.35 s against 0.07 s for the bundled corpus). A file that passed
leaves an empty entry named by a key made of the file's bytes, the schema's
bytes and tokasm's version, so any change to either makes a new key. Cases are
always read from the file itself, never from the cache, so an entry changed or
planted by another program cannot change a verdict: at worst it spares the
schema check of a file whose exact bytes it names. The cache is an
optimisation only: a missing or unwritable entry means the file is checked as
if there were no cache.

Where: tokasm's cache folder (``_paths.cache_dir``); ``TOKASM_CACHE_DIR`` set
empty turns the cache off.
"""

from __future__ import annotations

import contextlib
import hashlib
from functools import cache
from typing import TYPE_CHECKING

from tokasm._versions import __version__
from tokasm.corpus._paths import cache_dir

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["checked_before", "note_checked", "validation_key"]

_FORMAT = "2"  # bump when what an entry means changes (1 kept whole documents)


@cache
def _schema_digest(schema_path: Path) -> bytes:
    return hashlib.sha256(schema_path.read_bytes()).digest()


def validation_key(data: bytes, schema_path: Path) -> str:
    """The cache key of a case file's bytes, checked against the schema at ``schema_path``."""
    digest = hashlib.sha256(f"{_FORMAT}:{__version__}:".encode())
    digest.update(_schema_digest(schema_path))
    digest.update(data)
    return digest.hexdigest()


def _entry(folder: Path, key: str) -> Path:
    return folder / f"valid-{key}"


def checked_before(key: str) -> bool:
    """Whether the bytes of ``key`` passed the schema in an earlier run."""
    folder = cache_dir()
    return folder is not None and _entry(folder, key).is_file()


def note_checked(key: str) -> None:
    """Record that the bytes of ``key`` passed the schema; never fails."""
    folder = cache_dir()
    if folder is None:
        return
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        _entry(folder, key).touch()
