"""Run ``tokasm bench --quick`` repeatedly, without and then with CPU burners; compare verdicts.

    python benchmarks/bench_under_load.py [--runs 5] [--burners 2] [--out DIR]

Each run writes its JSON to DIR; then one line per cell whose verdict differs between any
two runs (runs without burners first), the cells identical in every run, and the wall time
of each run. Exits 1 if any verdict differs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_BURN = "while True: pass"


def _runs(count: int, burners: int, out: Path, tag: str) -> list[tuple[Path, float]]:
    burning = [subprocess.Popen([sys.executable, "-c", _BURN]) for _ in range(burners)]
    done = []
    try:
        for index in range(count):
            path = out / f"{tag}-{index}.json"
            start = time.monotonic()
            command = [
                sys.executable,
                "-m",
                "tokasm",
                "bench",
                "--quick",
                "-q",
                "--json",
                str(path),
            ]
            subprocess.run(command, stdout=subprocess.DEVNULL, check=False)
            done.append((path, time.monotonic() - start))
            print(f"{tag} {index}: {done[-1][1]:.0f} s", flush=True)
    finally:
        for burner in burning:
            burner.kill()
            burner.wait()
    return done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--burners", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="bench-load-")))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    runs = _runs(args.runs, 0, args.out, "idle") + _runs(args.runs, args.burners, args.out, "burn")
    verdicts: dict[tuple[str, str], list[str]] = {}
    for path, _ in runs:
        for result in json.loads(path.read_text(encoding="utf-8"))["results"]:
            shown = "ERROR" if result["error"] else result["verdict"]
            verdicts.setdefault((result["scenario"], result["implementation"]), []).append(shown)
    differ = {cell: shown for cell, shown in verdicts.items() if len(set(shown)) > 1}
    for (scenario, name), shown in differ.items():
        print(f"{scenario} {name}: {' | '.join(shown)}")
    print(
        f"{len(verdicts) - len(differ)} of {len(verdicts)} cells the same in all {len(runs)} runs"
    )
    print(
        "wall seconds:", " ".join(f"{seconds:.0f}" for _, seconds in runs), f"(JSON in {args.out})"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
