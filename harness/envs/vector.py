"""The batched vector environment: N self-play games stepped in one call on the numba engine, with a Gymnasium VectorEnv face.

Each of the ``num_envs`` games is one self-play game: ``step(actions)`` plays
``actions[i]`` for whichever colour is to move in game ``i`` (a flat index; passes are
played inside the kernel), on one thread per core (:mod:`harness.envs.games`), with no
Python loop over games. Observations are the mover's reference-format planes
(float32 ``[N, 3, H, W]``), masks int8 ``[N, H*W]`` (``info["action_mask"]``,
:meth:`OthelloVector.action_masks`); ``rewards[i]`` is the terminal reward (+1/0/-1 by
the hidden rule) of the colour that just played in game ``i``, 0 before the end, and
``info["actor"]`` that colour. A finished game starts again in the same step
(auto-reset, Gymnasium's same-step mode); its final position is not kept (the returned
observation is the new game's first), its final disc counts are in
``info["final_black"]``/``info["final_white"]``. The arrays returned are the
environment's own buffers, overwritten by the next step: copy what you keep.

Budget as in :mod:`harness.envs.aec`: a budgeted vector env submits every finished game
(its move list) to the arena, which raises ``BudgetExhausted`` once the budget is spent;
``budget=None`` scores games with the condition directly, vectorised, for free
experimentation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from engine import batch
from engine.environments import Environment
from engine.protocol.arena import DEFAULT_BUDGET, AdaptationArena
from harness.envs.games import GameArrays
from harness.envs.scoring import Source, open_source
from harness.envs.single import planes_space


class OthelloVector(VectorEnv[np.ndarray, np.ndarray, np.ndarray]):
    """``num_envs`` self-play games of one environment (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        env: int | Environment | Source | None = None,
        num_envs: int = 1024,
        *,
        arena: AdaptationArena | None = None,
        budget: int | None = DEFAULT_BUDGET,
        reveal_k: bool = False,
    ) -> None:
        source = open_source(env, arena=arena, budget=budget, reveal_k=reveal_k)
        self._scorer = source.scorer
        self.budgeted = source.budgeted
        self.revealed_k = source.revealed_k
        self.layout = source.rules.layout
        self._games = GameArrays(source.rules, num_envs, parallel=True, restart=True)
        self.num_envs = num_envs
        self.single_observation_space = planes_space(self.layout.rows, self.layout.cols)
        self.single_action_space = spaces.Discrete(self.layout.cells)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._rewards = np.zeros(num_envs, dtype=np.float32)
        self._truncated = np.zeros(num_envs, dtype=bool)

    @property
    def games_played(self) -> int:
        return self._scorer.games_played

    @property
    def budget(self) -> int | None:
        return self._scorer.budget

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Every game back to the start; ``seed`` seeds :meth:`random_actions` and the action space."""
        self._scorer.check_open()
        if seed is not None:
            first = seed if isinstance(seed, int) else int(seed[0])
            self._games.seed(first)
            self.action_space.seed(first)
        self._games.reset()
        return self._games.planes, {"action_mask": self._games.masks, "to_move": self._games.colour}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One placement in every game; raises ValueError naming the first game whose action is not legal there."""
        games = self._games
        result = games.step(np.asarray(actions))
        illegal = np.flatnonzero(result.status == batch.ILLEGAL)
        if illegal.size:
            raise ValueError(
                f"game {int(illegal[0])}: action {int(np.asarray(actions)[illegal[0]])} is not a legal placement "
                f"({illegal.size} illegal actions in this step; those games did not move): use info['action_mask']"
            )
        finished = result.finished
        self._rewards[:] = 0.0
        if finished.size:
            moves = [games.moves(int(i)) for i in finished] if self.budgeted else []
            black_reward, _ = self._scorer.score_many(result.black[finished], result.white[finished], moves)
            actor_is_black = result.actor[finished] == 0
            self._rewards[finished] = np.where(actor_is_black, black_reward, -black_reward)
        terminated = result.status == batch.FINISHED
        info = {
            "action_mask": games.masks,
            "to_move": games.colour,
            "actor": result.actor,
            "final_black": result.black,
            "final_white": result.white,
        }
        return games.planes, self._rewards, terminated, self._truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal placements of the mover in every game (bool ``[N, H*W]``)."""
        return self._games.masks.astype(bool)

    def random_actions(self) -> np.ndarray:
        """A uniformly random legal placement in every game, drawn in the kernel (seeded by ``reset(seed=...)``)."""
        return self._games.random_actions()

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release."""
