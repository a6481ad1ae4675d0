"""Per-module coverage of the critical modules, and the floor `make test` enforces (not a test module).

Usage: ``python tests/coverage_floor.py COVERAGE_JSON [--floor] [MODULE ...]``: prints lines and
branches covered per module (from ``coverage json``); with ``--floor`` exits 1 when a module
is below its floor. With modules given, only those are reported and checked.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# The modules that decide benchmark results (issue 20), with their floors (percent of lines, of branches).
CRITICAL: dict[str, tuple[float, float]] = {
    "engine/rules.py": (95, 90),
    "engine/condition.py": (95, 90),
    "engine/kernels.py": (95, 90),
    "engine/bits.py": (95, 90),
    "engine/protocol/arena.py": (95, 90),
    "harness/play/game.py": (95, 90),
    "harness/records/chain.py": (95, 90),
    "harness/records/entries.py": (95, 90),
    "harness/records/integrity.py": (95, 90),
    "harness/records/provenance.py": (95, 90),
    "harness/records/transcript.py": (95, 90),
    "harness/runs/replay.py": (95, 90),
    "harness/runs/rerun.py": (95, 90),
    "harness/prompting/moves.py": (95, 90),
    "harness/models/errors.py": (95, 90),
    "harness/models/client.py": (95, 90),
    "agents/search/api.py": (95, 90),
    "agents/interval/belief.py": (95, 90),
}


def figures(summary: dict[str, int]) -> tuple[float, float]:
    lines = 100.0 * summary["covered_lines"] / summary["num_statements"] if summary["num_statements"] else 100.0
    branches = 100.0 * summary["covered_branches"] / summary["num_branches"] if summary.get("num_branches") else 100.0
    return lines, branches


def main(argv: list[str]) -> int:
    path, rest = Path(argv[0]), argv[1:]
    check = "--floor" in rest
    modules = [m for m in rest if m != "--floor"] or list(CRITICAL)
    files = json.loads(path.read_text())["files"]
    below = []
    print(f"{'module':<34} {'lines':>14} {'branches':>14}")
    for module in modules:
        if module not in files:
            print(f"{module:<34} {'not measured':>14}")
            below.append(module)
            continue
        summary = files[module]["summary"]
        lines, branches = figures(summary)
        floor_lines, floor_branches = CRITICAL.get(module, (95, 90))
        short = lines < floor_lines or branches < floor_branches
        mark = "  BELOW FLOOR" if short else ""
        print(f"{module:<34} {lines:6.1f}% ({summary['num_statements']:>4}) {branches:6.1f}% ({summary['num_branches']:>4}){mark}")
        if short:
            below.append(module)
    if check and below:
        print(f"coverage floor: {len(below)} module(s) below it: {', '.join(below)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
