"""Games held in arrays and stepped by :mod:`engine.batch`: one game for the AEC and Gymnasium envs, N for the vector env.

:class:`GameArrays` owns the arrays of ``n`` games on one set of rules and calls the
kernels: ``reset()``, ``step(actions)`` (one placement per game; passes and the end of
a game are handled inside, finished games restart), and the views of the player to
move in each game (``planes``: float32 ``[n, 3, H, W]``, own/opponent/obstacle;
``masks``: int8 ``[n, H*W]``). It knows no K: finished games come back as final disc
counts and move lists, which a :class:`harness.envs.scoring.Scorer` scores.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine import batch
from engine.rules import Rules

_GOLDEN = 0x9E3779B97F4A7C15
MIN_GAMES_PER_THREAD = 256  # below this a thread costs more than the games it steps
_POOL: list[ThreadPoolExecutor] = []


def worker_threads() -> int:
    """Threads a parallel batch uses: the cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _pool() -> ThreadPoolExecutor:
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(max_workers=worker_threads(), thread_name_prefix="othello-batch"))
    return _POOL[0]


@dataclass(frozen=True)
class StepResult:
    """What one step did in each game: status (RUNNING/FINISHED/ILLEGAL), who played, final counts of finished games."""

    status: np.ndarray
    actor: np.ndarray
    black: np.ndarray
    white: np.ndarray

    @property
    def finished(self) -> np.ndarray:
        """Indices of the games that ended with this step (already restarted)."""
        return np.flatnonzero(self.status == batch.FINISHED)


class GameArrays:
    """``n`` games on ``rules``, stepped together (``parallel``: ranges of games on one thread per core; else one call).

    ``restart``: a finished game starts again at once (the vector env); else it keeps its
    final position until :meth:`reset` (one game at a time).
    """

    def __init__(self, rules: Rules, n: int, *, parallel: bool, restart: bool = True) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"number of games {n!r}: give a positive whole number")
        self.rules = rules
        layout = rules.layout
        geometry = rules.geometry
        self.n = n
        self._restart = restart
        self._geo = geometry.kernel_args
        self._limit = rules.limit_args
        start = rules.initial_state()
        self._black0 = geometry.words(start.black)
        self._white0 = geometry.words(start.white)
        self._obstacles = geometry.words(layout.mask(layout.obstacles))
        words = geometry.n_words
        self.own = np.zeros((n, words), dtype=np.uint64)
        self.opp = np.zeros((n, words), dtype=np.uint64)
        self.colour = np.zeros(n, dtype=np.int8)
        self.placed = np.zeros((n, 2), dtype=np.int32)
        self.plies = np.zeros(n, dtype=np.int32)
        self.legal = np.zeros((n, words), dtype=np.uint64)
        self.planes = np.zeros((n, 3, layout.rows, layout.cols), dtype=np.float32)
        self.masks = np.zeros((n, layout.cells), dtype=np.int8)
        self.history = np.zeros((n, 2 * layout.cells + 2), dtype=np.int16)
        self.status = np.zeros(n, dtype=np.int8)
        self.actor = np.zeros(n, dtype=np.int8)
        self.black_out = np.zeros(n, dtype=np.int32)
        self.white_out = np.zeros(n, dtype=np.int32)
        self._seeds = np.zeros(n, dtype=np.uint64)
        self._actions = np.zeros(n, dtype=np.int64)
        chunks = max(1, min(worker_threads(), n // MIN_GAMES_PER_THREAD)) if parallel else 1
        edges = np.linspace(0, n, chunks + 1).astype(int)
        self._ranges = [(int(lo), int(hi)) for lo, hi in zip(edges[:-1], edges[1:])]
        # The kernels' arguments, built once: the arrays are changed in place, never replaced.
        position = (self.own, self.opp, self.colour, self.placed, self.plies, self.legal, self.planes.reshape(n, 3, -1), self.masks)
        self._reset_args = (*position, self._black0, self._white0, self._obstacles, *self._limit, self._geo)
        self._step_args = (
            *position,
            self.history,
            self._actions,
            self.status,
            self.actor,
            self.black_out,
            self.white_out,
            self._black0,
            self._white0,
            self._obstacles,
            self._restart,
            *self._limit,
            self._geo,
        )
        self._result = StepResult(self.status, self.actor, self.black_out, self.white_out)
        self.reset()

    def _run(self, kernel: Callable[..., Any], *args: Any) -> None:
        """``kernel(lo, hi, *args)`` over the games, one range per thread (the kernels release the GIL)."""
        if len(self._ranges) == 1:
            kernel(0, self.n, *args)
            return
        for future in [_pool().submit(kernel, lo, hi, *args) for lo, hi in self._ranges]:
            future.result()

    def reset(self) -> None:
        """Every game to the initial position, black to move."""
        self.status[:] = batch.RUNNING
        self._run(batch.reset_games, *self._reset_args)

    def step(self, actions: np.ndarray | int) -> StepResult:
        """One placement per game (flat indices); an illegal one changes nothing and is reported as ILLEGAL.

        The result's arrays are this object's own, overwritten by the next step.
        """
        self._actions[:] = actions
        if len(self._ranges) == 1:
            batch.step_games(0, self.n, *self._step_args)
        else:
            self._run(batch.step_games, *self._step_args)
        return self._result

    def step_one(self, action: int) -> int:
        """One placement in a single-game batch (the AEC and Gymnasium envs' hot path): the game's status."""
        self._actions[0] = action
        batch.step_games(0, 1, *self._step_args)
        return int(self.status[0])

    def moves(self, game: int) -> list[int]:
        """Game ``game``'s moves so far (after a step that finished it: the finished game's), PASS = -1."""
        return [int(move) for move in self.history[game, : self.plies[game]]]

    def seed(self, seed: int) -> None:
        """Seed the generators of :meth:`random_actions` (one xorshift stream per game)."""
        mixer = np.random.default_rng(seed)
        self._seeds[:] = mixer.integers(1, 2**63, size=self.n, dtype=np.uint64) | np.uint64(1)

    def random_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal placement in every game (from the seeded per-game generators)."""
        if not self._seeds.any():
            self.seed(_GOLDEN & 0xFFFFFFFF)
        actions = np.empty(self.n, dtype=np.int64) if out is None else out
        self._run(batch.random_actions, self.legal, self._seeds, actions, self._geo[0])
        return actions
