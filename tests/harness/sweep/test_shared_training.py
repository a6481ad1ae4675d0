"""A sweep trains each environment's PPO-2K opponent once for all its bench cells, as ``arena bench paper`` does."""

from __future__ import annotations

from pathlib import Path

from harness.bench.paper_run import read_results
from harness.envs import ppo_agent
from harness.sweep.backends import run_sweep
from harness.sweep.cells import CELLS_DIR, SHARED_DIR
from harness.sweep.spec import parse_sweep


def test_two_agents_cells_on_one_environment_share_one_ppo_2k_training(tmp_path: Path) -> None:
    sweep = parse_sweep({"envs": [12], "seeds": [0], "agents": ["random", "greedy"], "budget": 2, "games": 2,
                         "checkpoint_games": 1, "referee": False, "opponents": ["ppo-2k:games=2"]})
    ppo_agent._TRAINED_OPPONENTS.clear()  # this process's cache would hide a second training
    outcomes = run_sweep(sweep, tmp_path, jobs=1)
    assert [o.status for o in outcomes] == ["ok", "ok"]
    trainings = sorted(p.name for p in (tmp_path / SHARED_DIR).glob("*.pt"))
    assert len(trainings) == 1 and trainings[0].startswith("env-12-seed-") and trainings[0].endswith("-games-2.pt")
    assert not list((tmp_path / CELLS_DIR).glob("*/ppo-2k"))  # no cell trained its own
    for cell in (tmp_path / CELLS_DIR).iterdir():  # both cells met the opponent: 2 evaluation games each
        (result,) = read_results(cell).values()
        assert [(o.opponent, o.win + o.draw + o.lose) for o in result.final] == [("PPO-2K", 2)]
