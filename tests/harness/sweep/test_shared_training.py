"""A sweep trains each environment's PPO-2K opponent once for all its bench cells, as ``arena bench paper`` does."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.bench.paper_run import read_results
from harness.envs import ppo_agent
from harness.sweep.backends import run_sweep
from harness.sweep.cells import CELLS_DIR, SHARED_DIR
from harness.sweep.spec import parse_sweep


def test_two_agents_cells_on_one_environment_share_one_ppo_2k_training(tmp_path: Path) -> None:
    sweep = parse_sweep(
        {
            "envs": [12],
            "seeds": [0],
            "agents": ["random", "greedy"],
            "budget": 2,
            "games": 2,
            "checkpoint_games": 1,
            "referee": False,
            "opponents": ["ppo-2k:games=2"],
        }
    )
    ppo_agent._TRAINED_OPPONENTS.clear()  # this process's cache would hide a second training
    outcomes = run_sweep(sweep, tmp_path, jobs=1)
    assert [o.status for o in outcomes] == ["ok", "ok"]
    trainings = sorted(p.name for p in (tmp_path / SHARED_DIR).glob("*.pt"))
    assert len(trainings) == 1 and trainings[0].startswith("env-12-seed-") and trainings[0].endswith("-games-2.pt")
    assert not list((tmp_path / CELLS_DIR).glob("*/ppo-2k"))  # no cell trained its own
    for cell in (tmp_path / CELLS_DIR).iterdir():  # both cells met the opponent: 2 evaluation games each
        (result,) = read_results(cell).values()
        assert [(o.opponent, o.win + o.draw + o.lose) for o in result.final] == [("PPO-2K", 2)]


def test_a_local_ray_instance_runs_its_workers_at_the_commands_priority(monkeypatch, tmp_path: Path) -> None:
    """Ray's default worker niceness (15) would let any other job take the sweep's CPU; a local instance sets 0."""
    import ray  # a pinned dependency: its absence must fail, not skip

    from harness.sweep import backends

    seen: dict[str, object] = {}

    class Started(Exception):
        pass

    def init(**settings: object) -> None:
        seen.update(settings)
        raise Started

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    sweep = parse_sweep(
        {"envs": [12], "seeds": [0], "agents": ["random"], "budget": 2, "games": 2, "referee": False, "opponents": ["random"]}
    )
    with pytest.raises(Started):
        next(backends._run_ray(sweep.cells, tmp_path, 2, None, {}, {}))
    assert seen["num_cpus"] == 2 and seen["_system_config"] == {"worker_niceness": 0}
    seen.clear()
    with pytest.raises(Started):
        next(backends._run_ray(sweep.cells, tmp_path, 2, "10.0.0.1:6379", {}, {}))
    assert seen["address"] == "10.0.0.1:6379" and "_system_config" not in seen  # a cluster keeps its own settings
