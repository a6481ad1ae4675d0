"""The PettingZoo parallel environment: the AEC environment's game, with both agents answering every step.

Othello is turn-based, so in each ``step(actions)`` only the agent to move places: its
action is taken from ``actions`` (missing or illegal: a ``ValueError`` naming the legal
placements) and the other agent's action, if given, is ignored. Its observation's
``action_mask`` is all zeros, which tells it so (PettingZoo's ``parallel_api_test``
samples a masked action for it, and any action is accepted). A player without a legal move is
passed by the environment. Observations, rewards (0 until the last move, then the hidden
rule's +1/0/-1), budget, reveal flag and render modes as in :mod:`harness.envs.aec`;
after the last move both agents are terminated and ``agents`` is empty until ``reset``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import ParallelEnv

from engine.environments import Environment
from harness.envs.scoring import Source
from harness.envs.single import AGENTS, RENDER_MODES, TwoAgentFace

Observations = dict[str, dict[str, np.ndarray]]


class OthelloParallel(TwoAgentFace, ParallelEnv[str, dict[str, np.ndarray], int]):
    """Expanded Othello as a PettingZoo parallel environment (see the module docstring)."""

    metadata = {"name": "expanded_othello_parallel_v0", "render_modes": list(RENDER_MODES), "render_fps": 2}

    @property
    def to_move(self) -> str | None:
        """The agent whose action the next step takes (None once the game is over)."""
        return None if not self.agents else AGENTS[self._game.to_move]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observations, dict[str, Any]]:
        """A new game from the initial position (``seed`` seeds the action spaces)."""
        self._seed_spaces(seed)
        self._game.reset()
        self.agents = list(AGENTS)
        return self._observations(), {agent: {} for agent in AGENTS}

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[Observations, dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]]:
        """The agent to move places ``actions[agent]``; the other agent's action is ignored."""
        if not self.agents:
            raise RuntimeError("the game is over: call reset()")
        game = self._game
        mover = AGENTS[game.to_move]
        action = actions.get(mover)
        if action is None or not game.is_legal(action):
            raise ValueError(f"{mover} is to move: {game.illegal_reason(action)}")
        finished = game.play(int(action))
        rewards = game.rewards if finished and game.rewards is not None else (0, 0)
        observations = self._observations()
        self.agents = [] if finished else self.agents
        return (
            observations,
            {agent: float(rewards[i]) for i, agent in enumerate(AGENTS)},
            {agent: finished for agent in AGENTS},
            {agent: False for agent in AGENTS},
            {agent: {} for agent in AGENTS},
        )

    def _observations(self) -> Observations:
        return {agent: self._observation(colour) for colour, agent in enumerate(AGENTS)}

    def close(self) -> None:
        """Nothing to release."""

    def __repr__(self) -> str:
        kind = f"budget {self.budget}" if self.budgeted else "free experimentation"
        return f"OthelloParallel(layout={self.layout.name!r}, {kind}, games_played={self.games_played})"


def parallel_env(env: int | Environment | Source | None = None, **kwargs: Any) -> OthelloParallel:
    """PettingZoo's conventional constructor name: :class:`OthelloParallel` (same arguments)."""
    return OthelloParallel(env, **kwargs)
