"""``tokasm export``: the corpus as plain JSON for test runners in other languages."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tokasm import report
from tokasm.cli import options
from tokasm.corpus import LARGE_PROFILES, json_can_carry, write_folder, write_lines
from tokasm.errors import ReportError, UsageError

if TYPE_CHECKING:
    import argparse

    from tokasm.cli.options import Commands

DESCRIPTION = """\
Write the corpus with every compact form expanded into plain steps, so a test
runner in any language needs only a JSON parser and a loop (docs/export.md;
schema: spec/export.schema.json). Each case is one self-contained JSON object
with the tokasm, corpus and protocol versions, its id, description,
requirements, profile, instances, source file and steps such as
  {"op": "apply", "instance": "a", "event": {"id": "m", "delta": "x"}, "returns": null}

--format json (default): OUT is a folder, one CASE-ID.json per case. An
earlier export in OUT is replaced: only the files its marker (.tokasm-export)
names are removed, and no file is written over or through a symlink; any
other non-empty folder is refused.
--format jsonl: OUT is a file, or - for stdout, one case per line.
The optional `scale` profile's cases (about 60 MB) are left out unless
--profile scale asks for them. The output is the same bytes for the same
corpus and options. A case JSON cannot carry exactly (a surrogate pair split
across deltas, SURR-SPLIT-PAIR) is left out and named on stderr.
"""

EXIT_CODES = options.exit_codes(
    "the export was written", "not used: export finds no target at fault"
)


def add_parser(commands: Commands) -> None:
    parser = options.subcommand(
        commands,
        "export",
        "write the corpus as plain JSON for any language",
        DESCRIPTION,
        EXIT_CODES,
    )
    parser.add_argument("out", type=Path, metavar="OUT", help="a folder, or with jsonl a file or -")
    formats = "json: one file per case in the folder OUT (default); jsonl: one case per line"
    large = "also write the cases of this profile, left out by default for their size"
    options.add_options(
        parser,
        ("--format", formats, {"choices": ("json", "jsonl"), "default": "json"}),
        ("--profile", large, {**options.LISTED, "choices": sorted(LARGE_PROFILES)}),
    )
    options.add_case_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.format == "json" and str(args.out) == "-":
        raise UsageError("writing to stdout (-) needs --format jsonl")
    if args.format == "jsonl" and str(args.out) != "-":
        report.refuse_case_file("OUT", args.out, options.case_sources(args))
    corpus, chosen = options.chosen_cases(args)
    chosen = [case for case in chosen if not case.large or case.profile in args.profile]
    left_out = [case.id for case in chosen if not json_can_carry(case)]
    cases = [case for case in chosen if case.id not in left_out]
    out: Path = args.out
    try:
        if args.format == "json":
            written = write_folder(out, cases, corpus)
        elif str(out) == "-":
            written = write_lines(sys.stdout, cases, corpus)
        else:
            with out.open("w", encoding="ascii", newline="\n") as stream:
                written = write_lines(stream, cases, corpus)
    except ValueError as error:
        raise UsageError(str(error)) from None
    except BrokenPipeError:  # ``tokasm export - | head``: the reader has what it wanted
        options.silence()
        return 0
    except OSError as error:
        raise ReportError(f"cannot write the export: {error}") from error
    print(
        f"tokasm export: {len(cases)} cases, corpus {corpus.version}, "
        f"{written / 1e6:.1f} MB to {out}",
        file=sys.stderr,
    )
    if left_out:
        print(f"tokasm export: left out (JSON cannot carry them): {left_out}", file=sys.stderr)
    return 0
