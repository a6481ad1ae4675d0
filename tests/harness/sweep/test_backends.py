"""A tiny sweep on a local Ray instance equals the local backend; a worker killed mid-cell loses and repeats no game."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.records.lock import LOCK_FILE
from harness.sweep.backends import run_sweep
from harness.sweep.cells import CELLS_DIR, cell_state
from harness.sweep.spec import parse_sweep

pytestmark = pytest.mark.long  # end-to-end: collected first (tests/conftest.py)

ray = pytest.importorskip("ray")

# 2 agents (two mock models) x 3 envs x 2 seeds, in-process (fast), colours alternating against Random.
TINY = {
    "envs": [5, 12, 26],
    "seeds": [0, 1],
    "budget": 3,
    "games": 2,
    "referee": False,
    "opponents": ["random"],
    "models": [{"model": "mock/first-legal", "options": {"concurrency": 1}}, {"model": "mock/random-legal", "options": {"concurrency": 1}}],
}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One local Ray instance (2 CPUs) for the module: start-up takes seconds."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def _games(out: Path) -> dict[str, list[tuple[object, ...]]]:
    """Each cell's games as (phase, index, moves, rewards): what a run plays, without timings."""
    played = {}
    for cell in sorted((out / CELLS_DIR).iterdir()):
        lines = (cell / "games.jsonl").read_text(encoding="utf-8").splitlines()
        played[cell.name] = [(g["phase"], g["game_index"], tuple(g["moves"]), tuple(g["rewards"])) for g in map(json.loads, lines)]
    return played


def test_ray_equals_local_and_a_second_run_skips_every_cell(local_ray: None, tmp_path: Path) -> None:
    sweep = parse_sweep(TINY)
    assert len(sweep.cells) == 12
    local = run_sweep(sweep, tmp_path / "local", backend="local", jobs=2)
    on_ray = run_sweep(sweep, tmp_path / "ray", backend="ray", jobs=2)
    assert [o.status for o in local] == ["ok"] * 12 and [o.status for o in on_ray] == ["ok"] * 12
    assert _games(tmp_path / "local") == _games(tmp_path / "ray")
    assert all(len(games) == 3 + 2 for games in _games(tmp_path / "ray").values())
    again = run_sweep(sweep, tmp_path / "ray", backend="ray", jobs=2)
    assert [o.status for o in again] == ["skipped"] * 12


def test_a_worker_killed_mid_cell_is_retried_with_every_game_once(local_ray: None, tmp_path: Path) -> None:
    sweep = parse_sweep({**TINY, "envs": [12], "seeds": [0], "budget": 200, "models": TINY["models"][:1]})
    cell = sweep.cells[0]
    run_dir = tmp_path / CELLS_DIR / cell.id
    result: list[object] = []
    runner = threading.Thread(target=lambda: result.append(run_sweep(sweep, tmp_path, backend="ray")))
    runner.start()
    waited, killed = threading.Event(), None
    for _ in range(6000):  # a hang guard: at most ~5 minutes
        games = run_dir / "games.jsonl"
        if games.is_file() and len(games.read_text(encoding="utf-8").splitlines()) >= 20:
            holder = (run_dir / LOCK_FILE).read_text(encoding="utf-8")
            killed = int(holder.split()[1])  # "pid N on HOST, since ..."
            os.kill(killed, signal.SIGKILL)  # the Ray worker that runs the cell, mid-adaptation
            break
        waited.wait(0.05)
    runner.join(timeout=600)
    assert killed is not None and not runner.is_alive()
    assert [o.status for o in result[0]] == ["ok"]  # type: ignore[attr-defined]
    assert cell_state(run_dir, cell) == "finished"
    played = [(g[0], g[1]) for g in _games(tmp_path)[cell.id]]
    assert played == [("adapt", i) for i in range(200)] + [("eval", i) for i in range(2)]
