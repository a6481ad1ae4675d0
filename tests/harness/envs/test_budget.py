"""Budget accounting: budgeted environments count finished games through the arena's ledger and raise BudgetExhausted after it."""

from __future__ import annotations

import numpy as np
import pytest

from engine.protocol.arena import BudgetExhausted
from harness.envs.aec import OthelloAEC
from harness.envs.gym_env import OthelloGym
from harness.envs.scoring import FREE_NOTE, FreeScorer
from harness.envs.vector import OthelloVector
from harness.play.arena import Arena
from tests.harness.envs.envs_helpers import environment


def _finish_gym(env: OthelloGym) -> float:
    done, reward = False, 0.0
    while not done:
        _, reward, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    return reward


def test_the_gym_env_counts_games_in_the_arenas_ledger_and_stops_after_the_budget() -> None:
    arena = Arena(environment(3), budget=3)
    env = OthelloGym(arena=arena)
    env.reset(seed=0)
    rewards = [_finish_gym(env)]
    for _ in range(2):
        env.reset()
        rewards.append(_finish_gym(env))
    assert arena.games_played == 3 == env.games_played and arena.remaining == 0
    learner_rewards = [record.rewards[i % 2] for i, record in enumerate(arena.ledger.records)]
    assert learner_rewards == rewards  # the rewards came from the arena's scoring
    with pytest.raises(BudgetExhausted, match="budget of 3 games used up"):
        env.reset()


def test_the_aec_env_by_id_is_budgeted_by_default() -> None:
    env = OthelloAEC(40, budget=2)
    assert env.budgeted and env.budget == 2
    rng = np.random.default_rng(0)
    for _ in range(2):
        env.reset()
        for _agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert env.games_played == 2
    with pytest.raises(BudgetExhausted):
        env.reset()


def test_the_vector_env_submits_finished_games_and_raises_after_the_budget() -> None:
    arena = Arena(environment(5), budget=20)
    vector = OthelloVector(arena=arena, num_envs=8)
    vector.reset(seed=1)
    with pytest.raises(BudgetExhausted):
        for _ in range(10_000):
            vector.step(vector.random_actions())
    assert arena.games_played == 20
    assert all(record.plies == len(record.moves) for record in arena.ledger.records)


def test_free_experimentation_says_so_and_scores_like_the_condition() -> None:
    env = environment(21)
    vector = OthelloVector(env, 64, budget=None)
    assert not vector.budgeted and vector.budget is None
    assert FREE_NOTE in repr(FreeScorer(env.condition)) and "free experimentation" in repr(OthelloAEC(env, budget=None))
    vector.reset(seed=2)
    checked = 0
    for _ in range(200):
        _, rewards, terminated, _, info = vector.step(vector.random_actions())
        for i in np.flatnonzero(terminated):
            black, white = int(info["final_black"][i]), int(info["final_white"][i])
            expected = env.condition.rewards(black, white)[int(info["actor"][i])]
            assert rewards[i] == expected
            checked += 1
    assert checked > 50 and vector.games_played == checked


def test_an_arena_and_an_environment_together_are_refused() -> None:
    with pytest.raises(ValueError, match="not both"):
        OthelloGym(3, arena=Arena(environment(3), budget=1))
