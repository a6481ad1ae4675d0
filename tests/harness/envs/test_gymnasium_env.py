"""Gymnasium's check_env on all 56 environments and a custom layout; the learner's colours, rewards and illegal actions."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from harness.envs.gym_env import ENV_ID, OthelloGym
from tests.harness.envs.envs_helpers import ENV_KEYS, environment


@pytest.mark.parametrize("key", ENV_KEYS)
def test_check_env_passes(key: int | str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # check_env reports its findings as warnings: none may be left
        check_env(gymnasium.make(ENV_ID, env=environment(key), render_mode="ansi").unwrapped, skip_render_check=False)


def _episode(env: OthelloGym, rng: np.random.Generator) -> tuple[str, float, dict]:
    _, info = env.reset()
    done = False
    reward = 0.0
    while not done:
        mask = env.action_masks()
        assert mask.any() and (mask == info["action_mask"].astype(bool)).all()
        _, reward, done, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert not truncated
    return info["learner"], reward, info


def test_colours_alternate_and_rewards_are_the_learners() -> None:
    env = OthelloGym(2, budget=None)
    env.reset(seed=5)
    rng = np.random.default_rng(1)
    learners = []
    rewards = set()
    for _ in range(8):
        learner, reward, _ = _episode(env, rng)
        learners.append(learner)
        rewards.add(reward)
    assert learners == ["white", "black"] * 4  # reset(seed=5) was black's episode
    assert rewards <= {-1.0, 0.0, 1.0} and len(rewards) >= 2
    assert env.games_played == 8


def test_a_seeded_reset_replays_the_same_episode() -> None:
    env = OthelloGym(6, budget=None)
    runs = []
    for _ in range(2):
        env.reset(seed=11)
        trace = []
        done = False
        while not done:
            action = int(np.flatnonzero(env.action_masks())[0])
            planes, reward, done, _, _ = env.step(action)
            trace.append((action, planes.sum(), reward))
        runs.append(trace)
    assert runs[0] == runs[1]


def test_an_illegal_action_ends_the_episode_uncounted() -> None:
    env = OthelloGym(0, budget=3)
    env.reset()
    _, reward, terminated, _, info = env.step(0)
    assert (reward, terminated) == (-1.0, True)
    assert "illegal action a1" in info["illegal_action"]
    assert env.games_played == 0
    assert not env.action_masks().any()


def test_the_opponent_sees_the_board_from_its_own_side() -> None:
    rules = environment(0).rules
    state = rules.initial_state()
    checked = []

    def opponent(planes: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        nonlocal state
        grid = rules.grid(state)  # white to move: its own discs are 1
        assert state.to_move == 1
        assert (planes[0] == (grid == 1)).all() and (planes[1] == (grid == -1)).all()
        move = int(np.flatnonzero(mask)[0])
        state = _after(rules, state, move)
        checked.append(move)
        return move

    env = OthelloGym(0, budget=None, opponent=opponent)
    env.reset(seed=0)
    for _ in range(5):
        move = int(np.flatnonzero(env.action_masks())[0])
        state = _after(rules, state, move)
        env.step(move)
    assert len(checked) >= 4


def _after(rules, state, move):
    from engine.state import PASS

    state = rules.play(state, move)
    while not rules.is_over(state) and rules.legal_moves(state) == [PASS]:
        state = rules.play(state, PASS)
    return state
