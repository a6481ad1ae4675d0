"""PettingZoo's own api_test on all 56 environments and a custom layout; the AEC env's passing, rewards and rendering."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test

from engine.rules import Rules
from engine.state import PASS
from harness.envs.aec import OthelloAEC
from harness.envs.scoring import custom_environment
from tests.harness.envs.envs_helpers import ENV_KEYS, environment


@pytest.mark.parametrize("key", ENV_KEYS)
def test_api_test_passes(key: int | str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # its style hints (agent names like player_0, dict observations)
        api_test(OthelloAEC(environment(key)), num_cycles=40)


def test_a_layout_file_builds_an_environment(layout_file) -> None:
    env = OthelloAEC(custom_environment(layout_file, 0.3), budget=None)
    env.reset()
    assert env.layout.name == "file board"
    assert env.observe("black")["observation"].shape == (3, 6, 6)


def _play_to_end(env: OthelloAEC, rng: np.random.Generator) -> list[dict]:
    seen = []
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        seen.append({"agent": agent, "mask": observation["action_mask"].copy(), "done": terminated or truncated})
        if terminated or truncated:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    return seen


def test_the_acting_agent_never_sees_an_all_zero_mask_and_passes_are_played() -> None:
    # Environment 5 (the 6x8 board) has forced passes in random games; the turn-limited ones end early.
    rng = np.random.default_rng(0)
    passes = 0
    for env_id in (5, 47, 54):
        env = OthelloAEC(env_id, budget=None)
        for _ in range(6):
            env.reset()
            seen = _play_to_end(env, rng)
            assert all(step["mask"].any() for step in seen if not step["done"])
            passes += sum(1 for a, b in zip(seen, seen[1:]) if a["agent"] == b["agent"] and not b["done"])
    assert passes > 0


def test_moves_and_rewards_agree_with_the_rules_and_condition() -> None:
    env_id = 12
    env = OthelloAEC(env_id, budget=None)
    rules: Rules = environment(env_id).rules
    condition = environment(env_id).condition
    rng = np.random.default_rng(3)
    env.reset()
    state = rules.initial_state()
    for agent in env.agent_iter():
        observation, reward, terminated, _, _ = env.last()
        if terminated:
            black, white = rules.counts(state)
            assert reward == condition.rewards(black, white)[0 if agent == "black" else 1]
            env.step(None)
            continue
        assert agent == ("black", "white")[state.to_move]
        legal = [m for m in rules.legal_moves(state) if m != PASS]
        assert np.flatnonzero(observation["action_mask"]).tolist() == legal
        move = int(rng.choice(legal))
        env.step(move)
        state = rules.play(state, move)
        while not rules.is_over(state) and rules.legal_moves(state) == [PASS]:
            state = rules.play(state, PASS)


def test_an_illegal_action_is_refused_with_the_legal_placements() -> None:
    env = OthelloAEC(0, budget=None)
    env.reset()
    with pytest.raises(ValueError, match="illegal action a1 \\(0\\) for black: legal placements are e3, f4, c5, d6"):
        env.step(0)


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_render_modes(mode: str) -> None:
    env = OthelloAEC(4, budget=None, render_mode=mode)
    env.reset()
    picture = env.render()
    if mode == "ansi":
        assert isinstance(picture, str) and "X 2  O 2  (black to move)" in picture and picture.count("#") == 24
    else:
        assert isinstance(picture, np.ndarray) and picture.dtype == np.uint8 and picture.shape == (12 * 24, 10 * 24, 3)


def test_a_bad_render_mode_is_named() -> None:
    with pytest.raises(ValueError, match="render_mode='human': choose one of ansi, rgb_array or None"):
        OthelloAEC(0, render_mode="human")
