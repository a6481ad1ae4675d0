"""The PettingZoo AEC environment: two agents, ``black`` and ``white``, on any of the 56 environments or a custom layout.

Observations are dicts in the paper's public reference format: ``observation``, float32
planes ``[3, H, W]`` (own, opponent, obstacle, from the observing agent's side) and
``action_mask``, int8 of length ``H * W`` (the acting agent's legal placements; zeros for
the agent not to move). A player without a legal move is passed by the environment, so
the acting agent never sees an all-zero mask. Terminal rewards come from the hidden rule
(+1/0/-1); ``render_mode`` ``"ansi"`` gives the board as text, ``"rgb_array"`` an image.

Built from an id (budgeted by default: an in-process arena of 2,000 games, whose
``BudgetExhausted`` ``reset()`` raises after the last game), from an adaptation arena
(``arena=``), or for free experimentation (``budget=None``: ``budgeted`` is False). K is
held only by the scorer's private parts; ``revealed_k`` is None unless ``reveal_k=True``.
:mod:`harness.envs.parallel` is the same game as a PettingZoo parallel environment.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv

from harness.envs.single import AGENTS, RENDER_MODES, TwoAgentFace

COLOUR = {name: colour for colour, name in enumerate(AGENTS)}


class OthelloAEC(TwoAgentFace, AECEnv[str, dict[str, np.ndarray], int]):
    """Expanded Othello as a PettingZoo AEC environment (see the module docstring)."""

    metadata = {"name": "expanded_othello_v0", "render_modes": list(RENDER_MODES), "is_parallelizable": False, "render_fps": 2}

    def _ready(self) -> None:
        self.agents = list(AGENTS)
        self._clear()

    def _clear(self) -> None:
        self.rewards = {agent: 0.0 for agent in AGENTS}
        self._cumulative_rewards = {agent: 0.0 for agent in AGENTS}
        self.terminations = {agent: False for agent in AGENTS}
        self.truncations = {agent: False for agent in AGENTS}
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in AGENTS}
        self.agent_selection = AGENTS[0]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game from the initial position (the game is deterministic; ``seed`` seeds the action spaces)."""
        self._seed_spaces(seed)
        self._game.reset()
        self.agents = list(AGENTS)
        self._clear()
        self.agent_selection = AGENTS[self._game.to_move]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self._observation(COLOUR[agent])

    def step(self, action: int | None) -> None:
        """The selected agent places at ``action`` (an illegal one raises, naming the legal placements)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self._game
        if action is None or not game.is_legal(action):
            raise ValueError(game.illegal_reason(action))
        self._cumulative_rewards[agent] = 0.0
        if game.play(int(action)):  # rewards are 0 until the last move (reset() set them so): only then accumulated
            rewards = game.rewards or (0, 0)
            for index, name in enumerate(AGENTS):
                self.rewards[name] = float(rewards[index])
                self.terminations[name] = True
            self._accumulate_rewards()
        self.agent_selection = AGENTS[game.to_move]

    def close(self) -> None:
        """Nothing to release."""

    def __repr__(self) -> str:
        kind = f"budget {self.budget}" if self.budgeted else "free experimentation"
        return f"OthelloAEC(layout={self.layout.name!r}, {kind}, games_played={self.games_played})"
