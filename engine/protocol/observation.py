"""What a policy sees when asked for a move: the public part of the game, never the condition.

An :class:`Observation` holds the board from the mover's point of view (own 1,
opponent -1, empty 0, obstacle 2; paper section 2.3.1), the legal moves, the
mover's colour, how many discs have been placed, the state itself and the
transition :class:`~engine.rules.Rules` (legal moves and flips are public).
The hidden threshold K lives in :class:`~engine.condition.Condition`, which is
never part of an observation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.rules import Rules
from engine.state import PASS, State

OWN, OPPONENT, EMPTY, OBSTACLE = 1, -1, 0, 2


@dataclass(frozen=True, eq=False)
class Observation:
    """The mover's view of one position.

    ``grid`` is a read-only int8 H x W array; ``legal_moves`` are flat indices
    ``row * cols + col`` in ascending order, ``(PASS,)`` when the mover must pass
    and ``()`` once the game is over. ``move_number`` counts the discs placed so
    far by both colours (0 before the first move; passes are not counted).
    ``state`` is the public game state (discs, mover, placements), so that
    agents can look ahead with ``rules.play``. Observations compare by identity
    (they hold an array).
    """

    grid: np.ndarray
    legal_moves: tuple[int, ...]
    colour: int
    move_number: int
    state: State
    rules: Rules

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, cols) of the board."""
        return self.rules.layout.shape

    @property
    def must_pass(self) -> bool:
        """True when the only legal move is PASS."""
        return self.legal_moves == (PASS,)


def observe(rules: Rules, state: State, legal: Sequence[int] | None = None) -> Observation:
    """The observation of ``state`` for the colour to move (``legal``: its legal moves, when already computed)."""
    grid = rules.grid(state, state.to_move)
    grid.flags.writeable = False
    return Observation(
        grid=grid,
        legal_moves=tuple(rules.legal_moves(state) if legal is None else legal),
        colour=state.to_move,
        move_number=state.placed_black + state.placed_white,
        state=state,
        rules=rules,
    )


def to_planes(obs: Observation) -> tuple[np.ndarray, np.ndarray]:
    """Float32 planes ``[3, H, W]`` (own, opponent, obstacle) and an int8 action mask of length H*W.

    The layout of the paper's public reference environment. The mask has a 1 at
    each legal placement; it is all zeros when the mover must pass or the game
    is over (a pass is played by the harness, never chosen).
    """
    planes = np.stack([obs.grid == OWN, obs.grid == OPPONENT, obs.grid == OBSTACLE]).astype(np.float32)
    mask = np.zeros(obs.grid.size, dtype=np.int8)
    placements = [move for move in obs.legal_moves if move != PASS]
    mask[placements] = 1
    return planes, mask
