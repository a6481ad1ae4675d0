"""One game at a time on the batch kernels: what the PettingZoo and Gymnasium environments step.

:class:`SingleGame` plays placements (a player without a move is passed inside the
kernel), scores the finished game through the source's scorer (the budgeted arena or
free experimentation), and shows the position from either colour's point of view as the
reference format: float32 planes ``[3, H, W]`` (own, opponent, obstacle) and an int8
mask of length ``H * W``. It also owns the spaces and the pictures, so both environments
describe a game the same way.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from engine import batch
from engine.notation import format_move
from engine.rules import IllegalMoveError
from engine.state import BLACK, COLOUR_NAMES
from harness.envs.games import GameArrays
from harness.envs.render import board_image, board_text
from harness.envs.scoring import Source


def planes_space(rows: int, cols: int) -> spaces.Box:
    """The reference format's observation planes: own, opponent, obstacle."""
    return spaces.Box(0.0, 1.0, (3, rows, cols), dtype=np.float32)


def mask_space(cells: int) -> spaces.Box:
    return spaces.Box(0, 1, (cells,), dtype=np.int8)


class SingleGame:
    """A game on the source's rules; ``reset()`` starts one (refused once a budget is spent)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.rules = source.rules
        self._arrays = GameArrays(source.rules, 1, parallel=False, restart=False)
        self.rewards: tuple[int, int] | None = None
        self.started = False

    @property
    def over(self) -> bool:
        return self.rewards is not None

    @property
    def to_move(self) -> int:
        """The colour to move (at the end: the colour that would have moved)."""
        return int(self._arrays.colour[0])

    def reset(self) -> None:
        """A new game (raises BudgetExhausted when the budget has no game left)."""
        self.source.scorer.check_open()
        self._arrays.reset()
        self.rewards = None
        self.started = True

    def mask(self) -> np.ndarray:
        """The mover's legal placements (int8, all zeros once the game is over)."""
        if self.over:
            return np.zeros(self.rules.layout.cells, dtype=np.int8)
        return self._arrays.masks[0].copy()

    def planes(self, colour: int) -> np.ndarray:
        """The position from ``colour``'s point of view: float32 [3, H, W] (own, opponent, obstacle)."""
        view = self._arrays.planes[0]
        if colour == self.to_move:
            return view.copy()
        return view[[1, 0, 2]]

    def play(self, action: int) -> bool:
        """The mover places at ``action`` (a flat index); True when that ended the game (then scored)."""
        if self.over:
            raise IllegalMoveError("the game is over: reset() starts the next one")
        result = self._arrays.step(action)
        status = int(result.status[0])
        if status == batch.ILLEGAL:
            raise IllegalMoveError(self.illegal_reason(action))
        if status == batch.FINISHED:
            self.rewards = self.source.scorer.score(self._arrays.moves(0), int(result.black[0]), int(result.white[0]))
            return True
        return False

    def abandon(self) -> None:
        """End the game unfinished: not scored, not counted (an illegal action in the Gymnasium env)."""
        self.rewards = (0, 0)

    def is_legal(self, action: object) -> bool:
        return isinstance(action, int | np.integer) and 0 <= int(action) < self.rules.layout.cells and bool(
            self._arrays.masks[0][int(action)]) and not self.over

    def illegal_reason(self, action: object) -> str:
        layout = self.rules.layout
        legal = ", ".join(format_move(int(m), layout) for m in np.flatnonzero(self._arrays.masks[0])) or "none"
        shown = format_move(int(action), layout) if isinstance(action, int | np.integer) and 0 <= int(action) < layout.cells \
            else repr(action)
        return f"illegal action {shown} ({action!r}) for {COLOUR_NAMES[self.to_move]}: legal placements are {legal}"

    def moves(self) -> list[int]:
        """The game's moves so far (PASS = -1 for a forced pass)."""
        return self._arrays.moves(0)

    def _colour_planes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        view = self._arrays.planes[0]
        own, opp = (view[0], view[1]) if self.to_move == BLACK else (view[1], view[0])
        return own, opp, view[2]

    def ansi(self) -> str:
        black, white, obstacles = self._colour_planes()
        return board_text(black, white, obstacles, None if self.over else COLOUR_NAMES[self.to_move])

    def rgb(self) -> np.ndarray:
        return board_image(*self._colour_planes())
