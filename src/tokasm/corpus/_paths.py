"""Where the ``spec/`` folder is: ``$TOKASM_SPEC_DIR``, else the copy the wheel carries
(``tokasm/_spec``), else the checkout's; and where tokasm keeps what it reuses between runs."""

from __future__ import annotations

import os
from pathlib import Path

from tokasm.errors import CorpusError

SPEC_DIR_ENV = "TOKASM_SPEC_DIR"
CACHE_DIR_ENV = "TOKASM_CACHE_DIR"
_PACKAGE = Path(__file__).resolve().parent.parent
#: The spec folders tokasm ships (whose case files its tests check): the wheel's, the checkout's.
_SHIPPED = (_PACKAGE / "_spec", _PACKAGE.parent.parent / "spec")


def spec_dir() -> Path:
    """The spec folder in use; CorpusError (exit 2) names where it looked, and the variable."""
    override = os.environ.get(SPEC_DIR_ENV)
    candidates = [Path(override)] if override else list(_SHIPPED)
    for candidate in candidates:
        if (candidate / "VERSION").is_file():
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    hint = f" ({SPEC_DIR_ENV} is set)" if override else ""
    raise CorpusError(f"no tokasm spec folder (with a VERSION file){hint}; looked in {looked}")


def shipped(root: Path) -> bool:
    return root.resolve() in _SHIPPED


def cache_dir() -> Path | None:
    """``$TOKASM_CACHE_DIR`` (empty: None), else ``$XDG_CACHE_HOME/tokasm``, else ``~/.cache``'s."""
    chosen = os.environ.get(CACHE_DIR_ENV)
    if chosen is not None:
        return Path(chosen) if chosen else None
    if base := os.environ.get("XDG_CACHE_HOME"):
        return Path(base) / "tokasm"
    home = os.path.expanduser("~")  # left as it is without HOME and a password entry
    return None if home == "~" else Path(home) / ".cache" / "tokasm"
