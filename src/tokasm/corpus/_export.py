"""The corpus as plain JSON (``spec/export.schema.json``, docs/export.md), compact forms
expanded: each step a protocol request plus what it must return or raise."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, TextIO

from tokasm._versions import PROTOCOL_VERSION, __version__

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from tokasm.corpus._load import Case, Corpus
    from tokasm.corpus.steps import Step

__all__ = ["json_can_carry", "write_folder", "write_lines"]

#: The version of the export's own shape; bumped only if a key changes meaning.
EXPORT_FORMAT = 1
#: The file that marks a folder as a tokasm export, so a new export may replace its files.
MARKER = ".tokasm-export"
_CASE_START = b'{"export_format":'  # how every exported case's file begins
#: A high then a low surrogate as two code points: JSON writes them as one astral character.
_SPLIT_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def json_can_carry(case: Case) -> bool:
    """False if a text holds a split surrogate pair (SURR-SPLIT-PAIR): JSON reads one character."""
    steps = [_step_document(step) for step in case.steps]
    return not _SPLIT_PAIR.search(json.dumps(steps, ensure_ascii=False))


def _step_document(step: Step) -> dict[str, object]:
    assert step.expect is not None  # a corpus case always says what a step must do
    return {**step.request(), **step.expect.document(), "where": step.where}


def _case_line(case: Case, corpus: Corpus) -> str:
    """The case as one line of ASCII JSON: lone surrogates survive only as ``\\uXXXX``."""
    source = case.source.relative_to(corpus.root) if case.bundled else case.source
    document = {
        "export_format": EXPORT_FORMAT,
        "tokasm_version": __version__,
        "corpus_version": corpus.version,
        "protocol_version": PROTOCOL_VERSION,
        "id": case.id,
        "description": case.description,
        "requirements": list(case.requirements),
        "profile": case.profile,
        "instances": list(case.instances),
        "source": source.as_posix(),
        "bundled": case.bundled,
        "steps": [_step_document(step) for step in case.steps],
    }
    return json.dumps(document, separators=(",", ":"), ensure_ascii=True) + "\n"


def write_folder(folder: Path, cases: Iterable[Case], corpus: Corpus) -> int:
    """Write ``CASE-ID.json`` per case into ``folder``, replacing an earlier export there;
    returns the bytes written. Only exported cases the marker names are removed, and no
    file is overwritten: a folder neither empty nor an export is refused (ValueError)."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / MARKER
    if marker.is_symlink() or (any(folder.iterdir()) and not marker.is_file()):
        raise ValueError(f"{folder} is not empty and holds no earlier export ({MARKER})")
    if marker.is_file():
        for name in marker.read_text(encoding="ascii").splitlines()[1:]:
            old = folder / name
            if "/" in name or old.is_symlink() or not old.is_file() or old.suffix != ".json":
                continue
            with old.open("rb") as stream:
                start = stream.read(len(_CASE_START))
            if start == _CASE_START:
                old.unlink()
        marker.unlink()
    written, names = 0, []
    for case in cases:
        line, name = _case_line(case, corpus), f"{case.id}.json"
        try:
            with (folder / name).open("x", encoding="ascii") as stream:  # never a user's file
                stream.write(line)
        except FileExistsError:
            raise ValueError(f"{folder / name} is there and was not written by an export") from None
        names.append(name)
        written += len(line)
    header = f"tokasm {__version__}, corpus {corpus.version}"
    with marker.open("x", encoding="ascii") as stream:  # never through a link made meanwhile
        stream.write("\n".join([header, *names]) + "\n")
    return written


def write_lines(out: TextIO, cases: Iterable[Case], corpus: Corpus) -> int:
    """Write one case per line to the text stream ``out``; returns the characters written."""
    return sum(out.write(_case_line(case, corpus)) for case in cases)
