"""The batched vector environment against the rules engine, game by game, on boards of one and two words."""

from __future__ import annotations

import numpy as np
import pytest

from engine.state import PASS
from harness.envs.vector import OthelloVector
from tests.harness.envs.envs_helpers import environment


def _after(rules, state, move):
    state = rules.play(state, move)
    moves = [move]
    while not rules.is_over(state) and rules.legal_moves(state) == [PASS]:
        state = rules.play(state, PASS)
        moves.append(PASS)
    return state, moves


@pytest.mark.parametrize("key", [1, 4, 47, "custom"])
def test_every_game_follows_the_rules(key: int | str) -> None:
    env = environment(key)
    rules = env.rules
    n = 12
    vector = OthelloVector(env, n, budget=None)
    planes, info = vector.reset(seed=4)
    states = [rules.initial_state()] * n
    finished = 0
    for _ in range(150):
        for i in range(n):
            grid = rules.grid(states[i])
            assert (planes[i, 0] == (grid == 1)).all() and (planes[i, 1] == (grid == -1)).all()
            assert (planes[i, 2] == (grid == 2)).all()
            legal = [m for m in rules.legal_moves(states[i]) if m != PASS]
            assert np.flatnonzero(info["action_mask"][i]).tolist() == legal
        actions = vector.random_actions()
        planes, rewards, terminated, truncated, info = vector.step(actions)
        assert not truncated.any()
        for i in range(n):
            state, _ = _after(rules, states[i], int(actions[i]))
            if rules.is_over(state):
                assert terminated[i]
                black, white = rules.counts(state)
                assert (info["final_black"][i], info["final_white"][i]) == (black, white)
                mover = states[i].to_move
                assert info["actor"][i] == mover and rewards[i] == env.condition.rewards(black, white)[mover]
                state = rules.initial_state()
                finished += 1
            else:
                assert not terminated[i] and rewards[i] == 0
            states[i] = state
    assert finished >= n


def test_random_actions_are_legal_and_seeded() -> None:
    first = OthelloVector(0, 300, budget=None)
    second = OthelloVector(0, 300, budget=None)
    first.reset(seed=9)
    second.reset(seed=9)
    for _ in range(20):
        actions = first.random_actions()
        assert (actions == second.random_actions()).all()
        assert first.action_masks()[np.arange(300), actions].all()
        first.step(actions)
        second.step(actions)


def test_an_illegal_action_is_named() -> None:
    vector = OthelloVector(0, 4, budget=None)
    vector.reset()
    actions = vector.random_actions()
    actions[2] = 0
    with pytest.raises(ValueError, match="game 2: action 0 is not a legal placement"):
        vector.step(actions)


def test_the_spaces_are_batched() -> None:
    vector = OthelloVector(4, 5, budget=None)
    assert vector.observation_space.shape == (5, 3, 12, 10)
    assert vector.single_action_space.n == 120
    planes, _ = vector.reset()
    assert planes in vector.observation_space
