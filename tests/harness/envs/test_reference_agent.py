"""An agent written against the paper's public reference environment's format plays through the adapter unchanged.

The agent below is written from the format's description alone: it gets
``obs_planes`` (float32 ``[3, H, W]``: own discs, opponent discs, obstacles) and an int8
``action_mask`` of length ``H * W`` and returns a flat index ``row * W + col``. It knows
nothing of this project.
"""

from __future__ import annotations

import numpy as np


class ReferenceRandomAgent:
    """A random agent for the reference environment's observation format."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.checked = 0

    def act(self, obs_planes: np.ndarray, action_mask: np.ndarray) -> int:
        assert obs_planes.dtype == np.float32 and obs_planes.ndim == 3 and obs_planes.shape[0] == 3
        assert action_mask.dtype == np.int8 and action_mask.shape == (obs_planes.shape[1] * obs_planes.shape[2],)
        legal = np.flatnonzero(action_mask)
        assert legal.size > 0
        # a legal cell is empty and not an obstacle
        assert not obs_planes.reshape(3, -1)[:, legal].any()
        self.checked += 1
        return int(self.rng.choice(legal))


def test_the_reference_agent_plays_whole_games_through_the_aec_env() -> None:
    from harness.envs.aec import OthelloAEC

    agents = {"black": ReferenceRandomAgent(1), "white": ReferenceRandomAgent(2)}
    env = OthelloAEC(32, budget=None)
    finished = 0
    for _ in range(5):
        env.reset()
        for name in env.agent_iter():
            obs, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                finished += name == "black"
                continue
            env.step(agents[name].act(obs["observation"], obs["action_mask"]))
    assert finished == 5 and env.games_played == 5
    assert min(agent.checked for agent in agents.values()) > 20


def test_the_reference_agent_is_a_gymnasium_opponent_unchanged() -> None:
    from harness.envs.gym_env import OthelloGym

    inner = ReferenceRandomAgent(3)
    env = OthelloGym(25, budget=None, opponent=lambda planes, mask, rng: inner.act(planes, mask))
    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert inner.checked > 5 and env.games_played == 1
