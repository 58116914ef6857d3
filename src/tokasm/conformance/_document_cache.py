"""Validated case documents kept between runs, so a repeat run skips YAML and schema work.

Parsing a corpus file and checking it against ``case.schema.json`` is half of
what loading the corpus costs. A document that passed is saved as JSON under a
key made of the file's bytes, the schema's bytes and tokasm's version, so any
change to either makes a new key; expansion and every other check still run on
each load. The cache is an optimisation only: a missing, unwritable or
corrupt entry means the file is parsed and checked as if there were no cache.

Where: ``$TOKASM_CACHE_DIR`` (empty turns the cache off), else
``$XDG_CACHE_HOME/tokasm``, else ``~/.cache/tokasm``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from .._versions import __version__

__all__ = ["CACHE_DIR_ENV", "document_key", "recall", "remember"]

CACHE_DIR_ENV = "TOKASM_CACHE_DIR"

_FORMAT = "1"  # bump when the way documents are stored or read changes


def _cache_dir() -> Path | None:
    chosen = os.environ.get(CACHE_DIR_ENV)
    if chosen is not None:
        return Path(chosen) if chosen else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tokasm"


@cache
def _schema_digest(schema_path: Path) -> bytes:
    return hashlib.sha256(schema_path.read_bytes()).digest()


def document_key(data: bytes, schema_path: Path) -> str:
    """The cache key of a case file's bytes, checked against the schema at ``schema_path``."""
    digest = hashlib.sha256(f"{_FORMAT}:{__version__}:".encode())
    digest.update(_schema_digest(schema_path))
    digest.update(data)
    return digest.hexdigest()


def recall(key: str) -> Any:
    """The document saved under ``key``, or None."""
    folder = _cache_dir()
    if folder is None:
        return None
    try:
        return json.loads((folder / f"cases-{key}.json").read_bytes())
    except (OSError, ValueError, RecursionError):  # unreadable, not JSON, nested too deeply
        return None


def remember(key: str, document: object) -> None:
    """Save a validated document under ``key`` if JSON carries it exactly (YAML can say
    more: integer keys, dates), atomically; never fails."""
    folder = _cache_dir()
    if folder is None:
        return
    try:
        text = json.dumps(document, ensure_ascii=True, allow_nan=False)
        if json.loads(text) != document:
            return
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".cases-", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="ascii") as stream:
            stream.write(text)
        os.replace(temporary, folder / f"cases-{key}.json")
    except (OSError, ValueError, TypeError, RecursionError):
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(temporary)
