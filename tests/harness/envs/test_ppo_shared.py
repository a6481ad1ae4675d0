"""One PPO-2K per environment and run: the same weights whoever trains first, the row's replay through its own arena."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agents.base import AgentContext
from harness.envs import ppo_agent
from harness.envs.ppo import PpoConfig, train_ppo
from harness.envs.ppo_shared import replay, shared_stem
from harness.envs.scoring import Source, TableScorer
from harness.play.arena import Arena
from harness.play.grants import EvaluationGrants
from harness.registry.specs import make_agent, parse_spec
from tests.harness.envs.envs_helpers import environment

TINY = PpoConfig(n_envs=3, n_steps=8, batch_size=8, n_epochs=2, snapshot_games=2, seed=5)


def _same(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


def test_training_through_the_arena_and_through_the_reward_table_gives_the_same_policy() -> None:
    env = environment(13)  # K=0.6 on the No Corners board: wins, draws and losses all possible
    table = EvaluationGrants(env).grant_simulator("test").reward_table()
    by_arena, arena_stats = train_ppo(Arena(env, budget=6), TINY)
    by_table, table_stats = train_ppo(Source(env.rules, TableScorer(table, 6)), TINY)
    assert arena_stats.record == table_stats.record and len(arena_stats.record) == 6
    assert _same(by_arena, by_table)


@pytest.mark.parametrize("first", ["opponent", "row"])
def test_the_row_and_the_opponent_column_share_one_training(tmp_path: Path, first: str) -> None:
    env = environment(20)
    stem = shared_stem(tmp_path, env.id, 7, 3)
    grants = EvaluationGrants(env)
    opponent_spec = f"ppo-2k:games=3,seed=7,shared={stem}"
    row = make_agent(f"ppo:seed=7,shared={stem}", AgentContext(env.rules), np.random.default_rng(0))
    arena = Arena(env, budget=3)
    ppo_agent._TRAINED_OPPONENTS.clear()
    if first == "row":
        row.adapt(arena)
    opponent = make_agent(opponent_spec, AgentContext(env.rules, grant_simulator=grants.grant_simulator), np.random.default_rng(1))
    trained = opponent._untrained()
    if first == "opponent":
        row.adapt(arena)  # loads the opponent's training and replays its 3 games through this arena
    assert arena.games_played == 3 and row.training_summary()["games"] == 3
    assert _same(row.policy, trained) and stem.with_suffix(".pt").exists()


def test_the_row_refuses_a_shared_training_its_arena_scores_differently(tmp_path: Path) -> None:
    env = environment(13)
    table = EvaluationGrants(env).grant_simulator("test").reward_table()
    _, stats = train_ppo(Source(env.rules, TableScorer(table, 4)), TINY)
    moves, reward = stats.record[0]
    forged = [(moves, 1 if reward != 1 else -1), *stats.record[1:]]
    with pytest.raises(ValueError, match="training game 1 scores"):
        replay(Arena(env, budget=4), forged)


def test_the_bench_worker_shares_only_the_default_row_and_the_default_opponent(tmp_path: Path) -> None:
    from harness.bench.paper_plan import PaperTask, make_paper_plan
    from harness.bench.paper_worker import shared_ppo

    plan = make_paper_plan([5], ["ppo", "interval"], budget=1000, games=2, opponents=["random", "ppo-2k:games=1000"])
    task = PaperTask(plan=plan, env_id=5, agent="ppo", shared_dir=str(tmp_path))
    row, column = shared_ppo(task, "ppo"), shared_ppo(task, "ppo-2k:games=1000")
    row_values, column_values = parse_spec(row)[1], parse_spec(column)[1]
    assert row_values["shared"] == column_values["shared"] and row_values["seed"] == column_values["seed"] > 0
    assert row_values["shared"].endswith("-games-1000") and column_values["games"] == 1000
    for unshared in ("ppo:epochs=3", "ppo-2k:games=1000,seed=4", "random"):
        assert shared_ppo(task, unshared) == unshared
    assert shared_ppo(task.model_copy(update={"shared_dir": ""}), "ppo") == "ppo"
