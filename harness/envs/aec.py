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
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from engine.environments import Environment
from engine.protocol.arena import DEFAULT_BUDGET, AdaptationArena
from engine.state import COLOUR_NAMES
from harness.envs.scoring import Source, open_source
from harness.envs.single import SingleGame, mask_space, planes_space

AGENTS = list(COLOUR_NAMES)  # ["black", "white"]
RENDER_MODES = ("ansi", "rgb_array")
_COLOUR = {name: colour for colour, name in enumerate(AGENTS)}


class OthelloAEC(AECEnv[str, dict[str, np.ndarray], int]):
    """Expanded Othello as a PettingZoo AEC environment (see the module docstring)."""

    metadata = {"name": "expanded_othello_v0", "render_modes": list(RENDER_MODES), "is_parallelizable": False, "render_fps": 2}

    def __init__(self, env: int | Environment | Source | None = None, *, arena: AdaptationArena | None = None,
                 budget: int | None = DEFAULT_BUDGET, reveal_k: bool = False, render_mode: str | None = None) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode={render_mode!r}: choose one of {', '.join(RENDER_MODES)} or None")
        source = open_source(env, arena=arena, budget=budget, reveal_k=reveal_k)
        self._game = SingleGame(source)
        self.render_mode = render_mode
        self.budgeted = source.budgeted
        self.revealed_k = source.revealed_k
        layout = source.rules.layout
        self.layout = layout
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        space = spaces.Dict({"observation": planes_space(layout.rows, layout.cols), "action_mask": mask_space(layout.cells)})
        self.observation_spaces = {agent: space for agent in AGENTS}
        self.action_spaces = {agent: spaces.Discrete(layout.cells) for agent in AGENTS}
        self._clear()

    @property
    def games_played(self) -> int:
        """Finished games scored by this environment's scorer (for a budgeted one: the arena's ledger count)."""
        return self._game.source.scorer.games_played

    @property
    def budget(self) -> int | None:
        """The game budget, or None for free experimentation."""
        return self._game.source.scorer.budget

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def _clear(self) -> None:
        self.rewards = {agent: 0.0 for agent in AGENTS}
        self._cumulative_rewards = {agent: 0.0 for agent in AGENTS}
        self.terminations = {agent: False for agent in AGENTS}
        self.truncations = {agent: False for agent in AGENTS}
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in AGENTS}
        self.agent_selection = AGENTS[0]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game from the initial position (the game is deterministic; ``seed`` seeds the action spaces)."""
        if seed is not None:
            for index, agent in enumerate(AGENTS):
                self.action_spaces[agent].seed(seed + index)
        self._game.reset()
        self.agents = list(AGENTS)
        self._clear()
        self.agent_selection = AGENTS[self._game.to_move]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        colour = _COLOUR[agent]
        acting = colour == self._game.to_move and not self._game.over
        mask = self._game.mask() if acting else np.zeros(self.layout.cells, dtype=np.int8)
        return {"observation": self._game.planes(colour), "action_mask": mask}

    def step(self, action: int | None) -> None:
        """The selected agent places at ``action`` (an illegal one raises, naming the legal placements)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None or not self._game.is_legal(action):
            raise ValueError(self._game.illegal_reason(action))
        self._cumulative_rewards[agent] = 0.0
        finished = self._game.play(int(action))
        if finished:  # rewards are 0 until the last move (reset() set them so)
            rewards = self._game.rewards or (0, 0)
            for index, name in enumerate(AGENTS):
                self.rewards[name] = float(rewards[index])
                self.terminations[name] = True
        self.agent_selection = AGENTS[self._game.to_move]
        self._accumulate_rewards()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            return None
        if not self._game.started:
            return None
        return self._game.ansi() if self.render_mode == "ansi" else self._game.rgb()

    def close(self) -> None:
        """Nothing to release."""

    def __repr__(self) -> str:
        kind = f"budget {self.budget}" if self.budgeted else "free experimentation"
        return f"OthelloAEC(layout={self.layout.name!r}, {kind}, games_played={self.games_played})"
