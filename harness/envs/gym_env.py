"""The Gymnasium single-agent environment: a learner against a fixed opponent policy or a snapshot of itself.

The learner's colour alternates by episode (black first; ``reset(seed=...)`` starts the
alternation again, so a seeded reset is reproducible). Observations are the reference
format's float32 planes ``[3, H, W]`` (own, opponent, obstacle, from the learner's side),
a Box, so MaskablePPO's default ``MlpPolicy`` takes them; :meth:`OthelloGym.action_masks`
gives the legal placements (bool, length ``H * W``) and ``info["action_mask"]`` the same.
A step is one learner placement followed by the opponent's moves (passes are played by
the environment) up to the learner's next decision or the end; the reward is the
learner's terminal reward from the hidden rule (+1/0/-1), 0 before.

An action that is not a legal placement ends the episode with reward -1 and
``info["illegal_action"]``: the game is abandoned, not scored and not counted against the
budget (as the arena does not count a game aborted by an illegal proposal), which tells
the learner nothing about K. Budget, reveal flag and render modes as in
:mod:`harness.envs.aec`.

The opponent is any ``opponent(planes, mask, rng) -> flat index`` in the reference format
(planes from the opponent's side); the default plays uniformly random legal placements
from the environment's seeded generator. :meth:`OthelloGym.set_opponent` swaps it (a
newer snapshot during self-play).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from engine.environments import Environment
from engine.protocol.arena import DEFAULT_BUDGET, AdaptationArena
from engine.state import BLACK, COLOUR_NAMES
from harness.envs.scoring import Source
from harness.envs.single import RENDER_MODES, GameFace, planes_space

ENV_ID = "ExpandedOthello-v0"  # gymnasium.make(ENV_ID, env=..., ...) builds an OthelloGym
Opponent = Callable[[np.ndarray, np.ndarray, np.random.Generator], int]


def random_opponent(planes: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random legal placement."""
    legal = np.flatnonzero(mask)
    return int(legal[int(rng.integers(len(legal)))])


class OthelloGym(GameFace, gym.Env[np.ndarray, np.int64]):
    """Expanded Othello for one learner (see the module docstring)."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 2}

    def __init__(
        self,
        env: int | Environment | Source | None = None,
        *,
        opponent: Opponent | None = None,
        arena: AdaptationArena | None = None,
        budget: int | None = DEFAULT_BUDGET,
        reveal_k: bool = False,
        render_mode: str | None = None,
    ) -> None:
        self._open(env, arena, budget, reveal_k, render_mode)
        self.observation_space = planes_space(self.layout.rows, self.layout.cols)
        self.action_space = spaces.Discrete(self.layout.cells)
        self._opponent: Opponent = opponent or random_opponent
        self._episodes = 0
        self.learner = BLACK

    def set_opponent(self, opponent: Opponent) -> None:
        """Play the next moves against ``opponent`` (e.g. a newer snapshot of the learner)."""
        self._opponent = opponent

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._episodes = 0
            self.action_space.seed(seed)
        self.learner = BLACK if self._episodes % 2 == 0 else 1 - BLACK
        self._episodes += 1
        self._game.reset()
        self._opponent_moves()
        return self._game.planes(self.learner), self._info()

    def step(self, action: np.int64 | int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        game = self._game
        if game.over:
            raise RuntimeError("the episode is over: call reset()")
        if not game.is_legal(action):
            info = {**self._info(), "illegal_action": game.illegal_reason(action)}
            game.abandon()
            return game.planes(self.learner), -1.0, True, False, info
        game.play(int(action))
        self._opponent_moves()
        reward = float(game.rewards[self.learner]) if game.rewards is not None else 0.0
        return game.planes(self.learner), reward, game.over, False, self._info()

    def _opponent_moves(self) -> None:
        game = self._game
        while not game.over and game.to_move != self.learner:
            colour = game.to_move
            move = self._opponent(game.planes(colour), game.mask(), self.np_random)
            if not game.is_legal(move):
                raise ValueError(f"the opponent policy proposed {game.illegal_reason(move)}")
            game.play(int(move))

    def action_masks(self) -> np.ndarray:
        """The learner's legal placements (bool; all False only once the episode is over)."""
        return self._game.mask().astype(bool)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._game.mask(), "learner": COLOUR_NAMES[self.learner]}


if ENV_ID not in gym.registry:
    gym.register(ENV_ID, entry_point="harness.envs.gym_env:OthelloGym", disable_env_checker=True)
