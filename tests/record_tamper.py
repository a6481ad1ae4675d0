"""A small run to damage, and ways to damage a run directory as a careless edit or a forger would (not a test module).

``edit_line`` changes one record and leaves the chain as it is (an honest mistake the
chain must show); ``forge`` then recomputes every link and the manifest's seal, as
someone who knows the format would, so that only the checks below the chain (the
engine, completeness, the rerun) can catch the change.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from harness.models.cache import GENESIS_HASH, PREV_HASH, chain_line, line_hash

CHAINED = ("games.jsonl", "calls.jsonl", "cache.jsonl")
# The run the replay tests damage (tests/harness/runs/conftest.py): 12 games, 660 calls, in about a second.
SMALL_RUN = dict(model="mock/first-legal", env=21, budget=10, eval_games=2, opponents=("random",), seed=0, checkpoints=(10,))


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def write_lines(path: Path, rows: list[bytes]) -> None:
    path.write_bytes(b"".join(row + b"\n" for row in rows))


def edit_line(path: Path, index: int, change: Callable[[dict], None]) -> dict:
    """Change record ``index`` (0-based) in place, keeping its bytes otherwise as the writer wrote them."""
    rows = lines(path)
    record = json.loads(rows[index])
    change(record)
    rows[index] = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    write_lines(path, rows)
    return record


def rechain(path: Path) -> None:
    """Recompute every ``prev_hash`` of ``path`` (lines without one get one)."""
    previous, out = GENESIS_HASH, []
    for row in lines(path):
        record = json.loads(row)
        record.pop(PREV_HASH, None)
        line = chain_line(previous, json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
        out.append(line)
        previous = line_hash(line)
    write_lines(path, out)


def reseal(run_dir: Path) -> None:
    """Make the manifest's seal agree with the files as they are (line counts, last hashes, games per phase)."""
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for name in CHAINED:
        path = run_dir / name
        if not path.exists():
            continue
        rows = lines(path)
        seal = {"lines": len(rows), "last_hash": line_hash(rows[-1]) if rows else GENESIS_HASH, "phases": None}
        if name == "games.jsonl":
            phases = [json.loads(row)["phase"] for row in rows]
            seal["phases"] = {phase: phases.count(phase) for phase in ("adapt", "eval")}
        manifest["chains"][name] = seal
    manifest_path.write_text(json.dumps(manifest, indent=2))


def forge(run_dir: Path) -> None:
    """Rechain every chained file and reseal the manifest: a consistent forgery."""
    for name in CHAINED:
        if (run_dir / name).exists():
            rechain(run_dir / name)
    reseal(run_dir)
